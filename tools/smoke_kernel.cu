#include <cuda_runtime.h>

#include "core/cuda/check.h"
#include "tools/smoke_kernel.h"

namespace conveyor::tools {
namespace {
__global__ void AffineKernel(float* out, const float* in, float a, float b, int64_t n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a * in[i] + b;
}
}  // namespace

void AffineGpu(float* out, const float* in, float a, float b, int64_t n, cuda::StreamView stream) {
  if (n == 0) return;
  AffineKernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream.get()>>>(out, in, a, b, n);
  CONVEYOR_CHECK_LAUNCH("AffineKernel");
}

}  // namespace conveyor::tools
