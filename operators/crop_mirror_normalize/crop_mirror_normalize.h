// crop_mirror_normalize kernels (plain functions, no CUDA syntax): one read of the crop window,
// one write of the output.
//
// | input            | output                              | per sample                          |
// |------------------|-------------------------------------|-------------------------------------|
// | HWC, C in 1..4,  | CHW or HWC, C (+1 zero channel with | window anchor (y0, x0) and extent   |
// | uint8, float16,  | pad_output, at most 4), float32,    | (h, w), mirror (horizontal), and    |
// | float32          | float16, bfloat16, uint8            | mul/add per channel                 |
//
// out[c, y, x] = convert(fmaf(in[y0 + y, x0 + x', c], mul[c], add[c])), x' = mirror ? w-1-x : x,
// with mul = scale / std and add = shift - mean * scale / std precomputed on the host in float
// (convert: image_common/convert.h — RNE for half types, clamp + RNE for uint8). The padding
// channel is 0. CPU and GPU compute the same fmaf on the same floats: bit-identical.
//
// A clip (FHWC) is `frames` images of in_frame_stride elements back to back: each frame gets the
// sample's window, mirror and factors, and the output holds the frames back to back too (each
// frame CHW or HWC: FCHW / FHWC).
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kCmnMaxChannels = 4;

struct CmnSample {
  const void* in;          // the input sample (its first element)
  void* out;               // the output sample
  int64_t in_bytes;        // the input sample's size in bytes (loads never read past it)
  int64_t in_row_stride;   // elements per input row (W * C)
  int32_t y0, x0;          // window anchor in the input
  int32_t h, w;            // window extent = output extent
  int32_t channels;        // input channels C
  int32_t out_channels;    // C, or C + 1 with pad_output
  int32_t mirror;          // nonzero: mirror horizontally
  float mul[kCmnMaxChannels];
  float add[kCmnMaxChannels];
  int64_t in_frame_stride = 0;  // elements per input frame (H * W * C); read only when frames > 1
  int32_t frames = 1;           // images in the sample (FHWC: F); outputs h * w * out_channels each
};

void CropMirrorNormalizeCpu(const CmnSample& s, DType out_type, DType in_type, bool chw);

// `samples`: n device-readable descriptors. `max_out_count_hint`: output elements per sample
// derived from the output capacity (sizes the grid only; every block loops over its sample).
void CropMirrorNormalizeGpu(const CmnSample* samples, int n, int64_t max_out_count_hint, DType out_type,
                            DType in_type, bool chw, cuda::StreamView stream);

}  // namespace conveyor::ops
