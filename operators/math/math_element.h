// One output element of a math expression: load the operands (broadcast), run the program, store
// with saturation. Shared by math_cpu.cc and math_gpu.cu so both compute the same bits. Plain
// header.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "operators/math/expr_eval.h"
#include "operators/math/math.h"
#include "operators/tensor/saturate.h"

namespace conveyor::ops::expr {

// Element `at` of `data` (of `type`) as a value of its class.
CONVEYOR_HOST_DEVICE inline ExprValue Load(const void* data, int64_t at, DType type) {
  ExprValue v;
  v.i = 0;
  switch (type) {
    case DType::kBool: v.i = static_cast<const uint8_t*>(data)[at] != 0; break;
    case DType::kUInt8: v.i = static_cast<const uint8_t*>(data)[at]; break;
    case DType::kInt8: v.i = static_cast<const int8_t*>(data)[at]; break;
    case DType::kUInt16: v.i = static_cast<const uint16_t*>(data)[at]; break;
    case DType::kInt16: v.i = static_cast<const int16_t*>(data)[at]; break;
    case DType::kInt32: v.i = static_cast<const int32_t*>(data)[at]; break;
    case DType::kInt64: v.i = static_cast<const int64_t*>(data)[at]; break;
    case DType::kFloat16: v.f = HalfToFloat(static_cast<const uint16_t*>(data)[at]); break;
    case DType::kBFloat16: v.f = Bf16ToFloat(static_cast<const uint16_t*>(data)[at]); break;
    case DType::kFloat32: v.f = static_cast<const float*>(data)[at]; break;
    case DType::kFloat64: v.d = static_cast<const double*>(data)[at]; break;
  }
  return v;
}

// One NaN for every NaN a float output receives: the host's (x86: negative) and the device's
// (positive, all ones) default NaNs differ, and outputs must match bit for bit.
template <typename Out>
CONVEYOR_HOST_DEVICE inline bool PutNaN(Out* p) {
  if constexpr (std::is_same_v<Out, float> || std::is_same_v<Out, double>) {
    *p = std::numeric_limits<Out>::quiet_NaN();
    return true;
  } else if constexpr (std::is_same_v<Out, Float16Bits>) {
    *p = Float16Bits{0x7E00};
    return true;
  } else if constexpr (std::is_same_v<Out, BFloat16Bits>) {
    *p = BFloat16Bits{0x7FC0};
    return true;
  } else {
    return false;  // integer outputs: NaN saturates to 0
  }
}

template <typename Out>
CONVEYOR_HOST_DEVICE inline void Put(void* out, int64_t at, ExprClass cls, ExprValue v) {
  Out* p = static_cast<Out*>(out) + at;
  const bool nan = (cls == ExprClass::kF32 && v.f != v.f) || (cls == ExprClass::kF64 && v.d != v.d);
  if (nan && PutNaN(p)) return;
  *p = cls == ExprClass::kInt ? SaturateFrom<Out>(v.i) : cls == ExprClass::kF32 ? SaturateFrom<Out>(v.f) : SaturateFrom<Out>(v.d);
}

CONVEYOR_HOST_DEVICE inline void Store(void* out, int64_t at, DType type, ExprClass cls, ExprValue v) {
  switch (type) {
    case DType::kBool: return Put<bool>(out, at, cls, v);
    case DType::kUInt8: return Put<uint8_t>(out, at, cls, v);
    case DType::kInt8: return Put<int8_t>(out, at, cls, v);
    case DType::kUInt16: return Put<uint16_t>(out, at, cls, v);
    case DType::kInt16: return Put<int16_t>(out, at, cls, v);
    case DType::kInt32: return Put<int32_t>(out, at, cls, v);
    case DType::kInt64: return Put<int64_t>(out, at, cls, v);
    case DType::kFloat16: return Put<Float16Bits>(out, at, cls, v);
    case DType::kBFloat16: return Put<BFloat16Bits>(out, at, cls, v);
    case DType::kFloat32: return Put<float>(out, at, cls, v);
    case DType::kFloat64: return Put<double>(out, at, cls, v);
  }
}

// Output element j of `sample`.
CONVEYOR_HOST_DEVICE inline void EvaluateElement(const ExprProgram& program, const MathSample& sample,
                                                 const MathOperand* operands, int64_t j) {
  int64_t coords[Shape::kMaxDims];
  if (sample.strided) {
    int64_t rest = j;
    for (int d = sample.ndim - 1; d >= 0; --d) {
      coords[d] = rest % sample.extents[d];
      rest /= sample.extents[d];
    }
  }
  const auto load = [&](int k) {
    const MathOperand& o = operands[k];
    int64_t at = o.mode == kOperandSame ? j : 0;
    if (o.mode == kOperandStrided) {
      for (int d = 0; d < sample.ndim; ++d) at += coords[d] * o.strides[d];
    }
    return Load(o.data, at, program.input_types[k]);
  };
  Store(sample.out, j, program.out_type, program.result_class, Evaluate(program, sample.scalars, load));
}

}  // namespace conveyor::ops::expr
