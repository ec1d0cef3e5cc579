// NV12 / P016 (NVDEC's output surfaces) → packed RGB uint8, with the same matrices libswscale uses
// in the CPU decoder (cpu_decoder.cc: sws_setColorspaceDetails with sws_getCoefficients), so the
// GPU and CPU backends agree within ±2 levels (rounding; both take the chroma sample of each 2x2
// block as is, libswscale's unscaled 4:2:0 → RGB path).
//
//   limited range: R = ys (Y - 16) + crv (V - 128)           ys = 255 / 219
//                  G = ys (Y - 16) - cgu (U - 128) - cgv (V - 128)
//                  B = ys (Y - 16) + cbu (U - 128)
//   full range:    ys = 1, no offset; chroma coefficients x 224 / 255 (libswscale's scaling)
//   crv, cbu, cgu, cgv = libswscale's table / 65536 (BT.601: 104597, 132201, 25675, 53279; ...)
//
// Samples of 16-bit surfaces (P016: 10/12-bit data in the high bits) are taken as value / 256.
// Nv12ToRgbReference is the kernel's CPU twin (nv12_to_rgb_gpu.h), for tests.
#pragma once

#include <cstddef>
#include <cstdint>

namespace conveyor::ops::video {

// H.273 matrix_coefficients values NVDEC reports (video_signal_description).
enum class YuvMatrix { kBt601, kBt709, kBt2020, kSmpte240m, kFcc };

// kBt709 for 1 (BT.709), kBt601 for 5, 6, kFcc for 4, kSmpte240m for 7, kBt2020 for 9, 10; any
// other (2: unspecified): BT.709 from 720 lines up, else BT.601 — the CPU decoder's rule.
YuvMatrix MatrixFromH273(int matrix_coefficients, int height);

struct YuvToRgb {
  float y_scale, y_offset;       // R = y_scale * (Y - y_offset) + ...
  float crv, cbu, cgu, cgv;      // as above
};

YuvToRgb YuvToRgbFor(YuvMatrix matrix, bool full_range);

// The planes of one NV12 (bytes_per_sample 1) or P016 (2) frame.
struct Nv12Planes {
  const uint8_t* luma = nullptr;    // height rows of `pitch` bytes
  const uint8_t* chroma = nullptr;  // (height + 1) / 2 rows of `pitch` bytes: U V U V ...
  size_t pitch = 0;
  int width = 0, height = 0;
  int bytes_per_sample = 1;
};

// Writes height x width x 3 bytes to `rgb` (host memory; planes in host memory).
void Nv12ToRgbReference(const Nv12Planes& planes, const YuvToRgb& m, uint8_t* rgb);

}  // namespace conveyor::ops::video
