// The per-pixel rule of color.h, one function for the CPU loop and the kernel.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "operators/color/color.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

// Pixel (kMatrix) or element (other modes) `p` of sample `s`.
template <typename Out, typename In>
CONVEYOR_HOST_DEVICE inline void ColorPixel(const ColorSample& s, int64_t p) {
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  switch (s.mode) {
    case ColorMode::kMatrix: {
      const float r = LoadAsFloat(in[3 * p]), g = LoadAsFloat(in[3 * p + 1]), b = LoadAsFloat(in[3 * p + 2]);
      for (int c = 0; c < 3; ++c) {
        out[3 * p + c] = StoreFromFloat<Out>(fmaf(s.m[3 * c + 2], b, fmaf(s.m[3 * c + 1], g, fmaf(s.m[3 * c], r, s.offset[c]))));
      }
      break;
    }
    case ColorMode::kGamma: {
      const float x = fmaxf(LoadAsFloat(in[p]) * s.p1, 0.f);
      out[p] = StoreFromFloat<Out>(s.p2 * powf(x, s.p0));
      break;
    }
    case ColorMode::kSolarize: {
      const float x = LoadAsFloat(in[p]);
      out[p] = StoreFromFloat<Out>(x >= s.p0 ? s.p1 - x : x);
      break;
    }
    case ColorMode::kPosterize: {
      if constexpr (std::is_same_v<In, uint8_t> && std::is_same_v<Out, uint8_t>) {
        out[p] = static_cast<uint8_t>(in[p] & static_cast<uint32_t>(s.p0));
      }
      break;
    }
  }
}

}  // namespace conveyor::ops
