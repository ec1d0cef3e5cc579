// one_hot: out[o..., c, i...] = on if in[o..., i...] == c else off, for c in [0, classes) — the
// class axis inserted at `axis` (outer = elements before it, inner = after). Plain functions, no
// CUDA syntax; CPU and GPU write the same bits.
//
// | input                                | output                                           |
// |--------------------------------------|--------------------------------------------------|
// | uint8, int8, uint16, int16, int32,   | on/off given as raw bits of the output dtype (1, |
// | int64 class indices                  | 2, 4 or 8 bytes); an index outside [0, classes)  |
// |                                      | gives a row of off values                        |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

struct OneHotSample {
  const void* in;
  void* out;
  int64_t outer;  // input elements = outer * inner; output elements = outer * classes * inner
  int64_t inner;
  int64_t classes;
  uint64_t on;   // the output dtype's bits, in the low bytes
  uint64_t off;
  int64_t out_size;  // bytes per output element
};

void OneHotCpu(const OneHotSample& sample, DType in_type);
// `samples`: n device-readable descriptors; `max_count_hint` (from capacities) only sizes the grid.
void OneHotGpu(const OneHotSample* samples, int n, int64_t max_count_hint, DType in_type, cuda::StreamView stream);

}  // namespace conveyor::ops
