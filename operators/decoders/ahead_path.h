// GpuDecoder's look-ahead: the costliest CUDA-backend images of a later call (PickAhead), decoded
// before that call on threads of their own into buffers of their own; the call copies them into its
// outputs. Private to gpu_decoder.
//
//   caller's thread   Submit(key, samples)   picks, copies each picked image's bytes, queues it
//   ahead threads     each job, oldest first: a free buffer of the thread's (grown to the window),
//                     the CUDA backend on the thread's own worker and stream (CudaPath::TakeOwn)
//   Decode(key)       Claim    the jobs of `key` that match their sample (source pointer, size,
//                              bytes sampled, window, size): queued ones are taken back (the call
//                              decodes them as usual), the others it will copy; every other job
//                              of `key` or older is dropped
//                     Deliver  waits for each claimed job's host phase, then on the call's stream:
//                              wait for the job's device work, copy the window in, mark the buffer
//                              free after the copy; a job that failed: its image to `failed`
//
// A buffer's event marks its last use (the decode into it on the thread's stream, then the copy out
// on the call's stream): the thread's stream waits for it before the buffer is written or grown, so
// no host wait orders the device work. Memory: at most threads x buffers device buffers; a job
// that finds none of its thread's free is skipped (its call decodes the image).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda/event.h"
#include "core/memory/buffer.h"
#include "operators/decoders/cuda_path.h"
#include "operators/decoders/decode_route.h"
#include "operators/decoders/gpu_decoder.h"

namespace conveyor::ops {

class AheadPath {
 public:
  struct Job;

  AheadPath();
  ~AheadPath();  // Stop()
  AheadPath(const AheadPath&) = delete;
  AheadPath& operator=(const AheadPath&) = delete;

  // Enabled when options.ahead_cost > 0; `cuda` must be ready and outlive Stop(). Threads start at
  // the first Submit.
  void Init(CudaPath& cuda, const DecodeRouter& router, const GpuDecoderOptions& options);
  bool enabled() const { return cuda_ != nullptr; }
  // Drops queued jobs, finishes running ones, joins the threads, waits for their streams.
  void Stop() noexcept;

  void Submit(int64_t key, const std::vector<GpuDecodeSample>& samples, const std::function<bool(int)>& accept,
              const std::string& where);
  // claimed[i]: sample i's job, or null (sized to samples). Counts the jobs taken back.
  void Claim(int64_t key, const std::vector<GpuDecodeSample>& samples, std::vector<Job*>& claimed,
             int64_t* taken_back);
  // For every non-null claimed[i]: as the header says; the images it copied are counted in
  // `delivered`, the host wait in `wait_ns`. Leaves `claimed` all null.
  void Deliver(std::vector<Job*>& claimed, const std::vector<GpuDecodeSample>& samples, int channels,
               cuda::StreamView stream, std::vector<int>* failed, int64_t* delivered, int64_t* wait_ns);
  // Claimed jobs a failed call will not deliver: dropped (their buffers free once their device work
  // is done). Leaves `claimed` all null.
  void Release(std::vector<Job*>& claimed) noexcept;

 private:
  struct Lane;  // one thread: its worker, stream and buffers
  void Run(Lane& lane);
  void DecodeJob(Lane& lane, Job& job);
  // Under mu_: a job leaves (its buffer, if any, free again once its device work is done).
  void Forget(Job* job);

  CudaPath* cuda_ = nullptr;
  DecodeRouter router_{RouterConfig{}};
  GpuDecoderOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;  // a job queued or finished, or stop
  bool stop_ = false;
  std::deque<std::unique_ptr<Job>> jobs_;  // oldest first: queued, running and done ones
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<std::thread> threads_;
};

}  // namespace conveyor::ops
