// color_space_conversion: per-pixel 3x3 (or 3x1 / 1x3) affine maps between RGB, BGR, GRAY and
// YCbCr, ITU-R BT.601 full range as in JPEG (JFIF) — values on the 0..255 scale, Cb/Cr centred
// on 128:
//
//   Y  =       0.299    R + 0.587    G + 0.114    B        R = Y                  + 1.402    (Cr - 128)
//   Cb = 128 - 0.168736 R - 0.331264 G + 0.5      B        G = Y - 0.344136 (Cb - 128) - 0.714136 (Cr - 128)
//   Cr = 128 + 0.5      R - 0.418688 G - 0.081312 B        B = Y + 1.772    (Cb - 128)
//
// GRAY is Y (1 channel); GRAY → colour repeats it (→ YCbCr: Y, 128, 128). A pair in → out is the
// host-composed map out_from_rgb ∘ rgb_from_in (in double, rounded to float once, entries within
// 1e-5 of an integer snapped to it so that e.g. YCbCr → GRAY returns Y exactly).
//
// | in (HWC)             | out (HWC)                | uint8                   | float32              |
// |----------------------|--------------------------|-------------------------|----------------------|
// | C = 3 (RGB, BGR,     | C = 3, or 1 for GRAY;    | rounded to nearest even,| unclamped, same      |
// | YCbCr) or 1 (GRAY)   | same dtype               | clamped to [0, 255]     | 0..255 scale         |
//
// Each output channel is acc = o[k]; acc = fmaf(m[k][j], x[j], acc) for j = 0, 1, 2 — the same
// fmaf chain on host and device, so CPU and GPU agree bit for bit. Same type in and out copies.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/cuda/stream.h"
#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE
#include "core/tensor/dtype.h"

namespace conveyor::ops {

enum class ColorSpace { kRGB, kBGR, kGray, kYCbCr };

// "RGB", "BGR", "GRAY", "YCbCr" (the schema's choices).
ColorSpace ParseColorSpace(const std::string& name);
int ColorSpaceChannels(ColorSpace space);  // 1 for GRAY, else 3

struct CscMatrix {
  float m[3][3];  // [out channel][in channel]; only the first `in channels` columns are used
  float o[3];
};

CscMatrix MakeCscMatrix(ColorSpace in, ColorSpace out);

struct CscSample {
  const void* in;
  void* out;
  int64_t pixels;
  CscMatrix mat;
};

// One pixel: x[0..CIN) → y[0..COUT).
template <int CIN, int COUT>
CONVEYOR_HOST_DEVICE inline void CscPixel(const CscMatrix& mat, const float* x, float* y) {
  for (int k = 0; k < COUT; ++k) {
    float acc = mat.o[k];
    for (int j = 0; j < CIN; ++j) acc = fmaf(mat.m[k][j], x[j], acc);
    y[k] = acc;
  }
}

// dtype: uint8 or float32. `copy`: in and out are the same space (bytes copied).
void CscCpu(const CscSample& s, int cin, int cout, bool copy, DType dtype);
// `samples`: n device-readable descriptors; `max_pixels_hint` (from capacities) sizes the grid.
void CscGpu(const CscSample* samples, int n, int64_t max_pixels_hint, int cin, int cout, bool copy, DType dtype,
            cuda::StreamView stream);

}  // namespace conveyor::ops
