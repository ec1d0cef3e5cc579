#include "core/op/philox.h"
#include "operators/random/random.h"

namespace conveyor::ops {

void UniformCpu(const RandomSample& s, const RandomKey& key) {
  Philox rng(key.seed, key.node, key.iteration, s.sample);
  float* out = static_cast<float*>(s.out);
  for (int64_t j = 0; j < s.count; ++j) out[j] = rng.NextUniform(s.a, s.b);
}

void CoinFlipCpu(const RandomSample& s, const RandomKey& key) {
  Philox rng(key.seed, key.node, key.iteration, s.sample);
  int32_t* out = static_cast<int32_t*>(s.out);
  for (int64_t j = 0; j < s.count; ++j) out[j] = rng.NextBernoulli(s.a) ? 1 : 0;
}

}  // namespace conveyor::ops
