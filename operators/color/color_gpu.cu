#include <type_traits>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/image_common/byte_lut.cuh"
#include "operators/color/color.h"
#include "operators/color/color_pixel.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;
// Units per block: a uint8 tone sample's table (256 evaluations) then serves 16 bytes per thread.
constexpr int kUnitsPerThreadByte = 16;
constexpr int kUnitsPerThread = 4;

// Gamma, solarize and posterize of uint8 input: the sample's 256 outputs computed once per block
// by ColorPixel itself (its input: the identity bytes in shared memory), then a table read per
// element — the same bits as ColorPixel per element, without its powf or byte-wise access.
template <typename Out>
__device__ void ToneByTable(const ColorSample& s) {
  const auto* in = static_cast<const uint8_t*>(s.in);
  if (!LutBlockHasWork(in, s.pixels)) return;
  __shared__ uint8_t identity[256];
  __shared__ Out lut[256];
  ColorSample table = s;
  table.in = identity;
  table.out = lut;
  for (int b = threadIdx.x; b < 256; b += blockDim.x) {
    identity[b] = static_cast<uint8_t>(b);  // read back by this thread only
    ColorPixel<Out, uint8_t>(table, b);
  }
  __syncthreads();
  ApplyByteLut(in, static_cast<Out*>(s.out), s.pixels, lut);
}

// grid (blocks per sample, samples): each block strides over its sample's pixels; the sample's
// parameters come from its descriptor, so a captured launch replays with new values. The mode is
// per sample (a policy step mixes them), so the table path is chosen per block.
template <typename Out, typename In>
__global__ void ColorKernel(const ColorSample* samples) {
  const ColorSample s = samples[blockIdx.y];
  if constexpr (std::is_same_v<In, uint8_t>) {
    if (s.mode != ColorMode::kMatrix) return ToneByTable<Out>(s);
  }
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; p < s.pixels; p += stride) {
    ColorPixel<Out, In>(s, p);
  }
}

}  // namespace

void ColorGpu(const ColorSample* samples, int n, int64_t max_pixels_hint, DType out_type, DType in_type,
              cuda::StreamView stream) {
  if (n == 0) return;
  const int per_thread = in_type == DType::kUInt8 ? kUnitsPerThreadByte : kUnitsPerThread;
  const dim3 grid(BlocksPerSample(max_pixels_hint, int64_t{kThreads} * per_thread), static_cast<unsigned>(n));
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
