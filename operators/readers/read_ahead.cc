#include "operators/readers/read_ahead.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/op/thread_affinity.h"

namespace conveyor::ops {

std::string ReadWholeFile(const std::string& path, std::vector<uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st {};
  std::string reason;
  if (::fstat(fd, &st) != 0) {
    reason = std::string("cannot stat: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    reason = "not a regular file";
  } else {
    const int64_t size = static_cast<int64_t>(st.st_size);
    bytes.resize(static_cast<size_t>(size));
    int64_t done = 0;
    while (done < size) {
      const ssize_t n = ::pread(fd, bytes.data() + done, static_cast<size_t>(size - done), done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        reason = n < 0 ? std::string("read failed: ") + std::strerror(errno)
                       : "expected " + std::to_string(size) + " bytes, the file ends after " + std::to_string(done);
        break;
      }
      done += n;
    }
  }
  ::close(fd);
  return reason;
}

ReadAhead::ReadAhead(const std::vector<std::string>& paths, int threads)
    : paths_(paths), threads_(threads < 1 ? 1 : threads) {
  workers_.reserve(static_cast<size_t>(threads_));
  const ThreadCpus cpus = ProcessThreadCpus();  // throws for a bad CONVEYOR_THREAD_AFFINITY
  for (int t = 0; t < threads_; ++t) {
    workers_.emplace_back([this, t, cpus] {
      ApplyThreadCpus(cpus);
      Worker(t);
    });
  }
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& w : workers_) w.join();
}

void ReadAhead::Start(std::vector<int64_t> batch) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return busy_ == 0; });
  batch_ = std::move(batch);
  contents_.resize(batch_.size());
  ok_.assign(batch_.size(), 0);
  started_ = true;
  ++job_;
  busy_ = threads_;
  lock.unlock();
  cv_.notify_all();
}

bool ReadAhead::Take(const std::vector<int64_t>& batch, std::vector<std::vector<uint8_t>>& contents) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return busy_ == 0; });
  if (!started_ || batch_ != batch) return false;
  for (char ok : ok_) {
    if (!ok) return false;
  }
  contents.swap(contents_);
  started_ = false;  // taken: the buffers now belong to the caller until the next Start
  return true;
}

void ReadAhead::Worker(int t) {
  int64_t done = 0;
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stop_ || job_ > done; });
    if (stop_) return;
    done = job_;
    const size_t n = batch_.size();
    lock.unlock();
    // Samples t, t + threads, ...: each worker its own, so no lock while reading.
    for (size_t i = static_cast<size_t>(t); i < n; i += static_cast<size_t>(threads_)) {
      // Empty files are left to the caller too (its reads of an empty file have no buffer).
      std::vector<uint8_t>& bytes = contents_[i];
      ok_[i] = ReadWholeFile(paths_[static_cast<size_t>(batch_[i])], bytes).empty() && !bytes.empty() ? 1 : 0;
    }
    lock.lock();
    if (--busy_ == 0) cv_.notify_all();
  }
}

}  // namespace conveyor::ops
