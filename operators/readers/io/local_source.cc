#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/io/local_source.h"

namespace conveyor::ops {
namespace {

class LocalSource final : public ByteSource {
 public:
  LocalSource(std::string path, int fd, int64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  ~LocalSource() override { ::close(fd_); }
  LocalSource(const LocalSource&) = delete;  // one descriptor, one owner
  LocalSource& operator=(const LocalSource&) = delete;

  const std::string& name() const override { return path_; }
  int64_t Size() const override { return size_; }

  void ReadAt(int64_t offset, void* dst, int64_t bytes) const override {
    if (offset < 0 || bytes < 0 || offset > size_ || bytes > size_ - offset) {
      throw InvalidArgument("\"" + path_ + "\": expected " + std::to_string(bytes) + " bytes at offset " +
                            std::to_string(offset) + ", the file holds " + std::to_string(size_));
    }
    auto* out = static_cast<uint8_t*>(dst);
    int64_t done = 0;
    while (done < bytes) {
      const ssize_t n = ::pread(fd_, out + done, static_cast<size_t>(bytes - done), offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        throw InvalidArgument("\"" + path_ + "\": expected " + std::to_string(bytes) + " bytes at offset " +
                              std::to_string(offset) + ", " +
                              (n < 0 ? std::string("read failed: ") + std::strerror(errno)
                                     : "the file ends after " + std::to_string(offset + done) +
                                           " (changed or truncated since it was opened)"));
      }
      done += n;
    }
  }

 private:
  std::string path_;
  int fd_;
  int64_t size_;
};

}  // namespace

std::unique_ptr<ByteSource> OpenLocalSource(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InvalidArgument("\"" + path + "\": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw InvalidArgument("\"" + path + "\": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InvalidArgument("\"" + path + "\": not a regular file");
  }
  return std::make_unique<LocalSource>(path, fd, static_cast<int64_t>(st.st_size));
}

}  // namespace conveyor::ops
