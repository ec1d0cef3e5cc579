#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/color/color.h"
#include "operators/color/color_pixel.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;
constexpr int kPixelsPerThread = 4;

// grid (blocks per sample, samples): each block strides over its sample's pixels; the sample's
// parameters come from its descriptor, so a captured launch replays with new values.
template <typename Out, typename In>
__global__ void ColorKernel(const ColorSample* samples) {
  const ColorSample s = samples[blockIdx.y];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < s.pixels; p += stride) {
    ColorPixel<Out, In>(s, p);
  }
}

}  // namespace

void ColorGpu(const ColorSample* samples, int n, int64_t max_pixels_hint, DType out_type, DType in_type,
              cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_pixels_hint, int64_t{kThreads} * kPixelsPerThread), static_cast<unsigned>(n));
  bool launched = false;
  DispatchImageType(in_type, [&](auto in_tag) {
    DispatchImageType(out_type, [&](auto out_tag) {
      ColorKernel<decltype(out_tag), decltype(in_tag)><<<grid, kThreads, 0, stream.get()>>>(samples);
      launched = true;
    });
  });
  if (!launched) {
    throw InvalidArgument("ColorGpu: unsupported dtypes " + std::string(DTypeName(in_type)) + " -> " +
                          std::string(DTypeName(out_type)));
  }
  CONVEYOR_CHECK_LAUNCH("ColorKernel");
}

}  // namespace conveyor::ops
