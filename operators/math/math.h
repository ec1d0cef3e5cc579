// math: evaluates a compiled expression (expr_program.h) element by element over broadcast inputs.
// Plain functions, no CUDA syntax; the GPU runs the whole batch in one launch.
//
// | what      | contract                                                                       |
// |-----------|--------------------------------------------------------------------------------|
// | inputs    | up to kMaxMathInputs, any dtype each; shapes broadcast as NumPy does (right-   |
// |           | aligned; extent 1 or a missing dim repeats), so a per-sample scalar ([] or [1])|
// |           | meets any tensor                                                               |
// | plan      | PlanBroadcast drops extent-1 dims and merges dims every operand walks          |
// |           | contiguously: same-shape inputs read at the output index, scalars at 0, others |
// |           | through per-dim strides                                                        |
// | output    | the program's out_type, written with the saturating conversions of            |
// |           | operators/tensor/saturate.h                                                    |
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/tensor/shape.h"
#include "operators/math/expr_program.h"

namespace conveyor::ops {

enum MathOperandMode : int32_t { kOperandSame = 0, kOperandScalar = 1, kOperandStrided = 2 };

struct MathOperand {
  const void* data;
  int32_t mode;  // MathOperandMode
  int32_t unused;
  int64_t strides[Shape::kMaxDims];  // elements per step of each collapsed output dim (kOperandStrided)
};

struct MathSample {
  void* out;
  int64_t count;  // output elements
  int32_t ndim;   // collapsed output dims
  int32_t strided;  // some operand is kOperandStrided: the element index is split into coordinates
  int64_t extents[Shape::kMaxDims];
  float scalars[kMaxMathScalars];
};

// The output shape of one sample whose inputs have `shapes`; fills `sample` (but out and
// scalars) and operands[0..shapes.size()) (but data). `names[k]` describes input k in messages
// (`input 1 "y" (column 9)`). Throws InvalidArgument: `cannot broadcast input 1 "y" (column 9) of
// shape (3, 5) with shape (4, 5) of the inputs before it: dim 0 is 3 there, 4 here`.
Shape PlanBroadcast(const std::vector<Shape>& shapes, const std::vector<std::string>& names, MathSample& sample,
                    MathOperand* operands);

// Elements [begin, end) of one sample (operands: its program.num_inputs operands).
void MathCpu(const ExprProgram& program, const MathSample& sample, const MathOperand* operands, int64_t begin,
             int64_t end);
// n samples, device-readable; operands of sample s at operands[s * program.num_inputs].
// `max_count_hint` (output elements per sample, from capacities) only sizes the grid.
void MathGpu(const ExprProgram& program, const MathSample* samples, const MathOperand* operands, int n,
             int64_t max_count_hint, cuda::StreamView stream);

}  // namespace conveyor::ops
