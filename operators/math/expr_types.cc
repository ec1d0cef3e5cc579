#include "operators/math/expr_types.h"

#include <algorithm>

namespace conveyor::ops {

namespace {

struct Kind {
  bool is_float;
  bool is_signed;
  int bits;  // bool: 1
};

Kind KindOf(DType t) {
  switch (t) {
    case DType::kBool: return {false, false, 1};
    case DType::kUInt8: return {false, false, 8};
    case DType::kInt8: return {false, true, 8};
    case DType::kUInt16: return {false, false, 16};
    case DType::kInt16: return {false, true, 16};
    case DType::kInt32: return {false, true, 32};
    case DType::kInt64: return {false, true, 64};
    case DType::kFloat16: return {true, true, 16};
    case DType::kBFloat16: return {true, true, 16};
    case DType::kFloat32: return {true, true, 32};
    case DType::kFloat64: return {true, true, 64};
  }
  return {true, true, 32};
}

DType IntType(bool is_signed, int bits) {
  if (!is_signed) return bits <= 1 ? DType::kBool : bits <= 8 ? DType::kUInt8 : DType::kUInt16;
  return bits <= 8 ? DType::kInt8 : bits <= 16 ? DType::kInt16 : bits <= 32 ? DType::kInt32 : DType::kInt64;
}

}  // namespace

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  const Kind ka = KindOf(a), kb = KindOf(b);
  if (ka.is_float && kb.is_float) {
    if (ka.bits == kb.bits) return DType::kFloat32;  // float16 with bfloat16
    return ka.bits > kb.bits ? a : b;
  }
  if (ka.is_float) return a;
  if (kb.is_float) return b;
  if (ka.is_signed == kb.is_signed) return IntType(ka.is_signed, std::max(ka.bits, kb.bits));
  const Kind& s = ka.is_signed ? ka : kb;
  const Kind& u = ka.is_signed ? kb : ka;
  return s.bits > u.bits ? IntType(true, s.bits) : IntType(true, 2 * u.bits);
}

ExprClass ClassOf(DType type) {
  if (type == DType::kFloat64) return ExprClass::kF64;
  return KindOf(type).is_float ? ExprClass::kF32 : ExprClass::kInt;
}

bool IsIntegral(DType type) { return !KindOf(type).is_float; }

DType TrueDivisionType(DType promoted) { return promoted == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

DType FloatFunctionType(DType operand) { return IsIntegral(operand) ? DType::kFloat32 : operand; }

}  // namespace conveyor::ops
