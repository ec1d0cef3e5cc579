#include <algorithm>

#include "core/cuda/check.h"
#include "core/op/philox.h"
#include "operators/image_common/convert.h"
#include "operators/random/normal.h"
#include "operators/random/random.h"

namespace conveyor::ops {
namespace {

// blockIdx.y: sample; x-threads stride over its elements. Each thread seeks its own position, so
// the values match the sequential CPU loop.
template <bool kCoin>
__global__ void RandomKernel(const RandomKey* key_ptr, const RandomSample* samples) {
  const RandomSample s = samples[blockIdx.y];
  const RandomKey key = *key_ptr;
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < s.count;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Philox rng(key.seed, key.node, key.iteration, s.sample);
    rng.Seek(static_cast<uint64_t>(j));
    if constexpr (kCoin) {
      static_cast<int32_t*>(s.out)[j] = rng.NextBernoulli(s.a) ? 1 : 0;
    } else {
      static_cast<float*>(s.out)[j] = rng.NextUniform(s.a, s.b);
    }
  }
}

// Element j seeks to uniform 2j, as the CPU loop reaches it.
template <typename Out>
__global__ void NormalKernel(const RandomKey* key_ptr, const RandomSample* samples) {
  const RandomSample s = samples[blockIdx.y];
  const RandomKey key = *key_ptr;
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < s.count;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    Philox rng(key.seed, key.node, key.iteration, s.sample);
    rng.Seek(2 * static_cast<uint64_t>(j));
    static_cast<Out*>(s.out)[j] = StoreFromFloat<Out>(fmaf(StandardNormal(rng), s.b, s.a));
  }
}

template <bool kCoin>
void Launch(const RandomKey* key, const RandomSample* samples, int n, int64_t max_count,
                cuda::StreamView stream) {
  if (n == 0 || max_count == 0) return;
  constexpr int kThreads = 128;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>((max_count + kThreads - 1) / kThreads, 1024)),
                  static_cast<unsigned>(n));
  RandomKernel<kCoin><<<grid, kThreads, 0, stream.get()>>>(key, samples);
  CONVEYOR_CHECK_LAUNCH(kCoin ? "CoinFlipKernel" : "UniformKernel");
}

}  // namespace

void NormalGpu(const RandomKey* key, const RandomSample* samples, int n, int64_t max_count, DType dtype,
               cuda::StreamView stream) {
  if (n == 0 || max_count == 0) return;
  constexpr int kThreads = 128;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>((max_count + kThreads - 1) / kThreads, 1024)),
                  static_cast<unsigned>(n));
  if (dtype == DType::kFloat16) {
    NormalKernel<Float16Bits><<<grid, kThreads, 0, stream.get()>>>(key, samples);
  } else {
    NormalKernel<float><<<grid, kThreads, 0, stream.get()>>>(key, samples);
  }
  CONVEYOR_CHECK_LAUNCH("NormalKernel");
}

void UniformGpu(const RandomKey* key, const RandomSample* samples, int n, int64_t max_count,
                cuda::StreamView stream) {
  Launch<false>(key, samples, n, max_count, stream);
}

void CoinFlipGpu(const RandomKey* key, const RandomSample* samples, int n, int64_t max_count,
                cuda::StreamView stream) {
  Launch<true>(key, samples, n, max_count, stream);
}

}  // namespace conveyor::ops
