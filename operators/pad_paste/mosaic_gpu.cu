// Mosaic kernel: blockIdx.y = sample; blocks along x take canvas rows (grid-stride), threads the
// row's elements. A row meets two tiles (left and right of cx); in each half the pixels the tile
// covers are one contiguous run of the tile's source row, so a thread decides copy or fill by
// comparing its element index with that run's bounds — no division by the channel count except
// for a per-channel fill. Values move as bits (the element type is only its size), so the result
// equals MosaicCpu's bit for bit.
#include <algorithm>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/pad_paste/mosaic.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// One half of a canvas row, elements [begin, end) of the row: [lo, hi) of them come from the tile,
// element e from src[base + e] (base may be negative: only indices inside the run are read); the
// rest is fill.
struct HalfRow {
  int64_t lo, hi, base;
  const void* src;
};

__device__ HalfRow MakeHalf(const MosaicTile& t, int64_t y, int64_t begin, int64_t end, int64_t channels) {
  HalfRow h{begin, begin, 0, t.in};
  const int64_t sy = y - t.oy;
  if (sy < 0 || sy >= t.h || t.w <= 0) return h;  // the tile misses this row: all fill
  h.lo = min(max(t.ox * channels, begin), end);
  h.hi = max(min((t.ox + t.w) * channels, end), h.lo);
  h.base = (sy * t.w - t.ox) * channels;
  return h;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) MosaicKernel(const MosaicDesc* descs) {
  const MosaicDesc& d = descs[blockIdx.y];
  const int64_t out_h = d.out_h, channels = d.channels, row = d.out_w * channels;
  const int64_t split = min(max(d.cx, int64_t{0}), d.out_w) * channels;
  const bool one_fill = d.fill_count == 1;
  T* out = static_cast<T*>(d.out);
  for (int64_t y = blockIdx.x; y < out_h; y += gridDim.x) {
    const int bottom = y >= d.cy ? 2 : 0;
    const HalfRow left = MakeHalf(d.tiles[bottom], y, 0, split, channels);
    const HalfRow right = MakeHalf(d.tiles[bottom + 1], y, split, row, channels);
    T* dst = out + y * row;
    for (int64_t e = threadIdx.x; e < row; e += kThreads) {
      // Selected field by field, so both halves stay in registers.
      const bool is_right = e >= split;
      const int64_t lo = is_right ? right.lo : left.lo, hi = is_right ? right.hi : left.hi;
      if (e >= lo && e < hi) {
        const T* src = static_cast<const T*>(is_right ? right.src : left.src);
        dst[e] = src[(is_right ? right.base : left.base) + e];
      } else {
        // The fill's bits: its low bytes are the element (FillBits), as MosaicCpu's memcpy takes them.
        dst[e] = static_cast<T>(d.fill[one_fill ? 0 : (e % channels) % kMaxWindowFill]);
      }
    }
  }
}

}  // namespace

void MosaicGpu(const MosaicDesc* descs, int num_samples, int64_t capacity_bytes, DType dtype, cuda::StreamView stream) {
  if (num_samples == 0 || capacity_bytes == 0) return;
  // Grid from the capacity (in the capture signature), never from this batch's values: rows of
  // >= 256 bytes per block, at most ~8192 blocks in all; extra blocks find no row and exit.
  const int64_t rows = std::max<int64_t>(capacity_bytes / num_samples / 256, 1);
  const int64_t spread = std::max<int64_t>((8192 + num_samples - 1) / num_samples, 1);
  const dim3 grid(static_cast<unsigned>(std::min(rows, spread)), static_cast<unsigned>(num_samples));
  switch (DTypeSize(dtype)) {
    case 1: MosaicKernel<uint8_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    case 2: MosaicKernel<uint16_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    case 4: MosaicKernel<uint32_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    default: throw InvalidArgument("mosaic: unsupported dtype " + std::string(DTypeName(dtype)));
  }
  CONVEYOR_CHECK_LAUNCH("MosaicKernel");
}

}  // namespace conveyor::ops
