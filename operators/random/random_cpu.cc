#include <cmath>

#include "core/op/philox.h"
#include "operators/image_common/convert.h"
#include "operators/random/normal.h"
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

void NormalCpu(const RandomSample& s, const RandomKey& key, DType dtype) {
  Philox rng(key.seed, key.node, key.iteration, s.sample);
  for (int64_t j = 0; j < s.count; ++j) {
    const float v = std::fmaf(StandardNormal(rng), s.b, s.a);
    if (dtype == DType::kFloat16) {
      static_cast<Float16Bits*>(s.out)[j] = StoreFromFloat<Float16Bits>(v);
    } else {
      static_cast<float*>(s.out)[j] = v;
    }
  }
}

}  // namespace conveyor::ops
