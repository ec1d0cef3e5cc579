// The allocators nvJPEG gets from GpuDecoder: device memory from our stream-ordered device pool,
// pinned memory from the pinned pool, so steady state makes no cudaMalloc / cudaHostAlloc. Each
// nvJPEG handle gets its own NvjpegAllocators, which count what that handle holds (for the
// decoder's counters: where nvJPEG's GPU memory goes, engines or CUDA backend).
//
// Device slack. nvJPEG's ROI colour conversion (nvjpeg::ycbcr_to_format_kernel_roi, 4:2:0, CUDA
// backend) reads chroma past the end of its own plane buffer when a window reaches the image's
// last rows: compute-sanitizer memcheck on the H100 (2026-11-25) saw reads up to 128+ bytes past a
// 217,088-byte buffer. The values read only feed interpolation weights of pixels outside the
// window, but a read past an allocation may fault; kDeviceSlack bytes more than asked (one chroma
// row of any image up to 64K pixels wide) keep it inside ours. The free passes the same padded
// size. A handle made with slack off asks the pool for exactly what nvJPEG asks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "operators/decoders/nvjpeg/nvjpeg_api.h"
#include "operators/decoders/nvjpeg/nvjpeg_memory.h"

namespace conveyor::nvjpeg {

inline constexpr size_t kDeviceSlack = size_t{64} << 10;

// What the calling thread's nvJPEG allocator calls (any handle's) did so far: calls and the time
// inside them, device and pinned. Read before and after an nvJPEG call to see whether it allocated
// and how long that took (the decoder's per-image trace, CONVEYOR_JPEG_TRACE).
struct ThreadAllocTally {
  int64_t device_calls = 0, device_ns = 0, pinned_calls = 0, pinned_ns = 0;
};
ThreadAllocTally ThisThreadAllocTally();

// Pass device() and pinned() to nvjpegCreateExV2 / nvjpegBuffer*CreateV2; the object must outlive
// the handle and every buffer made with it (its address is the allocators' context).
class NvjpegAllocators {
 public:
  explicit NvjpegAllocators(bool device_slack);
  NvjpegAllocators(const NvjpegAllocators&) = delete;
  NvjpegAllocators& operator=(const NvjpegAllocators&) = delete;

  // Pinned high water (0: off): each pinned request is rounded up to the largest this handle has
  // made so far, capped at `cap` bytes. nvJPEG grows each state's pinned buffers image by image;
  // with many states (CUDA-backend workers x kinds x buffers) each walks up the pool's size classes
  // on its own, one cudaHostAlloc per step (~50 in a realistic set's steady state, 3.5 ms each,
  // CUPTI trace on an H200). Rounded up, a state that meets a large image lifts every later request.
  void set_pinned_high_water_cap(size_t cap) { pin_cap_ = cap; }

  nvjpegDevAllocatorV2_t* device() { return &device_; }
  nvjpegPinnedAllocatorV2_t* pinned() { return &pinned_; }
  size_t slack() const { return slack_; }
  NvjpegMemory memory() const;

 private:
  static int DevMalloc(void* ctx, void** ptr, size_t size, cudaStream_t stream);
  static int DevFree(void* ctx, void* ptr, size_t size, cudaStream_t stream);
  static int PinnedMalloc(void* ctx, void** ptr, size_t size, cudaStream_t stream);
  static int PinnedFree(void* ctx, void* ptr, size_t size, cudaStream_t stream);

  const size_t slack_;
  nvjpegDevAllocatorV2_t device_;
  nvjpegPinnedAllocatorV2_t pinned_;
  std::atomic<int64_t> dev_allocs_{0}, dev_bytes_{0}, dev_peak_{0}, pin_allocs_{0}, pin_bytes_{0};
  size_t pin_cap_ = 0;
  std::atomic<size_t> pin_high_{0};
  std::mutex pin_mu_;
  std::unordered_map<void*, size_t> pin_rounded_;  // pointer -> the size given (when rounded up)
};

}  // namespace conveyor::nvjpeg
