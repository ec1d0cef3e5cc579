// The mosaic reference: pixel by pixel from the contract in mosaic.h.
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "operators/pad_paste/mosaic.h"

namespace conveyor::ops {
namespace {

template <typename T>
void Run(const MosaicDesc& d) {
  T* out = static_cast<T*>(d.out);
  for (int64_t y = 0; y < d.out_h; ++y) {
    for (int64_t x = 0; x < d.out_w; ++x) {
      const MosaicTile& t = d.tiles[(y >= d.cy ? 2 : 0) + (x >= d.cx ? 1 : 0)];
      const int64_t sy = y - t.oy, sx = x - t.ox;
      const bool inside = sy >= 0 && sy < t.h && sx >= 0 && sx < t.w;
      for (int64_t c = 0; c < d.channels; ++c) {
        T v;
        if (inside) {
          v = static_cast<const T*>(t.in)[(sy * t.w + sx) * d.channels + c];
        } else {
          const uint32_t bits = d.fill[d.fill_count == 1 ? 0 : c % kMaxWindowFill];
          std::memcpy(&v, &bits, sizeof(T));
        }
        out[(y * d.out_w + x) * d.channels + c] = v;
      }
    }
  }
}

}  // namespace

MosaicDraw DrawMosaic(Philox rng, int sample, int num_samples, int64_t out_h, int64_t out_w, double center_lo,
                      double center_hi) {
  MosaicDraw draw{};
  const double fx = center_lo + (center_hi - center_lo) * rng.NextUniform();
  const double fy = center_lo + (center_hi - center_lo) * rng.NextUniform();
  draw.cx = static_cast<int64_t>(std::floor(fx * static_cast<double>(out_w)));
  draw.cy = static_cast<int64_t>(std::floor(fy * static_cast<double>(out_h)));
  draw.sources[0] = sample;
  for (int k = 1; k < 4; ++k) draw.sources[k] = static_cast<int>(rng.NextU32() % static_cast<uint32_t>(num_samples));
  return draw;
}

void PlaceTiles(const MosaicDraw& draw, const int64_t h[4], const int64_t w[4], MosaicDesc& d) {
  d.cy = draw.cy;
  d.cx = draw.cx;
  for (int k = 0; k < 4; ++k) {
    MosaicTile& t = d.tiles[k];
    t.h = h[k];
    t.w = w[k];
    t.oy = (k < 2) ? draw.cy - h[k] : draw.cy;
    t.ox = (k % 2 == 0) ? draw.cx - w[k] : draw.cx;
  }
}

void MosaicCpu(const MosaicDesc& d, DType dtype) {
  switch (DTypeSize(dtype)) {
    case 1: return Run<uint8_t>(d);
    case 2: return Run<uint16_t>(d);
    case 4: return Run<uint32_t>(d);
    default: throw InvalidArgument("mosaic: unsupported dtype " + std::string(DTypeName(dtype)));
  }
}

}  // namespace conveyor::ops
