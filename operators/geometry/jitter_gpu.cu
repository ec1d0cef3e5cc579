#include <string>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/geometry/jitter.h"
#include "operators/geometry/tile_loop.cuh"
#include "operators/image_common/convert.h"

namespace conveyor::ops {
namespace {

// One block per tile (tile_loop.cuh).
template <typename E>
__global__ void JitterKernel(const JitterSample* samples) {
  const JitterSample& s = samples[blockIdx.y];
  geometry_detail::ForEachTilePixel(s.height, s.width, [&](int x, int y) { JitterPixel<E>(s, x, y); });
}

}  // namespace

void JitterGpu(const JitterSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid = geometry_detail::TileGrid(max_pixels_hint, n), block = geometry_detail::TileBlock();
  const bool ok = DispatchImageType(type, [&](auto tag) {
    JitterKernel<decltype(tag)><<<grid, block, 0, stream.get()>>>(samples);
  });
  if (!ok) throw InvalidArgument("JitterGpu: unsupported dtype " + std::string(DTypeName(type)));
  CONVEYOR_CHECK_LAUNCH("JitterKernel");
}

}  // namespace conveyor::ops
