// Batched device copy of samples: one launch copies every sample's bytes (and no padding between
// samples), with the sample addresses and sizes read from device descriptors — so a captured
// launch replays correctly when the batch's shapes change within capacity.
//
// | what        | contract                                                                   |
// |-------------|----------------------------------------------------------------------------|
// | descriptors | device-readable array of `num_samples` SampleCopy (src, dst 16-byte aligned |
// |             | as TensorList samples are)                                                  |
// | grid        | sized from `capacity_bytes` (the output buffer's size) and num_samples      |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::ops {

struct SampleCopy {
  const void* src;
  void* dst;
  int64_t bytes;
};

void CopySamplesGpu(const SampleCopy* descriptors, int num_samples, int64_t capacity_bytes, cuda::StreamView stream);

}  // namespace conveyor::ops
