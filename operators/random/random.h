// Random generators (plain functions; no CUDA syntax). Draw j of sample i comes from
// Philox(seed, node, iteration, i) at position j (core/op/philox.h), so the CPU and GPU versions
// give bit-identical values.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

// Where the draws of one sample go and how they are keyed.
struct RandomSample {
  void* out;          // host (CPU) or device-accessible (GPU) address
  int64_t count;      // elements
  uint32_t sample;    // the sample index in the key
  float a, b;         // uniform: [a, b); coin flip: probability a; normal: mean a, stddev b
};

struct RandomKey {
  uint64_t seed;
  uint32_t node;
  uint64_t iteration;
};

// float32 uniform draws in [a, b).
void UniformCpu(const RandomSample& s, const RandomKey& key);
// int32 0/1 draws, 1 with probability a.
void CoinFlipCpu(const RandomSample& s, const RandomKey& key);

// Normal draws (operators/random/normal.h) as float32 or float16 (`dtype`).
void NormalCpu(const RandomSample& s, const RandomKey& key, DType dtype);

// `key` and `samples` (n descriptors) are in device-accessible memory (pinned-mapped or device):
// the kernels read the key and per-sample parameters from there, never from launch arguments, so
// a captured launch replays with new values.
void UniformGpu(const RandomKey* key, const RandomSample* samples, int n, int64_t max_count,
                cuda::StreamView stream);
void CoinFlipGpu(const RandomKey* key, const RandomSample* samples, int n, int64_t max_count,
                cuda::StreamView stream);
void NormalGpu(const RandomKey* key, const RandomSample* samples, int n, int64_t max_count, DType dtype,
               cuda::StreamView stream);

}  // namespace conveyor::ops
