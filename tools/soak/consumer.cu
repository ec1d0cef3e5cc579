#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda/check.h"
#include "tools/soak/consumer.h"

namespace conveyor::tools {
namespace {
__global__ void ConsumeKernel(const uint32_t* words, size_t n_words, const uint8_t* tail, int n_tail,
                              unsigned long long* checksum) {
  unsigned long long sum = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n_words; i += size_t(gridDim.x) * blockDim.x) {
    sum += words[i];
  }
  if (blockIdx.x == 0 && threadIdx.x < static_cast<unsigned>(n_tail)) sum += tail[threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0 && sum != 0) atomicAdd(checksum, sum);
}
}  // namespace

void ConsumeGpu(const void* data, size_t bytes, unsigned long long* checksum, cuda::StreamView stream) {
  if (bytes == 0) return;
  const size_t n_words = bytes / 4;
  const int n_tail = static_cast<int>(bytes % 4);
  const auto* base = static_cast<const uint8_t*>(data);
  const unsigned blocks = static_cast<unsigned>(std::min<size_t>((n_words + 255) / 256 + 1, 1024));
  ConsumeKernel<<<blocks, 256, 0, stream.get()>>>(reinterpret_cast<const uint32_t*>(data), n_words, base + n_words * 4,
                                                  n_tail, checksum);
  CONVEYOR_CHECK_LAUNCH("ConsumeKernel");
}

}  // namespace conveyor::tools
