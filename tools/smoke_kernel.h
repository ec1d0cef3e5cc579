#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::tools {
// out[i] = a * in[i] + b on `stream`; both pointers device-accessible.
void AffineGpu(float* out, const float* in, float a, float b, int64_t n, cuda::StreamView stream);
}  // namespace conveyor::tools
