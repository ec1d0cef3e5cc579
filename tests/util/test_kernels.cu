#include "tests/util/test_kernels.h"

#include <cuda_runtime.h>

#include "core/cuda/check.h"

namespace conveyor::testing {
namespace {

__global__ void ScaleAddKernel(float* out, const float* in, float a, float b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    out[i] = a * in[i] + b;
  }
}

__global__ void IotaKernel(uint32_t* out, uint32_t pattern, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    out[i] = pattern + static_cast<uint32_t>(i);
  }
}

__global__ void SpinKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

unsigned Blocks(size_t n) { return static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 4096)); }

}  // namespace

void ScaleAddGpu(float* out, const float* in, float a, float b, size_t n, cuda::StreamView stream) {
  if (n == 0) return;
  ScaleAddKernel<<<Blocks(n), 256, 0, stream.get()>>>(out, in, a, b, n);
  CONVEYOR_CHECK_LAUNCH("ScaleAddKernel");
}

void IotaGpu(uint32_t* out, uint32_t pattern, size_t n, cuda::StreamView stream) {
  if (n == 0) return;
  IotaKernel<<<Blocks(n), 256, 0, stream.get()>>>(out, pattern, n);
  CONVEYOR_CHECK_LAUNCH("IotaKernel");
}

int ClockRateKhz() {
  int device = 0, khz = 0;
  CONVEYOR_CUDA_CHECK(cudaGetDevice(&device));
  CONVEYOR_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return khz;
}

void SpinGpu(double ms, cuda::StreamView stream) {
  const long long cycles = static_cast<long long>(ms * ClockRateKhz());
  SpinKernel<<<1, 1, 0, stream.get()>>>(cycles);
  CONVEYOR_CHECK_LAUNCH("SpinKernel");
}

}  // namespace conveyor::testing
