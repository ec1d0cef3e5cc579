// Small kernels the tests launch (no CUDA syntax here: plain declarations).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::testing {

// out[i] = a * in[i] + b, for n floats; pointers are device-accessible (device, pinned-mapped).
void ScaleAddGpu(float* out, const float* in, float a, float b, size_t n, cuda::StreamView stream);
// out[i] = pattern + i for n uint32 values (writes across chunk boundaries in VirtualBuffer tests).
void IotaGpu(uint32_t* out, uint32_t pattern, size_t n, cuda::StreamView stream);
// Spins on the GPU for about `ms` milliseconds (one thread).
void SpinGpu(double ms, cuda::StreamView stream);
// Clock rate in kHz of the current device (for SpinGpu).
int ClockRateKhz();

}  // namespace conveyor::testing
