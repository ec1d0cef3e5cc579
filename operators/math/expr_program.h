// The compiled form of a math expression: a postfix program over a small value stack, the same
// bytes for the CPU reference and the GPU kernel (passed to the kernel by value: one launch per
// batch, no intermediate tensors). Plain header.
//
// Values on the stack live in one of three compute classes:
//
// | class | holds                                           | after each instruction              |
// |-------|-------------------------------------------------|-------------------------------------|
// | kInt  | bool, uint8..int64 values, as int64             | wrapped to the instruction's `type` |
// |       |                                                 | (two's complement, as C++ casts)    |
// | kF32  | float16, bfloat16 and float32 values, as float  | - (half types round only on store)  |
// | kF64  | float64 values                                  | -                                   |
//
// The compiler (expr_compiler.h) has already applied DALI's type promotion: operands of a binary
// instruction arrive in its class (explicit kConvert instructions), so the evaluator
// (expr_eval.h) never decides a type.
#pragma once

#include <cstdint>

#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kMaxExprCode = 128;   // instructions
inline constexpr int kMaxExprConsts = 32;  // literals
inline constexpr int kMaxExprStack = 16;   // values live at once
inline constexpr int kMaxMathInputs = 8;   // tensor inputs
inline constexpr int kMaxMathScalars = 4;  // per-sample scalar arguments s0..s3

enum class ExprClass : uint8_t { kInt, kF32, kF64 };

enum class ExprOp : uint8_t {
  // push: arg = input, scalar or constant index
  kInput,
  kScalar,
  kConst,
  // the top value from class `arg` to the instruction's class (int → float, float32 → float64,
  // any → bool when `type` is bool)
  kConvert,
  // unary, in place
  kNeg,
  kAbs,
  kFloor,
  kCeil,
  kRound,
  kSqrt,
  kExp,
  kLog,
  // binary: pops b, then a; pushes a op b
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kMin,
  kMax,
  // comparisons of two values of the class; push a bool (kInt)
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  // pops b, a, then the bool condition c: pushes c ? a : b
  kSelect,
};

struct ExprInstr {
  ExprOp op;
  ExprClass cls;  // the class the instruction computes in (comparisons: the operands')
  DType type;     // the result's dtype (kInt: what results wrap to)
  uint8_t arg;
};

union ExprValue {
  int64_t i;
  float f;
  double d;
};

struct ExprProgram {
  int32_t size = 0;
  int32_t num_inputs = 0;
  ExprInstr code[kMaxExprCode];
  ExprValue consts[kMaxExprConsts];
  DType input_types[kMaxMathInputs];
  DType out_type = DType::kFloat32;  // what the output holds (the result's type, or `dtype`)
  ExprClass result_class = ExprClass::kF32;
};

}  // namespace conveyor::ops
