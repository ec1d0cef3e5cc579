// Kernels behind the test operators (plain declarations; the CUDA syntax is in the .cu).
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::testing {

struct AugmentDesc {
  const float* in;
  float* out;
  int64_t n;
  float scale;
  float bias;
};

// One grid of (blocks, num_samples): sample s processes descs[s] (a device-accessible pointer,
// pinned and mapped). The launch shape depends only on num_samples and `capacity` (elements the
// batch's buffer holds), never on sample sizes.
void AugmentGpu(const AugmentDesc* descs, int num_samples, int64_t capacity, cuda::StreamView stream);
// out[i] = in[i] + add, n floats.
void AddGpu(float* out, const float* in, float add, int64_t n, cuda::StreamView stream);
// out[i] = float(in[i]) + add: n bytes in device memory to n floats.
void BytesToFloatGpu(float* out, const uint8_t* in, float add, int64_t n, cuda::StreamView stream);

}  // namespace conveyor::testing
