// The per-unit rule of noise.h, one host/device function for the CPU loop and the kernel.
#pragma once

#include <cmath>

#include "core/op/philox.h"
#include "operators/image_common/convert.h"
#include "operators/noise/noise.h"
#include "operators/random/normal.h"

namespace conveyor::ops {

// Poisson(lambda) from the generator's next draws: CDF inversion of one uniform below 20 (at most
// 200 steps), the rounded normal approximation above.
CONVEYOR_HOST_DEVICE inline float PoissonDraw(float lambda, Philox& rng) {
  if (!(lambda > 0.f)) return 0.f;
  if (lambda >= 20.f) return fmaxf(rintf(fmaf(sqrtf(lambda), StandardNormal(rng), lambda)), 0.f);
  const float x = rng.NextUniform();
  float p = expf(-lambda), cdf = p;
  int k = 0;
  while (x >= cdf && k < 200) {
    ++k;
    p = p * lambda / static_cast<float>(k);
    cdf += p;
  }
  return static_cast<float>(k);
}

// The rules for unit u of sample s, from `rng` standing at draw 2u. Gaussian and salt-and-pepper
// take exactly draws 2u and 2u+1, so the generator then stands at unit u+1's draws (the kernel
// maps units in pairs, one Philox block each); shot may take one or two.
template <typename T>
CONVEYOR_HOST_DEVICE inline void GaussianUnit(const NoiseSample& s, int64_t u, Philox& rng) {
  const T* in = static_cast<const T*>(s.in);
  static_cast<T*>(s.out)[u] = StoreFromFloat<T>(LoadAsFloat(in[u]) + fmaf(StandardNormal(rng), s.b, s.a));
}

template <typename T>
CONVEYOR_HOST_DEVICE inline void ShotUnit(const NoiseSample& s, int64_t u, Philox& rng) {
  const T* in = static_cast<const T*>(s.in);
  static_cast<T*>(s.out)[u] = StoreFromFloat<T>(s.a * PoissonDraw(fmaxf(LoadAsFloat(in[u]), 0.f) / s.a, rng));
}

template <typename T>
CONVEYOR_HOST_DEVICE inline void SaltAndPepperUnit(const NoiseSample& s, int64_t u, Philox& rng) {
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  const float u1 = rng.NextUniform(), u2 = rng.NextUniform();
  const int64_t first = u * s.channels;
  for (int c = 0; c < s.channels; ++c) {
    out[first + c] = u1 < s.a ? StoreFromFloat<T>(u2 < s.b ? s.salt : s.pepper) : in[first + c];
  }
}

template <typename T>
CONVEYOR_HOST_DEVICE inline void NoiseUnit(const NoiseSample& s, const NoiseKey& key, int64_t u) {
  Philox rng(key.seed, key.node, key.iteration, s.sample);
  rng.Seek(2 * static_cast<uint64_t>(u));
  switch (s.mode) {
    case NoiseMode::kGaussian: return GaussianUnit<T>(s, u, rng);
    case NoiseMode::kShot: return ShotUnit<T>(s, u, rng);
    case NoiseMode::kSaltAndPepper: return SaltAndPepperUnit<T>(s, u, rng);
  }
}

}  // namespace conveyor::ops
