#include "core/capi/scale_add.h"

#include <algorithm>

#include "core/cuda/check.h"

namespace conveyor::capi {
namespace {

// Element offset of row-major linear index `i` in a strided view.
__device__ int64_t Offset(const StridedF32& v, int64_t i) {
  int64_t offset = 0;
  for (int d = v.ndim - 1; d >= 0; --d) {
    offset += (i % v.shape[d]) * v.strides[d];
    i /= v.shape[d];
  }
  return offset;
}

// Views are passed by value: a launch captures its own copy of the geometry.
__global__ void ScaleAddKernel(StridedF32 out, StridedF32 in, float a, float b, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += step) {
    out.data[Offset(out, i)] = a * in.data[Offset(in, i)] + b;
  }
}

}  // namespace

void ScaleAddF32(const StridedF32& out, const StridedF32& in, float a, float b, cuda::StreamView stream) {
  int64_t n = 1;
  for (int d = 0; d < out.ndim; ++d) n *= out.shape[d];
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 8192));
  ScaleAddKernel<<<blocks, 256, 0, stream.get()>>>(out, in, a, b, n);
  CONVEYOR_CHECK_LAUNCH("ScaleAddKernel");
}

}  // namespace conveyor::capi
