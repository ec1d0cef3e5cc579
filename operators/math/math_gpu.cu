#include "core/cuda/check.h"
#include "operators/image_common/vec_io.cuh"
#include "operators/math/math.h"
#include "operators/math/math_element.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// grid (blocks per sample, samples): one thread per output element, grid-stride. The program is
// a __grid_constant__ parameter: every thread of a warp reads the same instruction from the
// constant bank, so the interpreter's switch never diverges.
__global__ void MathKernel(const __grid_constant__ ExprProgram program, const MathSample* samples,
                           const MathOperand* operands) {
  const MathSample sample = samples[blockIdx.y];
  const MathOperand* ops = operands + static_cast<int64_t>(blockIdx.y) * program.num_inputs;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; j < sample.count; j += stride) {
    expr::EvaluateElement(program, sample, ops, j);
  }
}

}  // namespace

void MathGpu(const ExprProgram& program, const MathSample* samples, const MathOperand* operands, int n,
             int64_t max_count_hint, cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_count_hint, kThreads * 4), static_cast<unsigned>(n));
  MathKernel<<<grid, kThreads, 0, stream.get()>>>(program, samples, operands);
  CONVEYOR_CHECK_LAUNCH("MathKernel");
}

}  // namespace conveyor::ops
