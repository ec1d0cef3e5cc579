// The output walk the geometry kernels share (kernels only): blockIdx.y is the sample, blocks of
// kTileW x kTileH threads stride over its kTileW x kTileH output tiles (grid from capacities, so
// a captured launch covers any shapes that fit), one thread per output pixel. One division per
// tile, none per pixel.
#pragma once

#include <cstdint>

#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops::geometry_detail {

constexpr int kTileW = 32;  // = blockDim.x
constexpr int kTileH = 8;   // = blockDim.y

inline dim3 TileGrid(int64_t max_pixels_hint, int num_samples) {
  return dim3(BlocksPerSample(max_pixels_hint, int64_t{kTileW} * kTileH), static_cast<unsigned>(num_samples));
}
inline dim3 TileBlock() { return dim3(kTileW, kTileH); }

// Calls pixel(x, y) for every pixel of an h x w output this thread owns.
template <typename Pixel>
__device__ __forceinline__ void ForEachTilePixel(int h, int w, Pixel&& pixel) {
  const int tiles_x = (w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((h + kTileH - 1) / kTileH);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int x = (t % tiles_x) * kTileW + threadIdx.x, y = (t / tiles_x) * kTileH + threadIdx.y;
    if (x < w && y < h) pixel(x, y);
  }
}

}  // namespace conveyor::ops::geometry_detail
