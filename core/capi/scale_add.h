// The C API's demonstrator kernel: out = a * in + b over strided float32 views (no CUDA syntax
// here, so plain C++ can call it).
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::capi {

inline constexpr int kMaxStridedDims = 8;

// A device-accessible float32 view; strides in elements (any sign), row-major iteration order.
struct StridedF32 {
  float* data = nullptr;
  int ndim = 0;
  int64_t shape[kMaxStridedDims] = {};
  int64_t strides[kMaxStridedDims] = {};
};

// Both views must have the same shape. Launches on `stream` only; nothing for zero elements.
void ScaleAddF32(const StridedF32& out, const StridedF32& in, float a, float b, cuda::StreamView stream);

}  // namespace conveyor::capi
