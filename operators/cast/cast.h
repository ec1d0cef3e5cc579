// Cast kernels: element-wise dtype conversion (plain functions, no CUDA syntax).
//
// | dtypes in and out                                | rounding                                   |
// |--------------------------------------------------|--------------------------------------------|
// | bool, (u)int8/16, int32, int64, float32, float64 | C++ static_cast (float→int truncates; out  |
// |                                                  | of range is undefined, as in C++)          |
// | to float16 / bfloat16                            | via float32, then round to nearest even    |
// |                                                  | (__float2half_rn / __float2bfloat16_rn);   |
// |                                                  | float64 and int64 round twice              |
// | from float16 / bfloat16                          | exact to float32, then static_cast         |
//
// CPU (core/tensor/half.h) and GPU (cuda_fp16.h) give bit-identical results.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

// One sample of a batched cast.
struct CastSample {
  const void* in;
  void* out;
  int64_t count;  // elements
};

// `n` contiguous elements; `in` and `out` are host addresses.
void CastCpu(void* out, DType out_type, const void* in, DType in_type, int64_t n);
// One launch for the batch: `samples` are n device-readable descriptors; `max_count_hint`
// (elements per sample from the output capacity) only sizes the grid.
void CastGpu(const CastSample* samples, int n, int64_t max_count_hint, DType out_type, DType in_type,
             cuda::StreamView stream);

}  // namespace conveyor::ops
