#include "tests/core/pipeline/executor_testing/executor_test_kernels.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda/check.h"

namespace conveyor::testing {
namespace {

__global__ void AugmentKernel(const AugmentDesc* descs) {
  // The descriptor was written by the host before the launch, so it is read before waiting for
  // the previous kernel: its PCIe round trip (pinned, mapped memory) overlaps that kernel instead
  // of adding to a chain of dependent launches. Everything the previous kernel writes or reads
  // (in, out) is touched only after the dependency wait.
  const AugmentDesc d = descs[blockIdx.y];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
#endif
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < d.n; i += int64_t(gridDim.x) * blockDim.x) {
    d.out[i] = fmaf(d.in[i], d.scale, d.bias);
  }
}

__global__ void AddKernel(float* out, const float* in, float add, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = in[i] + add;
  }
}

__global__ void BytesToFloatKernel(float* out, const uint8_t* in, float add, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = static_cast<float>(in[i]) + add;
  }
}

}  // namespace

void AugmentGpu(const AugmentDesc* descs, int num_samples, int64_t capacity, cuda::StreamView stream) {
  if (num_samples == 0) return;
  // Enough threads in flight to cover memory latency for the largest sample the buffers can hold
  // (a fixed 32 blocks per sample left a 64 MiB batch latency-bound at a few dozen GB/s), capped
  // because the loop is grid-stride. Depends on capacity only, so captured graphs stay valid.
  constexpr int64_t kThreads = 256;
  const int64_t per_sample = (std::max<int64_t>(capacity, 1) + num_samples - 1) / num_samples;
  const auto blocks = static_cast<unsigned>(std::clamp<int64_t>((per_sample + kThreads - 1) / kThreads, 1, 2048));
  // Programmatic dependent launch (Hopper; a plain serialised launch elsewhere): the kernel may
  // start while the previous kernel on the stream finishes, and waits for it in-kernel.
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks, static_cast<unsigned>(num_samples));
  config.blockDim = dim3(kThreads);
  config.stream = stream.get();
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CONVEYOR_CUDA_CHECK(cudaLaunchKernelEx(&config, AugmentKernel, descs));
  CONVEYOR_CHECK_LAUNCH("AugmentKernel");
}

void AddGpu(float* out, const float* in, float add, int64_t n, cuda::StreamView stream) {
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 1024));
  AddKernel<<<blocks, 256, 0, stream.get()>>>(out, in, add, n);
  CONVEYOR_CHECK_LAUNCH("AddKernel");
}

void BytesToFloatGpu(float* out, const uint8_t* in, float add, int64_t n, cuda::StreamView stream) {
  if (n <= 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 1024));
  BytesToFloatKernel<<<blocks, 256, 0, stream.get()>>>(out, in, add, n);
  CONVEYOR_CHECK_LAUNCH("BytesToFloatKernel");
}

}  // namespace conveyor::testing
