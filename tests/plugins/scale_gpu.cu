#include "core/cuda/check.h"
#include "tests/plugins/scale.h"

namespace example {
namespace {

__global__ void ScaleKernel(float* out, const float* in, int64_t n, float factor, float bias) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = fmaf(in[i], factor, bias);  // explicit fma: the CPU version rounds the same way
  }
}

}  // namespace

void ScaleGpu(float* out, const float* in, int64_t n, float factor, float bias, conveyor::cuda::StreamView stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  ScaleKernel<<<static_cast<unsigned>(blocks < 2048 ? blocks : 2048), kThreads, 0, stream.get()>>>(out, in, n, factor,
                                                                                                   bias);
  CONVEYOR_CHECK_LAUNCH("ScaleKernel");
}

}  // namespace example
