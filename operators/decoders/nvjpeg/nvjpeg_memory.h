// What one nvJPEG handle's allocators hold (NvjpegAllocators::memory(), GpuDecoderCounters).
#pragma once

#include <cstdint>

namespace conveyor::nvjpeg {

struct NvjpegMemory {
  int64_t device_allocations = 0;  // live
  int64_t device_bytes = 0;        // live, as nvJPEG asked
  int64_t device_slack_bytes = 0;  // live, added by us (nvjpeg_allocators.h)
  int64_t device_peak_bytes = 0;   // bytes + slack, the most held at once
  int64_t pinned_allocations = 0;
  int64_t pinned_bytes = 0;
  // Device memory the driver gave out while the handles were made and while their states were
  // preallocated (cudaMemGetInfo before and after each call): nvJPEG's own memory, which does not
  // come through our allocators (the engines' hardware backend). Another thread's allocation in the
  // same window counts too, so this is an upper bound; memory nvJPEG takes inside its decode calls
  // is not in it.
  int64_t driver_bytes_at_create = 0;
  int64_t driver_bytes_at_prealloc = 0;

  // Every field summed (several handles, several decoders).
  NvjpegMemory& operator+=(const NvjpegMemory& m) {
    device_allocations += m.device_allocations;
    device_bytes += m.device_bytes;
    device_slack_bytes += m.device_slack_bytes;
    device_peak_bytes += m.device_peak_bytes;
    pinned_allocations += m.pinned_allocations;
    pinned_bytes += m.pinned_bytes;
    driver_bytes_at_create += m.driver_bytes_at_create;
    driver_bytes_at_prealloc += m.driver_bytes_at_prealloc;
    return *this;
  }
};

}  // namespace conveyor::nvjpeg
