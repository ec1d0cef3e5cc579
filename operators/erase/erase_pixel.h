// The per-pixel rule of erase.h, one host/device function for the CPU loop and the kernel.
#pragma once

#include "operators/erase/erase.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

template <typename T>
CONVEYOR_HOST_DEVICE inline void ErasePixel(const EraseSample& s, int64_t p) {
  const int y = static_cast<int>(p / s.width), x = static_cast<int>(p % s.width);
  bool inside = false;
  for (int r = 0; r < s.num_regions && !inside; ++r) {
    inside = y >= s.regions[r][0] && x >= s.regions[r][1] && y < s.regions[r][2] && x < s.regions[r][3];
  }
  const T* in = static_cast<const T*>(s.in) + p * s.pixel_stride;
  T* out = static_cast<T*>(s.out) + p * s.pixel_stride;
  for (int c = 0; c < s.channels; ++c) {
    const int64_t e = c * s.channel_stride;
    out[e] = inside ? StoreFromFloat<T>(s.fill[c < kMaxEraseFill ? c : 0]) : in[e];
  }
}

}  // namespace conveyor::ops
