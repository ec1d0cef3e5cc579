// The example plugin's kernels: out[i] = in[i] * factor + bias over float32 (no CUDA syntax here).
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace example {

void ScaleCpu(float* out, const float* in, int64_t n, float factor, float bias);
void ScaleGpu(float* out, const float* in, int64_t n, float factor, float bias, conveyor::cuda::StreamView stream);

}  // namespace example
