// GridMask (DALI's grid_mask, arXiv:2001.04086): zeroes pixels in a grid of squares. Plain
// functions, no CUDA syntax; the per-pixel rule is one host/device function.
//
// Pixel (x, y) (column, row; integer coordinates) goes to grid coordinates, rotated by `angle`
// about the origin and then shifted:
//   u = cos(angle) x + sin(angle) y + shift_x,   v = −sin(angle) x + cos(angle) y + shift_y
// and is zeroed when frac(u / tile) < ratio and frac(v / tile) < ratio (black squares of side
// ratio · tile, repeating every tile pixels). cos, sin and 1 / tile are computed on the host; the
// rule is fmaf/floorf only: CPU and GPU bit-identical.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/cuda/stream.h"
#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "core/tensor/dtype.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

struct GridMaskSample {
  const void* in;
  void* out;
  int32_t height, width, channels;
  float cos_a, sin_a, shift_x, shift_y, inv_tile, ratio;
};

CONVEYOR_HOST_DEVICE inline bool GridMasked(const GridMaskSample& s, int x, int y) {
  const float u = fmaf(s.cos_a, static_cast<float>(x), fmaf(s.sin_a, static_cast<float>(y), s.shift_x)) * s.inv_tile;
  const float v = fmaf(-s.sin_a, static_cast<float>(x), fmaf(s.cos_a, static_cast<float>(y), s.shift_y)) * s.inv_tile;
  return u - floorf(u) < s.ratio && v - floorf(v) < s.ratio;
}

template <typename T>
CONVEYOR_HOST_DEVICE inline void GridMaskPixel(const GridMaskSample& s, int64_t p) {
  const bool masked = GridMasked(s, static_cast<int>(p % s.width), static_cast<int>(p / s.width));
  const T* in = static_cast<const T*>(s.in) + p * s.channels;
  T* out = static_cast<T*>(s.out) + p * s.channels;
  for (int c = 0; c < s.channels; ++c) out[c] = masked ? StoreFromFloat<T>(0.f) : in[c];
}

void GridMaskCpu(const GridMaskSample& s, DType type);
void GridMaskGpu(const GridMaskSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream);

}  // namespace conveyor::ops
