// Type rules of math expressions: DALI's promotion table, and the result types of operators and
// functions (docs/operators_tensor.md, "Types").
//
// | operand      | operand      | result                                                       |
// |--------------|--------------|--------------------------------------------------------------|
// | T            | T            | T                                                            |
// | floatX       | T (no float) | floatX                                                       |
// | floatX       | floatY       | float of max(X, Y); float16 with bfloat16: float32           |
// | intX / uintX | intY / uintY | int / uint of max(X, Y)                                      |
// | intX         | uintY        | intX if X > Y, else int of 2Y (bool counts as uint1)          |
#pragma once

#include "core/tensor/dtype.h"
#include "operators/math/expr_program.h"

namespace conveyor::ops {

// Commutative; bool is the smallest unsigned type.
DType PromoteTypes(DType a, DType b);

// The class a value of `type` computes in.
ExprClass ClassOf(DType type);
bool IsIntegral(DType type);  // bool and the integer types

// `/` and the float functions on integers: float64 stays, every other type gives float32 ("/"
// always; sqrt/exp/log keep a float16/bfloat16/float32 operand's type).
DType TrueDivisionType(DType promoted);
DType FloatFunctionType(DType operand);

}  // namespace conveyor::ops
