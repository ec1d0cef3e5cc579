// Jpeg2000PlanesToHwc: one thread per output pixel in a grid-stride loop; reads of each plane and
// writes of the output row are consecutive across a warp.
#include <algorithm>
#include <string>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/decoders/jpeg2000_convert.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// format.h's Luma (the CPU decoders' GRAY from RGB), bit for bit.
__device__ inline uint8_t LumaOf(unsigned r, unsigned g, unsigned b) {
  return static_cast<uint8_t>((19595u * r + 38470u * g + 7471u * b + 0x8000u) >> 16);
}

template <int kIn, int kOut>
__global__ void __launch_bounds__(kThreads)
    PlanesToHwcKernel(Jpeg2000Planes src, int64_t y0, int64_t x0, int64_t height, int64_t width, bool bgr,
                      uint8_t* out) {
  const int64_t pixels = height * width;
  for (int64_t p = blockIdx.x * int64_t{kThreads} + threadIdx.x; p < pixels; p += int64_t{gridDim.x} * kThreads) {
    const int64_t y = p / width, x = p - y * width;
    const int64_t at = (y0 + y) * src.pitch + x0 + x;
    uint8_t* o = out + p * kOut;
    if constexpr (kIn == 1) {
      const uint8_t v = src.plane[0][at];
      if constexpr (kOut == 1) {
        o[0] = v;
      } else {
        o[0] = o[1] = o[2] = v;
      }
    } else {
      const uint8_t r = src.plane[0][at], g = src.plane[1][at], b = src.plane[2][at];
      if constexpr (kOut == 1) {
        o[0] = LumaOf(r, g, b);
      } else {
        o[0] = bgr ? b : r;
        o[1] = g;
        o[2] = bgr ? r : b;
      }
    }
  }
}

}  // namespace

void Jpeg2000PlanesToHwc(const Jpeg2000Planes& src, int64_t y0, int64_t x0, int64_t height, int64_t width,
                         int out_channels, bool bgr, uint8_t* out, cuda::StreamView stream) {
  if ((src.components != 1 && src.components != 3) || (out_channels != 1 && out_channels != 3)) {
    throw InvalidArgument("JPEG 2000 planes to HWC: expected 1 or 3 components into 1 or 3 channels, got " +
                          std::to_string(src.components) + " into " + std::to_string(out_channels));
  }
  const int64_t pixels = height * width;
  if (pixels <= 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((pixels + kThreads - 1) / kThreads, 4096));
  const bool in3 = src.components == 3, out3 = out_channels == 3;
  if (in3 && out3) {
    PlanesToHwcKernel<3, 3><<<blocks, kThreads, 0, stream.get()>>>(src, y0, x0, height, width, bgr, out);
  } else if (in3) {
    PlanesToHwcKernel<3, 1><<<blocks, kThreads, 0, stream.get()>>>(src, y0, x0, height, width, bgr, out);
  } else if (out3) {
    PlanesToHwcKernel<1, 3><<<blocks, kThreads, 0, stream.get()>>>(src, y0, x0, height, width, bgr, out);
  } else {
    PlanesToHwcKernel<1, 1><<<blocks, kThreads, 0, stream.get()>>>(src, y0, x0, height, width, bgr, out);
  }
  CONVEYOR_CHECK_LAUNCH("PlanesToHwcKernel");
}

}  // namespace conveyor::ops
