// The interpreter of ExprPrograms: one element at a time, the same code on the host (math_cpu.cc)
// and the device (math_gpu.cu). Plain header: CUDA intrinsics only under __CUDA_ARCH__.
//
// Bit-identical on CPU and GPU: + - * / sqrt (IEEE round-to-nearest on both; the device uses the
// _rn intrinsics, which are never fused into FMAs), floor, ceil, round (half to even), % (fmod,
// exact), comparisons, min/max, integer arithmetic. exp, log and pow call each side's math
// library (CUDA's are within 1-4 ulp of the exact result): the GPU tests allow 8 ulp of the
// output dtype (docs/operators_tensor.md). NaNs are made one NaN on the store (math_element.h).
//
// | op        | integers (int64, then wrapped)             | floats                                  |
// |-----------|--------------------------------------------|-----------------------------------------|
// | + - * -a  | two's complement                           | IEEE                                    |
// | //        | floor division; x // 0 = 0                 | floor(a / b)                            |
// | %         | sign of the divisor (Python); x % 0 = 0    | fmod, moved to the divisor's sign       |
// | **, pow   | by squaring; negative exponents: 0 (1, -1  | pow                                     |
// |           | for bases 1, -1)                           |                                         |
// | min, max  | -                                          | NaN in, NaN out                         |
// | abs       | wraps (-128 stays -128 in int8)            | fabs                                    |
#pragma once

#include <cmath>
#include <cstdint>

#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "operators/math/expr_program.h"

namespace conveyor::ops::expr {

#if defined(__CUDA_ARCH__)
#define CONVEYOR_EXPR_F32(op, rn) rn
#else
#define CONVEYOR_EXPR_F32(op, rn) op
#endif

CONVEYOR_HOST_DEVICE inline float Add(float a, float b) { return CONVEYOR_EXPR_F32(a + b, __fadd_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline float Sub(float a, float b) { return CONVEYOR_EXPR_F32(a - b, __fsub_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline float Mul(float a, float b) { return CONVEYOR_EXPR_F32(a * b, __fmul_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline float Div(float a, float b) { return CONVEYOR_EXPR_F32(a / b, __fdiv_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline float Sqrt(float a) { return CONVEYOR_EXPR_F32(std::sqrt(a), __fsqrt_rn(a)); }
CONVEYOR_HOST_DEVICE inline double Add(double a, double b) { return CONVEYOR_EXPR_F32(a + b, __dadd_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline double Sub(double a, double b) { return CONVEYOR_EXPR_F32(a - b, __dsub_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline double Mul(double a, double b) { return CONVEYOR_EXPR_F32(a * b, __dmul_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline double Div(double a, double b) { return CONVEYOR_EXPR_F32(a / b, __ddiv_rn(a, b)); }
CONVEYOR_HOST_DEVICE inline double Sqrt(double a) { return CONVEYOR_EXPR_F32(std::sqrt(a), __dsqrt_rn(a)); }

#undef CONVEYOR_EXPR_F32

// Two's complement wrap of an int64 to `type` (bool: nonzero).
CONVEYOR_HOST_DEVICE inline int64_t Wrap(int64_t v, DType type) {
  switch (type) {
    case DType::kBool: return v != 0;
    case DType::kUInt8: return static_cast<uint8_t>(v);
    case DType::kInt8: return static_cast<int8_t>(v);
    case DType::kUInt16: return static_cast<uint16_t>(v);
    case DType::kInt16: return static_cast<int16_t>(v);
    case DType::kInt32: return static_cast<int32_t>(v);
    default: return v;
  }
}

CONVEYOR_HOST_DEVICE inline int64_t IntFloorDiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));  // INT64_MIN / -1 wraps
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

CONVEYOR_HOST_DEVICE inline int64_t IntMod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

CONVEYOR_HOST_DEVICE inline int64_t IntPow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  while (e > 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<int64_t>(result);
}

template <typename F>
CONVEYOR_HOST_DEVICE inline F FloatMod(F a, F b) {
  const F r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? Add(r, b) : r;
}

template <typename F>
CONVEYOR_HOST_DEVICE inline F Min(F a, F b) {
  return (a < b || a != a) ? a : b;
}
template <typename F>
CONVEYOR_HOST_DEVICE inline F Max(F a, F b) {
  return (a > b || a != a) ? a : b;
}

// a op b for the floating classes (F: float or double).
template <typename F>
CONVEYOR_HOST_DEVICE inline F FloatBinary(ExprOp op, F a, F b) {
  switch (op) {
    case ExprOp::kAdd: return Add(a, b);
    case ExprOp::kSub: return Sub(a, b);
    case ExprOp::kMul: return Mul(a, b);
    case ExprOp::kDiv: return Div(a, b);
    case ExprOp::kFloorDiv: return std::floor(Div(a, b));
    case ExprOp::kMod: return FloatMod(a, b);
    case ExprOp::kPow: return std::pow(a, b);
    case ExprOp::kMin: return Min(a, b);
    default: return Max(a, b);
  }
}

template <typename F>
CONVEYOR_HOST_DEVICE inline F FloatUnary(ExprOp op, F a) {
  switch (op) {
    case ExprOp::kNeg: return -a;
    case ExprOp::kAbs: return std::fabs(a);
    case ExprOp::kFloor: return std::floor(a);
    case ExprOp::kCeil: return std::ceil(a);
    case ExprOp::kRound: return std::rint(a);
    case ExprOp::kSqrt: return Sqrt(a);
    case ExprOp::kExp: return std::exp(a);
    default: return std::log(a);
  }
}

CONVEYOR_HOST_DEVICE inline int64_t IntBinary(ExprOp op, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case ExprOp::kAdd: return static_cast<int64_t>(ua + ub);
    case ExprOp::kSub: return static_cast<int64_t>(ua - ub);
    case ExprOp::kMul: return static_cast<int64_t>(ua * ub);
    case ExprOp::kFloorDiv: return IntFloorDiv(a, b);
    case ExprOp::kMod: return IntMod(a, b);
    case ExprOp::kPow: return IntPow(a, b);
    case ExprOp::kMin: return a < b ? a : b;
    default: return a > b ? a : b;
  }
}

template <typename T>
CONVEYOR_HOST_DEVICE inline bool Compare(ExprOp op, T a, T b) {
  switch (op) {
    case ExprOp::kEq: return a == b;
    case ExprOp::kNe: return a != b;
    case ExprOp::kLt: return a < b;
    case ExprOp::kLe: return a <= b;
    case ExprOp::kGt: return a > b;
    default: return a >= b;
  }
}

// `v` of class `from` as class `to` (`type`: the target dtype; bool: nonzero).
CONVEYOR_HOST_DEVICE inline ExprValue Convert(ExprValue v, ExprClass from, ExprClass to, DType type) {
  ExprValue r;
  r.i = 0;
  if (type == DType::kBool) {
    r.i = from == ExprClass::kInt ? v.i != 0 : from == ExprClass::kF32 ? v.f != 0 : v.d != 0;
  } else if (to == ExprClass::kF32) {
    r.f = from == ExprClass::kInt ? static_cast<float>(v.i) : static_cast<float>(v.d);
  } else {
    r.d = from == ExprClass::kInt ? static_cast<double>(v.i) : static_cast<double>(v.f);
  }
  return r;
}

CONVEYOR_HOST_DEVICE inline void Apply(const ExprInstr& in, ExprValue* stack, int& sp) {
  if (in.op == ExprOp::kConvert) {
    stack[sp - 1] = Convert(stack[sp - 1], static_cast<ExprClass>(in.arg), in.cls, in.type);
    return;
  }
  if (in.op == ExprOp::kSelect) {
    sp -= 2;
    stack[sp - 1] = stack[sp - 1].i ? stack[sp] : stack[sp + 1];
    return;
  }
  ExprValue& a = stack[in.op >= ExprOp::kAdd ? sp - 2 : sp - 1];
  if (in.op < ExprOp::kAdd) {  // unary
    if (in.cls == ExprClass::kF32) {
      a.f = FloatUnary(in.op, a.f);
    } else if (in.cls == ExprClass::kF64) {
      a.d = FloatUnary(in.op, a.d);
    } else {
      const int64_t v = in.op == ExprOp::kNeg ? static_cast<int64_t>(0 - static_cast<uint64_t>(a.i))
                                              : (a.i < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)) : a.i);
      a.i = Wrap(v, in.type);
    }
    return;
  }
  const ExprValue b = stack[--sp];
  if (in.op >= ExprOp::kEq) {
    const bool r = in.cls == ExprClass::kF32   ? Compare(in.op, a.f, b.f)
                   : in.cls == ExprClass::kF64 ? Compare(in.op, a.d, b.d)
                                               : Compare(in.op, a.i, b.i);
    a.i = r;
  } else if (in.cls == ExprClass::kF32) {
    a.f = FloatBinary(in.op, a.f, b.f);
  } else if (in.cls == ExprClass::kF64) {
    a.d = FloatBinary(in.op, a.d, b.d);
  } else {
    a.i = Wrap(IntBinary(in.op, a.i, b.i), in.type);
  }
}

// Runs `program` for one element. `load(k)` returns input k's element as an ExprValue of its
// class; `scalars` are the sample's s0..s3.
template <typename Load>
CONVEYOR_HOST_DEVICE inline ExprValue Evaluate(const ExprProgram& program, const float* scalars, Load&& load) {
  ExprValue stack[kMaxExprStack];
  int sp = 0;
  for (int pc = 0; pc < program.size; ++pc) {
    const ExprInstr in = program.code[pc];
    switch (in.op) {
      case ExprOp::kInput: stack[sp++] = load(in.arg); break;
      case ExprOp::kScalar: stack[sp].i = 0; stack[sp++].f = scalars[in.arg]; break;
      case ExprOp::kConst: stack[sp++] = program.consts[in.arg]; break;
      default: Apply(in, stack, sp); break;
    }
  }
  return stack[0];
}

}  // namespace conveyor::ops::expr
