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
};

}  // namespace conveyor::nvjpeg
