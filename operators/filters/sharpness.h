// Sharpness (torchvision's adjust_sharpness, the AutoAugment operation): each interior pixel is
// blended with a smoothed copy, out = factor * in + (1 - factor) * smooth, where smooth is the 3x3
// kernel [1 1 1; 1 5 1; 1 1 1] / 13 (rounded to nearest even for uint8, as torchvision rounds the
// degenerate image). Border pixels (and images with H or W ≤ 2) are copied unchanged. Output
// clamped to [0, max_value] (255 / 1) and stored by convert.h (uint8: rounded, where torchvision
// truncates — at most 1 apart). Plain functions, no CUDA syntax; CPU and GPU bit-identical
// (the same float ops in the same order in sharpness_pixel()).
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "core/tensor/dtype.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

struct SharpnessSample {
  const void* in;
  void* out;
  int32_t height, width, channels;
  float factor;     // ≥ 0: 0 smooth, 1 unchanged, > 1 sharper
  float max_value;  // 255 for uint8, 1 for floats
};

template <typename T>
CONVEYOR_HOST_DEVICE inline void SharpnessPixel(const SharpnessSample& s, int64_t p) {
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  const int h = s.height, w = s.width, c = s.channels;
  const int y = static_cast<int>(p / w), x = static_cast<int>(p % w);
  const bool interior = y > 0 && x > 0 && y < h - 1 && x < w - 1;
  for (int ch = 0; ch < c; ++ch) {
    const int64_t e = p * c + ch;
    if (!interior) {
      out[e] = in[e];
      continue;
    }
    float sum = 0.f;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) sum += LoadAsFloat(in[e + (static_cast<int64_t>(dy) * w + dx) * c]);
    }
    const float center = LoadAsFloat(in[e]);
    float smooth = fmaf(4.f, center, sum) / 13.f;
    if constexpr (sizeof(T) == 1) smooth = rintf(smooth);
    const float v = fmaf(s.factor, center, (1.f - s.factor) * smooth);
    out[e] = StoreFromFloat<T>(fminf(fmaxf(v, 0.f), s.max_value));
  }
}

void SharpnessCpu(const SharpnessSample& s, DType type);
void SharpnessGpu(const SharpnessSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream);

}  // namespace conveyor::ops
