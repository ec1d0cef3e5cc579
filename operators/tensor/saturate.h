// Saturating conversions to an output element type, bit-identical on host and device (plain
// header: CUDA syntax only under __CUDACC__). Used where a value is written as a dtype the user
// chose: one_hot's on/off values, lookup_table's values, math's `dtype`.
//
// | from             | to an integer type                       | to bool | to float16/bfloat16/32/64       |
// |------------------|------------------------------------------|---------|---------------------------------|
// | int64_t          | clamped to the type's range              | v != 0  | nearest (half types via float32)|
// | float / double   | NaN → 0; rounded half to even, clamped   | v != 0  | nearest (double → half types    |
// |                  |                                          |         | via float32, as cast does)      |
//
// Out: bool, (u)int8/16, int32, int64, Float16Bits, BFloat16Bits, float, double.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "operators/cast/cast_dispatch.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

template <typename Out>
CONVEYOR_HOST_DEVICE inline Out SaturateFrom(int64_t v) {
  if constexpr (std::is_same_v<Out, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<Out>) {
    constexpr int64_t kLo = static_cast<int64_t>(std::numeric_limits<Out>::lowest());
    constexpr int64_t kHi = static_cast<int64_t>(std::numeric_limits<Out>::max());
    return static_cast<Out>(v < kLo ? kLo : v > kHi ? kHi : v);
  } else if constexpr (std::is_same_v<Out, double>) {
    return static_cast<double>(v);
  } else {
    return StoreFromFloat<Out>(static_cast<float>(v));
  }
}

template <typename Out>
CONVEYOR_HOST_DEVICE inline Out SaturateFrom(double v) {
  if constexpr (std::is_same_v<Out, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<Out>) {
    if (v != v) return Out{0};  // NaN
    constexpr double kLo = static_cast<double>(std::numeric_limits<Out>::lowest());
    // 2^63 for int64 (its max is not a double); the exact max for the narrower types.
    constexpr double kHiBound = static_cast<double>(std::numeric_limits<Out>::max()) + (sizeof(Out) == 8 ? 0.0 : 1.0);
    const double r = rint(v);
    if (r <= kLo) return std::numeric_limits<Out>::lowest();
    if (r >= kHiBound) return std::numeric_limits<Out>::max();
    return static_cast<Out>(r);
  } else if constexpr (std::is_same_v<Out, double>) {
    return v;
  } else {
    return StoreFromFloat<Out>(static_cast<float>(v));
  }
}

template <typename Out>
CONVEYOR_HOST_DEVICE inline Out SaturateFrom(float v) {
  if constexpr (std::is_integral_v<Out> || std::is_same_v<Out, double>) {
    return SaturateFrom<Out>(static_cast<double>(v));  // exact widening, then the double rules
  } else {
    return StoreFromFloat<Out>(v);
  }
}

// `v` as dtype `type` (SaturateFrom), its bits in the low bytes of the result. Host.
inline uint64_t SaturatedBits(double v, DType type) {
  uint64_t bits = 0;
  detail::DispatchCastType(type, [&](auto tag) {
    const auto value = SaturateFrom<decltype(tag)>(v);
    std::memcpy(&bits, &value, sizeof(value));
  });
  return bits;
}

}  // namespace conveyor::ops
