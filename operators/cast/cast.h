// Cast kernels: element-wise dtype conversion of a whole batch (plain functions, no CUDA syntax).
//
// | dtypes in and out                                   | rounding                       |
// |-----------------------------------------------------|--------------------------------|
// | bool, (u)int8/16, int32, int64, float32, float64    | C++ static_cast (float→int     |
// | (float16/bfloat16 not yet: InvalidArgument)         | truncates; out of range is UB) |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

// Throws InvalidArgument naming the dtype when a side is float16/bfloat16.
void CheckCastDTypes(DType in, DType out);
// `n` contiguous elements; `in` and `out` are host addresses.
void CastCpu(void* out, DType out_type, const void* in, DType in_type, int64_t n);
// Device-accessible addresses; queued on `stream`.
void CastGpu(void* out, DType out_type, const void* in, DType in_type, int64_t n, cuda::StreamView stream);

}  // namespace conveyor::ops
