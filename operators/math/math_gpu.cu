#include "core/cuda/check.h"
#include "operators/image_common/byte_lut.cuh"
#include "operators/image_common/vec_io.cuh"
#include "operators/math/math.h"
#include "operators/math/math_element.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;
// Input bytes per block of the table kernel: 32 per thread, so the block's 256 interpreted
// evaluations (one per table entry) cost a fraction of its memory traffic.
constexpr int64_t kTableElementsPerBlock = int64_t{kThreads} * 32;

// Every element of one sample by the interpreter, grid-stride over the block row.
__device__ void EvaluateSample(const ExprProgram& program, const MathSample& sample, const MathOperand* ops) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; j < sample.count; j += stride) {
    expr::EvaluateElement(program, sample, ops, j);
  }
}

// grid (blocks per sample, samples): one thread per output element, grid-stride. The program is
// a __grid_constant__ parameter: every thread of a warp reads the same instruction from the
// constant bank, so the interpreter's switch never diverges.
__global__ void MathKernel(const __grid_constant__ ExprProgram program, const MathSample* samples,
                           const MathOperand* operands) {
  const MathSample sample = samples[blockIdx.y];
  EvaluateSample(program, sample, operands + static_cast<int64_t>(blockIdx.y) * program.num_inputs);
}

// A program of one 1-byte input (uint8, int8, bool): its result depends only on the input byte
// and the sample's scalars, so each block interprets the program once per byte value into a
// 256-entry table (Word: raw words of the output dtype's size, written by the same Store) and maps
// its elements through it. Same bits as MathKernel by construction. An input that is not read at
// the output index (a broadcast scalar) takes the interpreter.
template <typename Word>
__global__ void MathTableKernel(const __grid_constant__ ExprProgram program, const MathSample* samples,
                                const MathOperand* operands) {
  const MathSample sample = samples[blockIdx.y];
  const MathOperand& input = operands[blockIdx.y];
  if (input.mode != kOperandSame) return EvaluateSample(program, sample, &input);
  const auto* in = static_cast<const uint8_t*>(input.data);
  if (!LutBlockHasWork(in, sample.count)) return;
  __shared__ Word lut[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) {
    const uint8_t byte = static_cast<uint8_t>(b);
    const ExprValue v = expr::Evaluate(program, sample.scalars, [&](int) { return expr::Load(&byte, 0, program.input_types[0]); });
    expr::Store(lut, b, program.out_type, program.result_class, v);
  }
  __syncthreads();
  ApplyByteLut(in, static_cast<Word*>(sample.out), sample.count, lut);
}

template <typename Word>
void LaunchTable(const ExprProgram& program, const MathSample* samples, const MathOperand* operands, int n,
                 int64_t max_count_hint, cudaStream_t stream) {
  const dim3 grid(BlocksPerSample(max_count_hint, kTableElementsPerBlock), static_cast<unsigned>(n));
  MathTableKernel<Word><<<grid, kThreads, 0, stream>>>(program, samples, operands);
}

}  // namespace

void MathGpu(const ExprProgram& program, const MathSample* samples, const MathOperand* operands, int n,
             int64_t max_count_hint, cuda::StreamView stream) {
  if (n == 0) return;
  if (program.num_inputs == 1 && DTypeSize(program.input_types[0]) == 1) {
    switch (DTypeSize(program.out_type)) {
      case 1: LaunchTable<uint8_t>(program, samples, operands, n, max_count_hint, stream.get()); break;
      case 2: LaunchTable<uint16_t>(program, samples, operands, n, max_count_hint, stream.get()); break;
      case 4: LaunchTable<uint32_t>(program, samples, operands, n, max_count_hint, stream.get()); break;
      default: LaunchTable<uint64_t>(program, samples, operands, n, max_count_hint, stream.get()); break;
    }
    CONVEYOR_CHECK_LAUNCH("MathTableKernel");
    return;
  }
  const dim3 grid(BlocksPerSample(max_count_hint, kThreads * 4), static_cast<unsigned>(n));
  MathKernel<<<grid, kThreads, 0, stream.get()>>>(program, samples, operands);
  CONVEYOR_CHECK_LAUNCH("MathKernel");
}

}  // namespace conveyor::ops
