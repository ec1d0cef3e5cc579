// The dtype → C++ type switch and the element conversion shared by the CPU and GPU cast
// (included by cast_cpu.cc and cast_gpu.cu only).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/tensor/dtype.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops::detail {

// Calls f(T{}) for every dtype (float16/bfloat16 as their bit wrappers).
template <typename F>
void DispatchCastType(DType t, F&& f) {
  switch (t) {
    case DType::kBool: return f(bool{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt8: return f(int8_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kFloat16: return f(Float16Bits{});
    case DType::kBFloat16: return f(BFloat16Bits{});
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
  }
}

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16Bits> || std::is_same_v<T, BFloat16Bits>;

template <typename Out, typename In>
CONVEYOR_HOST_DEVICE inline Out CastValue(In v) {
  if constexpr (!kIsHalf<In> && !kIsHalf<Out>) {
    return static_cast<Out>(v);
  } else {
    const float f = LoadAsFloat(v);  // exact from the half types; rounds from float64 / large ints
    if constexpr (std::is_same_v<Out, Float16Bits>) {
      return Float16Bits{FloatToHalf(f)};
    } else if constexpr (std::is_same_v<Out, BFloat16Bits>) {
      return BFloat16Bits{FloatToBf16(f)};
    } else {
      return static_cast<Out>(f);
    }
  }
}

}  // namespace conveyor::ops::detail
