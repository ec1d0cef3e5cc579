// Per-pixel colour transforms shared by hsv, hue, saturation, color_twist, grayscale, gamma,
// solarize and posterize. Plain functions, no CUDA syntax; the per-pixel rule (color_pixel.h)
// is one host/device function, so the CPU reference and the kernel compute the same float ops.
//
// | mode       | channels | rule (per pixel / element, in float32)                            |
// |------------|----------|-------------------------------------------------------------------|
// | kMatrix    | 3        | out[c] = m[3c] r + m[3c+1] g + m[3c+2] b + offset[c] (fmaf chain)  |
// | kGamma     | any      | out = p2 * powf(in * p1, p0)      (gamma, 1/max_in, gain * max_out)|
// | kSolarize  | any      | out = in >= p0 ? p1 - in : in     (threshold, max)                 |
// | kPosterize | any      | out = in & p0 (uint8 only; p0 = the kept-bits mask)                |
//
// Output conversion: convert.h (uint8: clamp, round to nearest even). kMatrix, kSolarize and
// kPosterize are bit-identical on CPU and GPU; kGamma differs by powf's libm (≤ 2 ulp before
// rounding: uint8 outputs within 1, float outputs within 4e-7 relative).
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

enum class ColorMode : int32_t { kMatrix = 0, kGamma = 1, kSolarize = 2, kPosterize = 3 };

struct ColorSample {
  const void* in;
  void* out;
  int64_t pixels;    // kMatrix: pixels (3 elements each); other modes: elements
  ColorMode mode;
  float m[9];        // kMatrix: row-major 3x3
  float offset[3];   // kMatrix
  float p0, p1, p2;  // mode parameters (table above)
};

void ColorCpu(const ColorSample& s, DType out_type, DType in_type);
// `samples`: n device-readable descriptors; `max_pixels_hint` (from capacities) only sizes the grid.
void ColorGpu(const ColorSample* samples, int n, int64_t max_pixels_hint, DType out_type, DType in_type,
              cuda::StreamView stream);

// The matrices, computed in double on the host (color_matrix.cc).
// DALI's hsv: RGB → YIQ, rotate (I, Q) by `hue` degrees, scale I and Q by `saturation`, scale all
// by `value`, back to RGB. YIQ→RGB is the exact inverse of RGB→YIQ, so the identity arguments
// give the identity matrix.
void HsvMatrix(double hue_degrees, double saturation, double value, double m[9]);
// Rows of BT.601 luma weights (0.299, 0.587, 0.114): a gray image in 3 channels.
void GrayscaleMatrix(double m[9]);

}  // namespace conveyor::ops
