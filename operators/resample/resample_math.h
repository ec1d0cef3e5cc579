// The sampling arithmetic shared, token for token, by the CPU reference (resample_cpu.cc) and the
// kernels (resample_gpu.cu): where each output pixel reads and with which weights. Both sides
// evaluate the same float expressions in the same order with no fused multiply-add (device:
// __fmul_rn/__fadd_rn, which nvcc never contracts; host: -ffp-contract=off), so GPU results are
// bit-identical to the CPU's.
//
// | filter  | kernel k(t)                                   | radius r |
// |---------|-----------------------------------------------|----------|
// | nearest | the pixel containing the sample point         | -        |
// | linear  | triangle max(0, 1 - |t|)                      | 1        |
// | cubic   | Keys, a = -0.5 (as PIL / torchvision)         | 2        |
//
// Along one axis with scale s = input extent / output extent, output index o samples the input
// at c = (o + origin + 0.5) * s (pixel centres, align_corners = False; origin: Axis::origin, 0
// unless the output is a crop of a larger resampling). With antialiasing and s > 1 the
// kernel is stretched by f = s (support r * s); otherwise f = 1 (support r). The taps are the
// input pixels j whose centres lie in [c - r*f, c + r*f] (lo = floor(c - r*f + 0.5) clamped to 0,
// hi = floor(c + r*f + 0.5) clamped to the extent), weighted k((j + 0.5 - c) / f) / sum, so the
// weights of the taps that exist sum to 1 (edges are renormalised, not replicated).
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define CONVEYOR_HD __host__ __device__ __forceinline__
#else
#define CONVEYOR_HD inline
#endif

namespace conveyor::ops::resample {

enum class Filter : int { kNearest = 0, kLinear = 1, kCubic = 2 };

// Unfused float arithmetic (see the file comment).
CONVEYOR_HD float FMul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
CONVEYOR_HD float FAdd(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
CONVEYOR_HD float FDiv(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

CONVEYOR_HD float FilterAt(Filter f, float t) {
  const float x = fabsf(t);
  if (f == Filter::kLinear) return x < 1.f ? FAdd(1.f, -x) : 0.f;
  // Keys cubic with a = -0.5: (1.5x - 2.5)x^2 + 1 on [0, 1), ((-0.5x + 2.5)x - 4)x + 2 on [1, 2).
  if (x < 1.f) return FAdd(FMul(FAdd(FMul(1.5f, x), -2.5f), FMul(x, x)), 1.f);
  if (x < 2.f) return FAdd(FMul(FAdd(FMul(FAdd(FMul(-0.5f, x), 2.5f), x), -4.f), x), 2.f);
  return 0.f;
}

// The parameters of one axis (from the descriptor).
struct Axis {
  float scale;    // input (window) extent / output extent
  float stretch;  // f: scale when antialiasing a downscale, else 1
  float support;  // r * f
  int extent;     // input (window) extent, >= 1
  // Output index of this output's first element in the resampling it is cut from: a crop at
  // anchor a of a resize to `extent / scale` samples exactly where that resize's outputs a, a + 1,
  // ... do (resize_crop_mirror). An integer, so 0 leaves every centre's bits as they were.
  int origin = 0;
};

// The taps of one output index: input pixels [lo, lo + count), weights Weight(axis, tap, j).
struct Tap {
  int lo, count;
  float center, sum;
};

// `unit_stretch`: the caller knows a.stretch == 1 (no antialias): (j + 0.5 - c) / 1 is exact, so
// the divisions are left out — the same values, a dozen fewer instructions per division on the
// device (the two-tap kernel's tap computations: -1.3% of its time on the H100).
CONVEYOR_HD Tap MakeTap(Filter f, const Axis& a, int o, bool unit_stretch = false) {
  Tap t;
  t.center = FMul(FAdd(static_cast<float>(o + a.origin), 0.5f), a.scale);
  if (f == Filter::kNearest) {
    int j = static_cast<int>(floorf(t.center));
    t.lo = j < 0 ? 0 : (j >= a.extent ? a.extent - 1 : j);
    t.count = 1;
    t.sum = 1.f;
    return t;
  }
  int lo = static_cast<int>(floorf(FAdd(FAdd(t.center, -a.support), 0.5f)));
  int hi = static_cast<int>(floorf(FAdd(FAdd(t.center, a.support), 0.5f)));
  lo = lo < 0 ? 0 : lo;
  hi = hi > a.extent ? a.extent : hi;
  t.lo = lo;
  t.count = hi > lo ? hi - lo : 0;
  float sum = 0.f;
  for (int j = lo; j < hi; ++j) {
    const float x = FAdd(FAdd(static_cast<float>(j), 0.5f), -t.center);
    sum = FAdd(sum, FilterAt(f, unit_stretch ? x : FDiv(x, a.stretch)));
  }
  t.sum = sum;
  return t;
}

// The normalised weight of input pixel j (lo <= j < lo + count) for tap `t`.
CONVEYOR_HD float Weight(Filter f, const Axis& a, const Tap& t, int j, bool unit_stretch = false) {
  if (f == Filter::kNearest) return 1.f;
  const float x = FAdd(FAdd(static_cast<float>(j), 0.5f), -t.center);
  return FDiv(FilterAt(f, unit_stretch ? x : FDiv(x, a.stretch)), t.sum);
}

// Why the device branches below avoid the conversion instructions (I2F, F2I, FRND): on the H100
// those issue on the conversion pipe at 16 per clock per SM, a quarter of the integer ALU and an
// eighth of FADD, and the resampling kernels convert every tap they read. The bit tricks are exact
// (2^23 = 8388608: floats in [2^23, 2^24) are the integers, spaced 1), so both sides still agree
// bit for bit.

// An input element as float32 (exact for uint8). Device: the byte as the low mantissa bits of
// 2^23, minus 2^23 (an OR and an FADD).
template <typename T>
CONVEYOR_HD float ToFloat(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, unsigned char>) return __fadd_rn(__uint_as_float(0x4B000000u | v), -8388608.f);
#endif
  return static_cast<float>(v);
}

// uint8 outputs round half up and clamp to [0, 255]; NaN gives 0.
CONVEYOR_HD unsigned char ToUint8(float v) {
#if defined(__CUDA_ARCH__)
  // Clamp first (fmaxf returns 0 for NaN), then floor by adding 2^23 rounding toward zero: the
  // low byte of the sum's bits is floor(clamped). Same results as the host's branch below.
  const float c = fminf(fmaxf(FAdd(v, 0.5f), 0.f), 255.f);
  return static_cast<unsigned char>(__float_as_uint(__fadd_rz(c, 8388608.f)) & 0xFFu);
#else
  const float r = floorf(FAdd(v, 0.5f));
  if (!(r == r)) return 0;  // NaN
  return static_cast<unsigned char>(r <= 0.f ? 0.f : (r >= 255.f ? 255.f : r));
#endif
}

}  // namespace conveyor::ops::resample
