// GpuDecoder's CUDA-backend path: one image at a time through nvJPEG's decoupled API — parse and
// Huffman on the calling thread (host Huffman, or GPU Huffman above hybrid_huffman_threshold),
// transfer and device phase on a worker's own stream. Private to gpu_decoder.
//
// Workers are taken from a free list by each ParallelFor chunk (no thread ids needed); each owns a
// stream (which first waits for the call's `start` event: the outputs exist) and, per decoder
// kind, `cuda_states` nvJPEG states (each with its device buffer and pinned buffers) that take
// turns image by image, so the host phase of the next image runs while earlier images' transfers
// and device work still use the others: that device work waits for `start`, i.e. for whatever was
// on ws.stream() before the call, so a worker with one state stalls its host phase on it.
//
// Images above `cuda_shared_pixels` take a state shared by every worker instead (a few per decoder
// kind, free list, blocking while all are taken): an nvJPEG state's device buffer grows to the
// largest image it decoded and never shrinks, so a rare large photo would otherwise grow one
// buffer per worker. A shared state's last device work is marked by an event on its last user's
// stream; the next user's stream waits for it before its own transfer (buffers nvJPEG frees or
// reuses there are ordered after that work).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "operators/decoders/decode_path_common.h"
#include "operators/decoders/decode_trace.h"
#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"

namespace conveyor::ops {

// Thread time summed over the workers of one call (ns).
struct HybridState;

struct CudaTimes {
  std::atomic<int64_t> host_ns{0}, pinned_wait_ns{0}, issue_ns{0};
  std::atomic<int64_t> shared_images{0};  // decoded on a shared state
};

class CudaPath {
 public:
  struct Worker;

  CudaPath();
  ~CudaPath();
  CudaPath(const CudaPath&) = delete;
  CudaPath& operator=(const CudaPath&) = delete;

  // Makes the handle and its two decoders; throws NvjpegError when nvJPEG refuses.
  void Init(const NvjpegLibrary& lib, const GpuDecoderOptions& options, unsigned flags);
  void Destroy() noexcept;
  bool ready() const { return handle_ != nullptr; }
  NvjpegMemory memory() const { return alloc_ ? alloc_->memory() : NvjpegMemory{}; }

  // A worker for one chunk: its stream waits for `start` first. Give it back with Done().
  Worker* Take(cudaEvent_t start);
  // Records the worker's end; ws.stream() must wait for EndEvent of every worker used.
  void Done(Worker* w);
  static cudaEvent_t EndEvent(const Worker* w);
  // A worker of the caller's alone (the look-ahead threads'), never in the free list; freed with
  // the path.
  Worker* TakeOwn();
  static cuda::StreamView StreamOf(const Worker* w);

  // One image; throws NvjpegError (IsRefusal: the next path takes it). `traced` (traced calls
  // only, else null) gets the image's phase times.
  void Decode(Worker& w, const GpuDecodeSample& s, const std::string& where, CudaTimes& times, TracedImage* traced);

 private:
  struct SharedState;
  HybridState& StateOf(Worker& w, int kind);  // the kind's next state, made on first use
  void MakeState(HybridState& st, int kind);  // nvJPEG's state, device buffer and pinned buffers
  // A shared state of `kind`, made on first use; blocks while every one is taken. `stream` waits
  // for its last user's device work.
  SharedState& TakeShared(int kind, cuda::StreamView stream);
  // Back to the free list; its end marked on `ended` (nullopt: no work was queued with it).
  void GiveShared(int kind, SharedState& st, std::optional<cuda::StreamView> ended);
  std::unique_ptr<Worker> MakeWorker();
  void DecodeOn(HybridState& st, int kind, Worker& w, const GpuDecodeSample& s, const std::string& where,
                CudaTimes& times, TracedImage* traced);

  const NvjpegLibrary* lib_ = nullptr;
  GpuDecoderOptions options_;
  std::unique_ptr<NvjpegAllocators> alloc_;  // declared before the handle: outlives it
  nvjpegHandle_t handle_ = nullptr;
  nvjpegJpegDecoder_t decoders_[2] = {nullptr, nullptr};  // host Huffman, GPU Huffman
  std::mutex mu_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> free_;
  std::mutex shared_mu_;
  std::condition_variable shared_cv_;
  std::vector<std::unique_ptr<SharedState>> shared_[2];  // per decoder kind, up to cuda_shared_states
  std::vector<SharedState*> shared_free_[2];
};

}  // namespace conveyor::ops
