// The nvJPEG2000 path's one kernel: 8-bit planes as nvJPEG2000 decodes them (planar, 1 gray or 3
// RGB components) into the decoder's HWC output. Plain functions; no CUDA syntax.
//
// | item     | contract                                                                      |
// |----------|-------------------------------------------------------------------------------|
// | planes   | device; `components` planes of uint8, each `pitch` bytes a row, the window's   |
// |          | rows from (y0, x0) inside them                                                 |
// | out      | device; height x width x out_channels, pitch width * out_channels              |
// | colours  | 3 -> 3: RGB, or BGR with `bgr`; 1 -> 3: replicated; 3 -> 1: format.h's Luma    |
// |          | (19595 R + 38470 G + 7471 B + 32768) >> 16; 1 -> 1: copied                     |
// | launch   | one, on `stream`; nothing when the window is empty                             |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"

namespace conveyor::ops {

struct Jpeg2000Planes {
  const uint8_t* plane[3] = {nullptr, nullptr, nullptr};
  int64_t pitch = 0;
  int components = 0;  // 1 or 3
};

// Throws InvalidArgument for components other than 1 or 3, out_channels other than 1 or 3.
void Jpeg2000PlanesToHwc(const Jpeg2000Planes& src, int64_t y0, int64_t x0, int64_t height, int64_t width,
                         int out_channels, bool bgr, uint8_t* out, cuda::StreamView stream);

}  // namespace conveyor::ops
