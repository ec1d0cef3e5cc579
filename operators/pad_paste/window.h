// The pixel engine of pad, slice and paste (and letterbox's canvas): each output sample is a
// window of its input, taken at an anchor that may lie outside the image, with the outside filled.
// Plain functions; no CUDA syntax.
//
// | what     | contract                                                                         |
// |----------|----------------------------------------------------------------------------------|
// | layout   | [H, W, C] samples (HWC, or a mask [H, W, 1]), dense, row-major                   |
// | dtypes   | element sizes 1, 2 and 4 bytes (uint8, int8, uint16, int16, int32, float32):      |
// |          | values are moved as bits, never converted, so a label map keeps its labels        |
// | window   | out[y][x][c] = in[y0 + y][x0 + x][c0 + c] where that lies inside the input,      |
// |          | else fill[c] (fill[0] when fill_count is 1); y0, x0, c0 may be negative           |
// | fill     | already in the output's bits (FillBits)                                           |
// | GPU      | one launch per batch: blockIdx.y = sample, blocks along x take output rows        |
// |          | (grid-stride), grid from the output capacity; descriptors in device memory        |
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kMaxWindowFill = 16;

struct WindowDesc {
  const void* in;
  void* out;
  int64_t in_h, in_w, in_c;
  int64_t out_h, out_w, out_c;
  int64_t y0, x0, c0;
  uint32_t fill[kMaxWindowFill];  // bit patterns in the element type (low bytes for 1 and 2 bytes)
  int32_t fill_count;             // 1: fill[0] everywhere; else one per output channel
};

// The dtypes the window engine moves (element sizes 1, 2, 4; float16 excluded: its fill would need
// a conversion this engine does not make).
const std::vector<DType>& WindowDTypes();

// The bits of `value` as an element of `dtype`. Integer dtypes take integers within their range
// only; float32 takes any finite value. On a bad value returns false and sets `why`
// ("expected an integer in [0, 255] for uint8").
bool FillBits(double value, DType dtype, uint32_t* bits, std::string* why);

void WindowCpu(const WindowDesc& d, DType dtype);

// `descs`: device-readable array of `num_samples` descriptors with device pointers.
// `capacity_bytes`: the output buffer's size (sizes the grid).
void WindowGpu(const WindowDesc* descs, int num_samples, int64_t capacity_bytes, DType dtype, cuda::StreamView stream);

}  // namespace conveyor::ops
