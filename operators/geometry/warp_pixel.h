// One output pixel of warp.h, for the CPU reference (warp_cpu.cc) and the kernel (warp_gpu.cu)
// alike: the same float operations in the same order, none fused, so both give the same bits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "operators/geometry/warp.h"
#include "operators/resample/resample_math.h"

namespace conveyor::ops::warp {

using resample::FAdd;
using resample::FMul;
using resample::Filter;

// Source coordinates are kept within ±2^24 before floorf and the int conversion (an overflowing
// matrix product, or its NaN, lands far outside every image instead of being undefined).
inline constexpr float kFar = 16777216.f;
CONVEYOR_HD float Bounded(float v) { return fminf(fmaxf(v, -kFar), kFar); }

// Input element (x, y, c) as float, or the border rule's value when (x, y) is outside.
template <typename In>
CONVEYOR_HD float Tap(const WarpSample& s, const In* in, int x, int y, int c) {
  if (x < 0 || y < 0 || x >= s.in_w || y >= s.in_h) {
    if (s.use_fill) return s.fill[c];
    x = x < 0 ? 0 : (x >= s.in_w ? s.in_w - 1 : x);
    y = y < 0 ? 0 : (y >= s.in_h ? s.in_h - 1 : y);
  }
  return resample::ToFloat(in[(static_cast<int64_t>(y) * s.in_w + x) * s.channels + c]);
}

template <typename Out>
CONVEYOR_HD Out Store(float v) {
  if constexpr (std::is_same_v<Out, uint8_t>) {
    return resample::ToUint8(v);
  } else {
    return v;
  }
}

// Output pixel (x, y) of sample s, every channel.
template <typename In, typename Out, Filter F>
CONVEYOR_HD void WarpPixel(const WarpSample& s, int x, int y) {
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out) + (static_cast<int64_t>(y) * s.out_w + x) * s.channels;
  const float cx = FAdd(static_cast<float>(x), 0.5f), cy = FAdd(static_cast<float>(y), 0.5f);
  const float sx = Bounded(FAdd(FAdd(FMul(s.m[0], cx), FMul(s.m[1], cy)), s.m[2]));
  const float sy = Bounded(FAdd(FAdd(FMul(s.m[3], cx), FMul(s.m[4], cy)), s.m[5]));
  if constexpr (F == Filter::kNearest) {
    const int ix = static_cast<int>(floorf(sx)), iy = static_cast<int>(floorf(sy));
    for (int c = 0; c < s.channels; ++c) out[c] = Store<Out>(Tap(s, in, ix, iy, c));
    return;
  }
  // Taps around the point in pixel-index space (pixel i's centre is at i + 0.5).
  const float fx = FAdd(sx, -0.5f), fy = FAdd(sy, -0.5f);
  const float lx = floorf(fx), ly = floorf(fy);
  const int x0 = static_cast<int>(lx), y0 = static_cast<int>(ly);
  const float wx = FAdd(fx, -lx), wy = FAdd(fy, -ly);  // exact: the fractional parts
  if constexpr (F == Filter::kLinear) {
    const float ax = FAdd(1.f, -wx), ay = FAdd(1.f, -wy);
    for (int c = 0; c < s.channels; ++c) {
      const float top = FAdd(FMul(Tap(s, in, x0, y0, c), ax), FMul(Tap(s, in, x0 + 1, y0, c), wx));
      const float bottom = FAdd(FMul(Tap(s, in, x0, y0 + 1, c), ax), FMul(Tap(s, in, x0 + 1, y0 + 1, c), wx));
      out[c] = Store<Out>(FAdd(FMul(top, ay), FMul(bottom, wy)));
    }
  } else {
    // Taps x0 - 1 .. x0 + 2 at distances wx + 1, wx, 1 - wx, 2 - wx from the point.
    float kx[4], ky[4];
    for (int i = 0; i < 4; ++i) {
      kx[i] = resample::FilterAt(Filter::kCubic, FAdd(wx, static_cast<float>(1 - i)));
      ky[i] = resample::FilterAt(Filter::kCubic, FAdd(wy, static_cast<float>(1 - i)));
    }
    for (int c = 0; c < s.channels; ++c) {
      float v = 0.f;
#if defined(__CUDA_ARCH__)
// One row at a time: fully unrolled, the 16 taps held 156 registers (sm_90), one block per SM.
#pragma unroll 1
#endif
      for (int j = 0; j < 4; ++j) {
        float row = 0.f;
        for (int i = 0; i < 4; ++i) row = FAdd(row, FMul(kx[i], Tap(s, in, x0 - 1 + i, y0 - 1 + j, c)));
        v = FAdd(v, FMul(ky[j], row));
      }
      out[c] = Store<Out>(v);
    }
  }
}

// Calls f(In{}, Out{}, std::integral_constant<Filter, F>{}) for a supported dtype pair and filter;
// false otherwise.
template <typename Fn>
bool DispatchWarp(DType in, DType out, Filter filter, Fn&& f) {
  const auto with_filter = [&](auto in_tag, auto out_tag) {
    switch (filter) {
      case Filter::kNearest: f(in_tag, out_tag, std::integral_constant<Filter, Filter::kNearest>{}); return true;
      case Filter::kLinear: f(in_tag, out_tag, std::integral_constant<Filter, Filter::kLinear>{}); return true;
      case Filter::kCubic: f(in_tag, out_tag, std::integral_constant<Filter, Filter::kCubic>{}); return true;
    }
    return false;
  };
  const auto with_out = [&](auto in_tag) {
    if (out == DType::kUInt8) return with_filter(in_tag, uint8_t{});
    if (out == DType::kFloat32) return with_filter(in_tag, float{});
    return false;
  };
  if (in == DType::kUInt8) return with_out(uint8_t{});
  if (in == DType::kFloat32) return with_out(float{});
  return false;
}

}  // namespace conveyor::ops::warp
