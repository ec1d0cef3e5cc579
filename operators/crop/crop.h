// crop: cuts a window out of each HWC image; with out_of_bounds_policy pad, the parts of the
// window outside the image take `fill_values`. Plain functions; no CUDA syntax.
//
// | what     | contract                                                                    |
// |----------|-----------------------------------------------------------------------------|
// | layout   | HWC (1..kMaxCropFill channels when padding; any count otherwise), dense      |
// | dtypes   | uint8, float32 (fill values converted: uint8 rounds half up and clamps)     |
// | window   | rows [y0, y0 + out_h), columns [x0, x0 + out_w) of the image; y0/x0 may be  |
// |          | negative and the window may pass the edge only when padding                 |
// | output   | (out_h, out_w, C); out[y][x][c] = in[y0 + y][x0 + x][c] inside, fill[c] out  |
// | frames   | a clip (FHWC) is `frames` such images back to back, in and out, all cut with |
// |          | the same window                                                             |
// | GPU      | one launch per batch, descriptors in device memory, grid from the output     |
// |          | capacity and the sample count                                               |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kMaxCropFill = 16;

struct CropDesc {
  const void* in;
  void* out;
  int64_t in_h, in_w, channels;
  int64_t y0, x0, out_h, out_w;
  float fill[kMaxCropFill];  // per channel, already in the output's value range
  int64_t frames = 1;        // images of in_h x in_w x channels in the sample (FHWC: F)
};

// Where x0 = round(pos * (extent - crop)) as DALI (so 0.5 centres; negative when the crop is larger).
int64_t CropOrigin(double pos, int64_t extent, int64_t crop);

void CropCpu(const CropDesc& d, DType dtype);

// `descs`: device-readable array of `num_samples` descriptors with device pointers.
void CropGpu(const CropDesc* descs, int num_samples, int64_t capacity_bytes, DType dtype, cuda::StreamView stream);

}  // namespace conveyor::ops
