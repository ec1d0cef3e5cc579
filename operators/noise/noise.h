// Additive and impulse noise keyed by the counter-based RNG: unit u of sample i (an element, or
// a pixel for salt-and-pepper without per_channel) uses draws 2u and 2u+1 of Philox(seed, node,
// iteration, i), so a kernel thread seeks to its unit and the values match the CPU loop.
// Plain functions, no CUDA syntax.
//
// | op                     | rule (float32, then convert.h: uint8 clamped, RNE)                     |
// |------------------------|-------------------------------------------------------------------------|
// | noise.gaussian         | out = in + fmaf(z, stddev, mean), z = StandardNormal (random/normal.h)  |
// | noise.salt_and_pepper  | u1 < prob ? (u2 < salt_vs_pepper ? salt_val : pepper_val) : in          |
// | noise.shot             | out = factor * k, k ~ Poisson(λ = max(in, 0) / factor): λ < 20 by CDF   |
// |                        | inversion of u1 (expf), else rint(λ + sqrt(λ) z), clamped at 0          |
//
// salt_and_pepper is bit-identical on CPU and GPU (exact uniforms); gaussian differs only through
// logf/cosf (normal.h: |Δz| ≤ 1e-5 at |z| < 5.8): float outputs within 1e-5 * stddev, uint8
// outputs within 1 (a value at a rounding boundary). shot: expf/logf/cosf differ likewise, so a
// value at a CDF step may land one step apart: GPU within factor (+1 for uint8 rounding) of the CPU.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

enum class NoiseMode : int32_t { kGaussian = 0, kSaltAndPepper = 1, kShot = 2 };

struct NoiseKey {
  uint64_t seed;
  uint32_t node;
  uint64_t iteration;
};

struct NoiseSample {
  const void* in;
  void* out;
  int64_t units;     // elements, or pixels (salt-and-pepper, not per channel)
  int32_t channels;  // elements per unit
  uint32_t sample;   // the sample index in the key
  NoiseMode mode;
  float a, b;        // gaussian: mean, stddev; salt-and-pepper: prob, salt_vs_pepper; shot: factor
  float salt, pepper;
};

void NoiseCpu(const NoiseSample& s, const NoiseKey& key, DType type);
// `key` and `samples` (n descriptors) are device-readable; `max_units_hint` sizes the grid.
void NoiseGpu(const NoiseKey* key, const NoiseSample* samples, int n, int64_t max_units_hint, DType type,
              cuda::StreamView stream);

}  // namespace conveyor::ops
