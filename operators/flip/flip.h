// flip: mirrors each sample along W (horizontal) and/or H (vertical). Plain functions; no CUDA
// syntax.
//
// | what     | contract                                                                   |
// |----------|----------------------------------------------------------------------------|
// | layouts  | HWC, CHW, HW, FHWC, FCHW; the sample is seen as planes x H x W x inner   |
// |          | (HWC: 1 x H x W x C, CHW: C x H x W x 1, FHWC: F x H x W x C, FCHW: F*C x H |
// |          | x W x 1), dense row-major                                                   |
// | dtypes   | any (elements of 1, 2, 4 or 8 bytes are moved, never converted)             |
// | output   | same shape, dtype and layout; out[p][y][x] = in[p][vert ? H-1-y : y]        |
// |          | [horiz ? W-1-x : x]                                                         |
// | GPU      | one launch per batch, descriptors in device memory, grid from the output    |
// |          | capacity and sample count                                                   |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::ops {

struct FlipDesc {
  const void* in;
  void* out;
  int64_t planes, height, width, inner;  // elements: planes * height * width * inner
  int horizontal, vertical;              // 0 or 1
};

void FlipCpu(const FlipDesc& d, int element_size);

// `descs`: device-readable array of `num_samples` descriptors with device pointers.
void FlipGpu(const FlipDesc* descs, int num_samples, int64_t capacity_bytes, int element_size, cuda::StreamView stream);

}  // namespace conveyor::ops
