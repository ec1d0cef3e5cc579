// lookup_table: out[i] = table[in[i]] when 0 <= in[i] < size, else the default. Plain functions,
// no CUDA syntax; CPU and GPU write the same bits.
//
// | input                                 | table                                              |
// |---------------------------------------|----------------------------------------------------|
// | uint8, int8, uint16, int16, int32,    | `size` entries of the output dtype (raw bits of    |
// | int64 keys, any shape                 | 1, 2, 4 or 8 bytes): host memory for the CPU,      |
// |                                       | device memory for the GPU                          |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

struct LookupSample {
  const void* in;
  void* out;
  int64_t count;  // elements
  const void* entries;
  int64_t size;
  uint64_t default_bits;  // the output dtype's bits, in the low bytes
  int64_t out_size;       // bytes per output element
};

void LookupCpu(const LookupSample& sample, DType in_type);
// `samples`: n device-readable descriptors; `max_count_hint` (from capacities) only sizes the grid.
void LookupGpu(const LookupSample* samples, int n, int64_t max_count_hint, DType in_type, cuda::StreamView stream);

}  // namespace conveyor::ops
