// Separable Gaussian blur of HWC images. Plain functions, no CUDA syntax.
//
// | input                              | output      | per sample          | border            |
// |------------------------------------|-------------|---------------------|-------------------|
// | HWC (1..4 channels) or HW;         | the input's | the 1-D weights     | reflect-101       |
// | uint8, float16, bfloat16, float32  | dtype       | (radius ≤ 32)       | (DALI, OpenCV)    |
//
// Rows first: tmp(y, x) = Σ_k w[k] in(y, x + k - r), then columns: out = Σ_k w[k] tmp(y + k - r, x),
// each an fmaf chain in k order from 0, in float32. The kernel does the same operations in the
// same order: CPU and GPU are bit-identical.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kMaxBlurRadius = 32;
inline constexpr int kMaxBlurChannels = 4;

struct BlurSample {
  const void* in;
  void* out;
  int32_t height, width, channels;
  int32_t radius;                      // window = 2 * radius + 1
  float weights[2 * kMaxBlurRadius + 1];  // normalized to sum 1
};

// Index `i` reflected into [0, n) without repeating the edge (…2 1 | 0 1 2 … n-1 | n-2 n-3…).
CONVEYOR_HOST_DEVICE inline int Reflect101(int i, int n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * n - 2 - i;
  return i;
}

// DALI's window and weights: radius = ceil(3 sigma) when window_size is 0; sigma = (radius - 1) *
// 0.3 + 0.8 when sigma is 0; weights exp(-x² / (2 sigma²)) normalized in double. Returns the radius.
int GaussianWeights(double sigma, int window_size, float* weights);

void GaussianBlurCpu(const BlurSample& s, DType type);
// `samples`: n device-readable descriptors; `max_pixels_hint` (from capacities) sizes the grid.
void GaussianBlurGpu(const BlurSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream);

}  // namespace conveyor::ops
