#include <algorithm>

#include "core/cuda/check.h"
#include "operators/copy/copy.h"

namespace conveyor::ops {
namespace {

// blockIdx.y = sample; blocks along x stride over its bytes, 16 at a time, then the tail.
__global__ void CopySamplesKernel(const SampleCopy* descs) {
  const SampleCopy d = descs[blockIdx.y];
  const int64_t vectors = d.bytes / 16;
  const uint4* src = static_cast<const uint4*>(d.src);
  uint4* dst = static_cast<uint4*>(d.dst);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < vectors; i += stride) {
    dst[i] = src[i];
  }
  const int64_t tail = vectors * 16 + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (tail < d.bytes) static_cast<char*>(d.dst)[tail] = static_cast<const char*>(d.src)[tail];
}

}  // namespace

void CopySamplesGpu(const SampleCopy* descriptors, int num_samples, int64_t capacity_bytes, cuda::StreamView stream) {
  if (num_samples == 0) return;
  constexpr int kThreads = 256;
  // Enough blocks for the largest sample the capacity allows, spread over the samples; at least
  // one block per sample (the tail needs < 16 threads of block 0).
  const int64_t per_sample = std::max<int64_t>(capacity_bytes / num_samples / 16, 1);
  const int blocks = static_cast<int>(std::clamp<int64_t>((per_sample + kThreads * 4 - 1) / (kThreads * 4), 1, 512));
  CopySamplesKernel<<<dim3(blocks, num_samples), kThreads, 0, stream.get()>>>(descriptors);
  CONVEYOR_CHECK_LAUNCH("CopySamplesKernel");
}

}  // namespace conveyor::ops
