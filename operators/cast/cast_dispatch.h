// The dtype → C++ type switch shared by the CPU and GPU cast (included by cast_cpu.cc and
// cast_gpu.cu only).
#pragma once

#include <cstdint>

#include "core/tensor/dtype.h"

namespace conveyor::ops::detail {

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
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    default: return;  // CheckCastDTypes rejected the half types already
  }
}

}  // namespace conveyor::ops::detail
