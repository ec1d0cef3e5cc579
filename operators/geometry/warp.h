// Affine warps of HWC images: the engine behind warp_affine and rotate. Plain functions, no CUDA
// syntax. The per-pixel arithmetic (warp_pixel.h) is shared token for token by the CPU reference
// and the kernel, unfused (resample_math.h's FMul/FAdd), so GPU outputs equal the CPU's bit for bit.
//
// | what      | contract                                                                        |
// |-----------|---------------------------------------------------------------------------------|
// | layout    | HWC, interleaved, dense; 1..kMaxWarpChannels channels                           |
// | dtypes    | in: uint8 or float32; out: uint8 (round half up, clamp) or float32              |
// | mapping   | output pixel (x, y) reads the input at (sx, sy) = M (x + 0.5, y + 0.5, 1): pixel |
// |           | centres, M maps output to input (DALI's warp with inverse_map)                  |
// | nearest   | the pixel containing (sx, sy): (floor(sx), floor(sy))                           |
// | linear    | the 2 x 2 pixels around (sx - 0.5, sy - 0.5), bilinear weights                  |
// | cubic     | the 4 x 4 pixels around it, Keys a = -0.5 (resample_math.h), not renormalised   |
// | border    | use_fill: a tap outside the image reads fill[c]; else it is clamped to the edge |
// | GPU       | one launch per batch: grid (tiles, samples), 32 x 8 output tiles visited with a |
// |           | grid-stride loop, descriptors in device memory, grid from capacities            |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"
#include "operators/resample/resample_math.h"

namespace conveyor::ops {

inline constexpr int kMaxWarpChannels = 8;
// Largest output side (pixel centres and source coordinates stay exact in float32), and largest
// input side: half of it, so that rotate's canvas for any input (at most sqrt(h^2 + w^2)) fits.
inline constexpr int64_t kMaxWarpSide = int64_t{1} << 22;
inline constexpr int64_t kMaxWarpInputSide = kMaxWarpSide / 2;

// One sample, written on the host and read as is by the kernel.
struct WarpSample {
  const void* in;
  void* out;
  int32_t in_h, in_w;
  int32_t out_h, out_w;
  int32_t channels;
  int32_t use_fill;  // 1: taps outside the input read fill; 0: taps are clamped to the edge
  float m[6];        // output -> input, row-major [2, 3]
  float fill[kMaxWarpChannels];
};

// The CPU reference for one sample (host pointers).
void WarpCpu(const WarpSample& s, resample::Filter filter, DType in, DType out);

// Every sample in one launch. `samples`: n device-readable descriptors; `max_pixels_hint` (from
// the output's capacity, so a captured launch covers any batch that fits) sizes the grid.
void WarpGpu(const WarpSample* samples, int n, int64_t max_pixels_hint, resample::Filter filter, DType in, DType out,
             cuda::StreamView stream);

}  // namespace conveyor::ops
