#include "operators/decoders/ahead_path.h"

#include <algorithm>
#include <cstring>

#include "core/cuda/check.h"
#include "core/tensor/copy.h"
#include "operators/decoders/decode_path_common.h"

namespace conveyor::ops {

struct AheadPath::Lane {
  struct Buffer {
    conveyor::Buffer memory;  // device, on the lane's stream
    cuda::Event last_use = cuda::Event::Create();  // the decode into it, then the copy out of it
    bool busy = false;
  };
  CudaPath::Worker* worker = nullptr;
  std::vector<std::unique_ptr<Buffer>> buffers;
};

struct AheadPath::Job {
  enum class State { kQueued, kRunning, kDone, kSkipped };
  int64_t key = 0;
  int index = 0;
  std::vector<uint8_t> bytes;  // a copy of the encoded file
  const uint8_t* source = nullptr;  // the caller's bytes at Submit
  GpuDecodeSample sample;      // data and out set when it runs
  std::string where;
  State state = State::kQueued;
  bool claimed = false;  // a Decode will Deliver it
  bool dropped = false;  // running when dropped: forgotten once done
  bool ok = false;
  Lane::Buffer* buffer = nullptr;
};

namespace {

using Job = AheadPath::Job;

// The same file: the bytes at the ends and at 64 places between (a full compare of a 3 MB photo
// would cost its call ~0.3 ms; with the source pointer, size and window this tells a different file).
bool SameBytes(const std::vector<uint8_t>& copy, const uint8_t* data, size_t size) {
  if (copy.size() != size) return false;
  if (size <= 16384) return std::memcmp(copy.data(), data, size) == 0;
  constexpr size_t kSpan = 64, kPlaces = 64;
  if (std::memcmp(copy.data(), data, 256) != 0 || std::memcmp(copy.data() + size - 256, data + size - 256, 256) != 0) {
    return false;
  }
  for (size_t p = 1; p < kPlaces; ++p) {
    const size_t at = (size - kSpan) / kPlaces * p;
    if (std::memcmp(copy.data() + at, data + at, kSpan) != 0) return false;
  }
  return true;
}

bool Matches(const Job& job, const GpuDecodeSample& s) {
  const GpuDecodeSample& j = job.sample;
  return job.source == s.data && j.height == s.height && j.width == s.width && j.roi == s.roi &&
         j.is_jpeg == s.is_jpeg && j.is_jpeg2000 == s.is_jpeg2000 && j.progressive == s.progressive &&
         j.subsampling == s.subsampling && SameBytes(job.bytes, s.data, s.size);
}


constexpr size_t kMaxJobs = 64;  // queued beyond this (nothing claims them): the oldest dropped

}  // namespace

AheadPath::AheadPath() = default;
AheadPath::~AheadPath() { Stop(); }

void AheadPath::Init(CudaPath& cuda, const DecodeRouter& router, const GpuDecoderOptions& options) {
  if (options.ahead_cost <= 0 || !cuda.ready()) return;
  cuda_ = &cuda;
  router_ = router;
  options_ = options;
  options_.ahead_images = std::clamp(options.ahead_images, 1, 64);
  options_.ahead_threads = std::clamp(options.ahead_threads, 1, 16);
  options_.ahead_buffers = std::clamp(options.ahead_buffers, 1, 64);
}

void AheadPath::Stop() noexcept {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  for (auto& lane : lanes_) {
    if (lane->worker != nullptr) {
      CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(CudaPath::StreamOf(lane->worker).get()));
    }
    for (auto& b : lane->buffers) CONVEYOR_CUDA_CHECK_NOTHROW(cudaEventSynchronize(b->last_use.get()));
  }
  jobs_.clear();
  lanes_.clear();
}

void AheadPath::Submit(int64_t key, const std::vector<GpuDecodeSample>& samples,
                       const std::function<bool(int)>& accept, const std::string& where) {
  if (!enabled()) return;
  std::vector<RouteFacts> facts;
  facts.reserve(samples.size());
  for (const GpuDecodeSample& s : samples) facts.push_back(FactsOf(s));
  std::vector<std::unique_ptr<Job>> made;
  for (int i : PickAhead(router_, facts, options_.ahead_cost, options_.ahead_images, options_.ahead_balanced_pixels)) {
    const GpuDecodeSample& s = samples[static_cast<size_t>(i)];
    if (accept && !accept(i)) continue;
    auto job = std::make_unique<Job>();
    job->key = key;
    job->index = i;
    job->bytes.assign(s.data, s.data + s.size);
    job->source = s.data;
    job->sample = s;
    job->sample.data = nullptr;
    job->sample.out = nullptr;
    job->where = where + ": sample " + std::to_string(i) + " (look-ahead)";
    made.push_back(std::move(job));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    // What an earlier Submit of this key started is replaced (a rewind redid the iteration).
    for (size_t j = jobs_.size(); j-- > 0;) {
      Job* job = jobs_[j].get();
      if (job->key == key && !job->claimed) Forget(job);
    }
    for (auto& job : made) jobs_.push_back(std::move(job));
    for (size_t j = 0; jobs_.size() > kMaxJobs && j < jobs_.size();) {
      Job* job = jobs_[j].get();
      if (job->state == Job::State::kQueued && !job->claimed) {
        Forget(job);
      } else {
        ++j;
      }
    }
    if (threads_.empty() && !made.empty()) {
      for (int t = 0; t < options_.ahead_threads; ++t) {
        lanes_.push_back(std::make_unique<Lane>());
        Lane* lane = lanes_.back().get();
        threads_.emplace_back([this, lane] { Run(*lane); });
      }
    }
  }
  cv_.notify_all();
}

void AheadPath::Forget(Job* job) {
  if (job->state == Job::State::kRunning) {
    job->dropped = true;
    return;
  }
  if (job->buffer != nullptr) job->buffer->busy = false;
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if (it->get() == job) {
      jobs_.erase(it);
      return;
    }
  }
}

void AheadPath::Run(Lane& lane) {
  try {
    CONVEYOR_CUDA_CHECK(cudaSetDevice(options_.device));
    lane.worker = cuda_->TakeOwn();
    for (int b = 0; b < options_.ahead_buffers; ++b) lane.buffers.push_back(std::make_unique<Lane::Buffer>());
  } catch (const std::exception&) {
    return;  // queued jobs stay queued: their calls take them back
  }
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Job* job = nullptr;
    cv_.wait(lock, [&] {
      if (stop_) return true;
      for (auto& j : jobs_) {
        if (j->state == Job::State::kQueued) {
          job = j.get();
          return true;
        }
      }
      return false;
    });
    if (stop_) return;
    for (auto& b : lane.buffers) {
      if (!b->busy) {
        job->buffer = b.get();
        break;
      }
    }
    if (job->buffer == nullptr) {  // every buffer of this lane waits for its call: its call decodes it
      job->state = Job::State::kSkipped;
      continue;
    }
    job->buffer->busy = true;
    job->state = Job::State::kRunning;
    lock.unlock();
    DecodeJob(lane, *job);
    lock.lock();
    job->state = Job::State::kDone;
    if (job->dropped) Forget(job);
    cv_.notify_all();
  }
}

void AheadPath::DecodeJob(Lane& lane, Job& job) {
  job.ok = false;
  Lane::Buffer& b = *job.buffer;
  try {
    const cuda::StreamView stream = CudaPath::StreamOf(lane.worker);
    b.last_use.Wait(stream);  // the copy out of its last job
    const size_t bytes = static_cast<size_t>(job.sample.roi.h * job.sample.roi.w) * DecodeChannels(options_.color);
    if (b.memory.size() < bytes) b.memory = conveyor::Buffer::Allocate(MemoryKind::kDevice, bytes, stream);
    GpuDecodeSample s = job.sample;
    s.data = job.bytes.data();
    s.out = static_cast<uint8_t*>(b.memory.device_ptr());
    CudaTimes times;
    cuda_->Decode(*lane.worker, s, job.where, times, nullptr);
    b.last_use.Record(stream);
    job.ok = true;
  } catch (const std::exception&) {
    // Refused, damaged, or a CUDA error: the call decodes the image on its CPU path, which names
    // any damage. Whatever was queued is ordered before the buffer's next use.
    try {
      b.last_use.Record(CudaPath::StreamOf(lane.worker));
    } catch (const std::exception&) {
    }
  }
}

void AheadPath::Claim(int64_t key, const std::vector<GpuDecodeSample>& samples, std::vector<Job*>& claimed,
                      int64_t* taken_back) {
  claimed.assign(samples.size(), nullptr);
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t j = jobs_.size(); j-- > 0;) {
    Job* job = jobs_[j].get();
    if (job->key > key || job->claimed) continue;
    const bool usable = job->key == key && job->index < static_cast<int>(samples.size()) &&
                        claimed[static_cast<size_t>(job->index)] == nullptr &&
                        Matches(*job, samples[static_cast<size_t>(job->index)]);
    if (usable && (job->state == Job::State::kRunning || job->state == Job::State::kDone)) {
      job->claimed = true;
      claimed[static_cast<size_t>(job->index)] = job;
      continue;
    }
    if (usable) ++*taken_back;  // not started: decoded by the call
    Forget(job);
  }
}

void AheadPath::Deliver(std::vector<Job*>& claimed, const std::vector<GpuDecodeSample>& samples, int channels,
                        cuda::StreamView stream, std::vector<int>* failed, int64_t* delivered, int64_t* wait_ns) {
  try {
    for (size_t i = 0; i < claimed.size(); ++i) {
      Job* job = claimed[i];
      if (job == nullptr) continue;
      std::unique_lock<std::mutex> lock(mu_);
      const auto t0 = Clock::now();
      cv_.wait(lock, [&] { return job->state == Job::State::kDone; });
      *wait_ns += NsSince(t0);
      if (job->ok) {
        const GpuDecodeSample& s = samples[i];
        Lane::Buffer& b = *job->buffer;
        b.last_use.Wait(stream);
        CopyBytesAsync(s.out, b.memory.device_ptr(), static_cast<size_t>(s.roi.h * s.roi.w) * channels, stream);
        b.last_use.Record(stream);
        ++*delivered;
      } else {
        failed->push_back(static_cast<int>(i));
      }
      claimed[i] = nullptr;
      Forget(job);
    }
  } catch (...) {
    Release(claimed);
    throw;
  }
}

void AheadPath::Release(std::vector<Job*>& claimed) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  for (Job*& job : claimed) {
    if (job == nullptr) continue;
    job->claimed = false;
    Forget(job);
    job = nullptr;
  }
}

}  // namespace conveyor::ops
