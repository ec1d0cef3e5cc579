#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/filters/sharpness.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// grid (blocks per sample, samples); threads stride over the sample's pixels.
template <typename T>
__global__ void SharpnessKernel(const SharpnessSample* samples) {
  const SharpnessSample s = samples[blockIdx.y];
  const int64_t pixels = static_cast<int64_t>(s.height) * s.width;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += stride) {
    SharpnessPixel<T>(s, p);
  }
}

}  // namespace

void SharpnessGpu(const SharpnessSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_pixels_hint, int64_t{kThreads} * 4), static_cast<unsigned>(n));
  const bool ok = DispatchImageType(type, [&](auto tag) {
    SharpnessKernel<decltype(tag)><<<grid, kThreads, 0, stream.get()>>>(samples);
  });
  if (!ok) throw InvalidArgument("SharpnessGpu: unsupported dtype " + std::string(DTypeName(type)));
  CONVEYOR_CHECK_LAUNCH("SharpnessKernel");
}

}  // namespace conveyor::ops
