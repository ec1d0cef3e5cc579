#include <cstring>

#include "core/error.h"
#include "operators/color_space_conversion/color_space_conversion.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {
namespace {

// A 3 x n map with offset, in double.
struct Map {
  double m[3][3] = {};
  double o[3] = {};
  int rows = 3, cols = 3;
};

constexpr double kYuv[3][3] = {{0.299, 0.587, 0.114}, {-0.168736, -0.331264, 0.5}, {0.5, -0.418688, -0.081312}};

// RGB from the input space (3 rows, ColorSpaceChannels(in) columns).
Map RgbFrom(ColorSpace in) {
  Map a;
  switch (in) {
    case ColorSpace::kRGB: a.m[0][0] = a.m[1][1] = a.m[2][2] = 1; break;
    case ColorSpace::kBGR: a.m[0][2] = a.m[1][1] = a.m[2][0] = 1; break;
    case ColorSpace::kGray: a.cols = 1; a.m[0][0] = a.m[1][0] = a.m[2][0] = 1; break;
    case ColorSpace::kYCbCr: {
      const double inv[3][3] = {{1, 0, 1.402}, {1, -0.344136, -0.714136}, {1, 1.772, 0}};
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) a.m[r][c] = inv[r][c];
        a.o[r] = -128 * (inv[r][1] + inv[r][2]);
      }
      break;
    }
  }
  return a;
}

// The output space from RGB (ColorSpaceChannels(out) rows, 3 columns).
Map OutFromRgb(ColorSpace out) {
  Map a;
  switch (out) {
    case ColorSpace::kRGB: a.m[0][0] = a.m[1][1] = a.m[2][2] = 1; break;
    case ColorSpace::kBGR: a.m[0][2] = a.m[1][1] = a.m[2][0] = 1; break;
    case ColorSpace::kGray: a.rows = 1; for (int c = 0; c < 3; ++c) a.m[0][c] = kYuv[0][c]; break;
    case ColorSpace::kYCbCr:
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) a.m[r][c] = kYuv[r][c];
      }
      a.o[1] = a.o[2] = 128;
      break;
  }
  return a;
}

float Snap(double v) {
  const double r = std::nearbyint(v);
  return static_cast<float>(std::fabs(v - r) < 1e-5 ? r : v);
}

template <typename T>
void Convert(const CscSample& s, int cin, int cout, bool copy) {
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  if (copy) {
    std::memcpy(out, in, static_cast<size_t>(s.pixels) * static_cast<size_t>(cin) * sizeof(T));
    return;
  }
  float x[3], y[3];
  for (int64_t p = 0; p < s.pixels; ++p) {
    for (int j = 0; j < cin; ++j) x[j] = LoadAsFloat(in[p * cin + j]);
    if (cin == 1 && cout == 3) CscPixel<1, 3>(s.mat, x, y);
    if (cin == 3 && cout == 1) CscPixel<3, 1>(s.mat, x, y);
    if (cin == 3 && cout == 3) CscPixel<3, 3>(s.mat, x, y);
    for (int k = 0; k < cout; ++k) out[p * cout + k] = StoreFromFloat<T>(y[k]);
  }
}

}  // namespace

ColorSpace ParseColorSpace(const std::string& name) {
  if (name == "RGB") return ColorSpace::kRGB;
  if (name == "BGR") return ColorSpace::kBGR;
  if (name == "GRAY") return ColorSpace::kGray;
  if (name == "YCbCr") return ColorSpace::kYCbCr;
  throw InvalidArgument("color space: expected RGB, BGR, GRAY or YCbCr, got \"" + name + "\"");
}

int ColorSpaceChannels(ColorSpace space) { return space == ColorSpace::kGray ? 1 : 3; }

CscMatrix MakeCscMatrix(ColorSpace in, ColorSpace out) {
  const Map a = RgbFrom(in), b = OutFromRgb(out);
  CscMatrix mat{};
  for (int k = 0; k < b.rows; ++k) {
    double o = b.o[k];
    for (int r = 0; r < 3; ++r) o += b.m[k][r] * a.o[r];
    mat.o[k] = Snap(o);
    for (int j = 0; j < a.cols; ++j) {
      double v = 0;
      for (int r = 0; r < 3; ++r) v += b.m[k][r] * a.m[r][j];
      mat.m[k][j] = Snap(v);
    }
  }
  return mat;
}

void CscCpu(const CscSample& s, int cin, int cout, bool copy, DType dtype) {
  if (dtype == DType::kUInt8) return Convert<uint8_t>(s, cin, cout, copy);
  if (dtype == DType::kFloat32) return Convert<float>(s, cin, cout, copy);
  throw InvalidArgument("CscCpu: expected uint8 or float32, got " + std::string(DTypeName(dtype)));
}

}  // namespace conveyor::ops
