#include "operators/video/nvdec/nv12_to_rgb.h"

#include "operators/video/nvdec/nv12_to_rgb_pixel.h"

namespace conveyor::ops::video {

YuvMatrix MatrixFromH273(int matrix_coefficients, int height) {
  switch (matrix_coefficients) {
    case 1:
      return YuvMatrix::kBt709;
    case 4:
      return YuvMatrix::kFcc;
    case 5:
    case 6:
      return YuvMatrix::kBt601;
    case 7:
      return YuvMatrix::kSmpte240m;
    case 9:
    case 10:
      return YuvMatrix::kBt2020;
    default:
      return height >= 720 ? YuvMatrix::kBt709 : YuvMatrix::kBt601;
  }
}

YuvToRgb YuvToRgbFor(YuvMatrix matrix, bool full_range) {
  // libswscale's ff_yuv2rgb_coeffs rows: {crv, cbu, cgu, cgv} x 65536.
  int c[4];
  switch (matrix) {
    case YuvMatrix::kBt709:
      c[0] = 117489, c[1] = 138438, c[2] = 13975, c[3] = 34925;
      break;
    case YuvMatrix::kFcc:
      c[0] = 104448, c[1] = 132798, c[2] = 24759, c[3] = 53109;
      break;
    case YuvMatrix::kSmpte240m:
      c[0] = 117579, c[1] = 136230, c[2] = 16907, c[3] = 35559;
      break;
    case YuvMatrix::kBt2020:
      c[0] = 110013, c[1] = 140363, c[2] = 12277, c[3] = 42626;
      break;
    case YuvMatrix::kBt601:
    default:
      c[0] = 104597, c[1] = 132201, c[2] = 25675, c[3] = 53279;
      break;
  }
  const float chroma = full_range ? 224.f / 255.f : 1.f;
  YuvToRgb m;
  m.y_scale = full_range ? 1.f : 255.f / 219.f;
  m.y_offset = full_range ? 0.f : 16.f;
  m.crv = c[0] / 65536.f * chroma;
  m.cbu = c[1] / 65536.f * chroma;
  m.cgu = c[2] / 65536.f * chroma;
  m.cgv = c[3] / 65536.f * chroma;
  return m;
}

void Nv12ToRgbReference(const Nv12Planes& planes, const YuvToRgb& m, uint8_t* rgb) {
  for (int y = 0; y < planes.height; ++y) {
    for (int x = 0; x < planes.width; ++x) {
      nv12::Pixel(planes, m, x, y, rgb + (static_cast<size_t>(y) * planes.width + x) * 3);
    }
  }
}

}  // namespace conveyor::ops::video
