#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/erase/grid_mask.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// grid (blocks per sample, samples); threads stride over the sample's pixels.
template <typename T>
__global__ void GridMaskKernel(const GridMaskSample* samples) {
  const GridMaskSample& s = samples[blockIdx.y];
  const int64_t pixels = static_cast<int64_t>(s.height) * s.width;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += stride) {
    GridMaskPixel<T>(s, p);
  }
}

}  // namespace

void GridMaskGpu(const GridMaskSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_pixels_hint, int64_t{kThreads} * 4), static_cast<unsigned>(n));
  const bool ok = DispatchImageType(type, [&](auto tag) {
    GridMaskKernel<decltype(tag)><<<grid, kThreads, 0, stream.get()>>>(samples);
  });
  if (!ok) throw InvalidArgument("GridMaskGpu: unsupported dtype " + std::string(DTypeName(type)));
  CONVEYOR_CHECK_LAUNCH("GridMaskKernel");
}

}  // namespace conveyor::ops
