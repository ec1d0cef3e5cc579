#include "tests/core/pipeline/executor_testing/executor_test_kernels.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda/check.h"

namespace conveyor::testing {
namespace {

__global__ void AugmentKernel(const AugmentDesc* descs) {
  const AugmentDesc d = descs[blockIdx.y];
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < d.n; i += int64_t(gridDim.x) * blockDim.x) {
    d.out[i] = fmaf(d.in[i], d.scale, d.bias);
  }
}

__global__ void AddKernel(float* out, const float* in, float add, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = in[i] + add;
  }
}

}  // namespace

void AugmentGpu(const AugmentDesc* descs, int num_samples, cuda::StreamView stream) {
  if (num_samples == 0) return;
  AugmentKernel<<<dim3(32, static_cast<unsigned>(num_samples)), 256, 0, stream.get()>>>(descs);
  CONVEYOR_CHECK_LAUNCH("AugmentKernel");
}

void AddGpu(float* out, const float* in, float add, int64_t n, cuda::StreamView stream) {
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 1024));
  AddKernel<<<blocks, 256, 0, stream.get()>>>(out, in, add, n);
  CONVEYOR_CHECK_LAUNCH("AddKernel");
}

}  // namespace conveyor::testing
