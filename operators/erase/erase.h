// Erasing rectangular regions of HWC / CHW / HW images. Plain functions, no CUDA syntax.
//
// | input                               | output      | per sample                               |
// |-------------------------------------|-------------|------------------------------------------|
// | HWC or CHW (1..kMaxEraseFill        | the input's | up to kMaxEraseRegions regions, clipped  |
// | channels, or any C with one fill    | dtype       | to the image; fill per channel           |
// | value) or HW;                       |             |                                          |
// | uint8, float16, bfloat16, float32   |             |                                          |
//
// out(y, x, c) = fill[c] where (y, x) lies in any region [y0, y1) x [x0, x1), else in(y, x, c).
// Exact copies and stores: CPU and GPU are bit-identical.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kMaxEraseRegions = 16;
inline constexpr int kMaxEraseFill = 4;

struct EraseSample {
  const void* in;
  void* out;
  int32_t height, width, channels;
  // Element (pixel p, channel c) at p * pixel_stride + c * channel_stride: HWC (C, 1), CHW (1, H * W).
  int64_t pixel_stride, channel_stride;
  int32_t num_regions;
  int32_t regions[kMaxEraseRegions][4];  // y0, x0, y1, x1 (clipped; end exclusive)
  float fill[kMaxEraseFill];             // one per channel (channels > kMaxEraseFill: fill[0] for all)
};

void EraseCpu(const EraseSample& s, DType type);
void EraseGpu(const EraseSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream);

}  // namespace conveyor::ops
