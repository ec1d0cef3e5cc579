#include <string>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/geometry/tile_loop.cuh"
#include "operators/geometry/warp.h"
#include "operators/geometry/warp_pixel.h"

namespace conveyor::ops {
namespace {

// One block per tile (tile_loop.cuh). The descriptor is read once into shared memory: its fill
// values are indexed by channel, which would otherwise put a copy in local memory.
template <typename In, typename Out, resample::Filter F>
__global__ void WarpKernel(const WarpSample* samples) {
  __shared__ WarpSample s;
  if (threadIdx.x == 0 && threadIdx.y == 0) s = samples[blockIdx.y];
  __syncthreads();
  geometry_detail::ForEachTilePixel(s.out_h, s.out_w, [&](int x, int y) { warp::WarpPixel<In, Out, F>(s, x, y); });
}

}  // namespace

void WarpGpu(const WarpSample* samples, int n, int64_t max_pixels_hint, resample::Filter filter, DType in, DType out,
             cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid = geometry_detail::TileGrid(max_pixels_hint, n), block = geometry_detail::TileBlock();
  const bool ok = warp::DispatchWarp(in, out, filter, [&](auto in_tag, auto out_tag, auto filter_tag) {
    WarpKernel<decltype(in_tag), decltype(out_tag), decltype(filter_tag)::value><<<grid, block, 0, stream.get()>>>(samples);
  });
  if (!ok) {
    throw InvalidArgument("WarpGpu: unsupported dtypes " + std::string(DTypeName(in)) + " -> " +
                          std::string(DTypeName(out)));
  }
  CONVEYOR_CHECK_LAUNCH("WarpKernel");
}

}  // namespace conveyor::ops
