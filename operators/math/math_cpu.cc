#include "operators/math/math.h"
#include "operators/math/math_element.h"

namespace conveyor::ops {

void MathCpu(const ExprProgram& program, const MathSample& sample, const MathOperand* operands, int64_t begin,
             int64_t end) {
  for (int64_t j = begin; j < end; ++j) expr::EvaluateElement(program, sample, operands, j);
}

}  // namespace conveyor::ops
