// From an expression tree to an ExprProgram: names bound to inputs and scalar arguments, DALI's
// type promotion applied (expr_types.h), conversions made explicit, postfix order. Errors are
// ExprErrors pointing at the column of the node at fault.
//
// | name / call                     | result type                                               |
// |---------------------------------|-----------------------------------------------------------|
// | input name                      | the input's dtype                                         |
// | s0..s3 (per-sample scalars)     | float32                                                   |
// | 3 / 3.0                         | int32 (int64 beyond) / float32                            |
// | a + b, a - b, a * b, a // b,    | PromoteTypes(a, b); two bools only for *, min, max, where |
// | a % b, a ** b, pow, min, max    |                                                           |
// | a / b                           | float64 if the promoted type is, else float32             |
// | == != < <= > >=                 | bool (compared in the promoted type)                      |
// | -a, abs(a)                      | a's type (no unary minus of a bool)                       |
// | floor, ceil, round (half even)  | a's type (integers: unchanged)                            |
// | sqrt, exp, log                  | float types kept; integers and bool: float32              |
// | clamp(x, lo, hi)                | promoted over the three, left to right; min(max(x,lo),hi) |
// | where(c, a, b)                  | PromoteTypes(a, b); c taken as bool (nonzero)             |
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor/dtype.h"
#include "operators/math/expr_parser.h"
#include "operators/math/expr_program.h"

namespace conveyor::ops {

struct ExprBindings {
  std::vector<std::string> inputs;   // the name of input k
  std::vector<std::string> scalars;  // the name of scalar argument s
};

// Which inputs and scalars the expression reads: the column where each first appears, 0 when
// it does not.
struct ExprUse {
  std::vector<int> inputs;
  std::vector<int> scalars;
};

// Checks every name and call (unknown names and functions with a suggestion, argument counts).
// Throws ExprError.
ExprUse ResolveNames(const ExprTree& tree, const ExprBindings& bindings);

// Types and code for these input dtypes; `out_type`: the output dtype when forced. Throws
// ExprError (type rules, size limits). The tree must have passed ResolveNames.
ExprProgram CompileExpression(const ExprTree& tree, const ExprBindings& bindings, const std::vector<DType>& input_types,
                              std::optional<DType> out_type);

}  // namespace conveyor::ops
