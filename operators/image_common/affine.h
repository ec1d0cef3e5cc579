// Per-channel affine map out = fmaf(in, mul[c], add[c]), c = element index mod `channels` (the
// last axis), shared by normalize and brightness_contrast. Plain functions, no CUDA syntax.
//
// | in                         | out                        | channels          | rounding     |
// |----------------------------|----------------------------|-------------------|--------------|
// | uint8, float16, bfloat16,  | uint8, float16, bfloat16,  | 1..kMaxAffine-    | convert.h    |
// | float32                    | float32                    | Channels          | (RNE, clamp) |
//
// The CPU and GPU versions compute the same fmaf on the same floats: results are bit-identical.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kMaxAffineChannels = 16;

struct AffineSample {
  const void* in;
  void* out;
  int64_t count;     // elements
  int32_t channels;  // mul/add period along the flattened sample
  float mul[kMaxAffineChannels];
  float add[kMaxAffineChannels];
};

void AffineCpu(const AffineSample& s, DType out_type, DType in_type);
// `samples`: n device-readable descriptors. `max_count_hint` (from capacities, not from this
// iteration's shapes) only sizes the grid; each block loops over its sample's elements.
void AffineGpu(const AffineSample* samples, int n, int64_t max_count_hint, DType out_type, DType in_type,
               cuda::StreamView stream);

}  // namespace conveyor::ops
