#include <cmath>

#include "operators/color/color.h"

namespace conveyor::ops {
namespace {

constexpr double kRgbToYiq[9] = {0.299, 0.587, 0.114, 0.595716, -0.274453, -0.321263, 0.211456, -0.522591, 0.311135};

void Multiply(const double a[9], const double b[9], double out[9]) {
  double t[9];
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) t[3 * r + c] = a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c];
  }
  for (int k = 0; k < 9; ++k) out[k] = t[k];
}

// The inverse by cofactors (the matrix is well conditioned: det ≈ 0.31).
void Invert(const double m[9], double out[9]) {
  const double c00 = m[4] * m[8] - m[5] * m[7], c01 = m[5] * m[6] - m[3] * m[8], c02 = m[3] * m[7] - m[4] * m[6];
  const double det = m[0] * c00 + m[1] * c01 + m[2] * c02;
  out[0] = c00 / det;
  out[1] = (m[2] * m[7] - m[1] * m[8]) / det;
  out[2] = (m[1] * m[5] - m[2] * m[4]) / det;
  out[3] = c01 / det;
  out[4] = (m[0] * m[8] - m[2] * m[6]) / det;
  out[5] = (m[2] * m[3] - m[0] * m[5]) / det;
  out[6] = c02 / det;
  out[7] = (m[1] * m[6] - m[0] * m[7]) / det;
  out[8] = (m[0] * m[4] - m[1] * m[3]) / det;
}

}  // namespace

void HsvMatrix(double hue_degrees, double saturation, double value, double m[9]) {
  const double a = hue_degrees * M_PI / 180.0;
  const double cs = std::cos(a) * saturation * value, sn = std::sin(a) * saturation * value;
  // In YIQ: Y scaled by value; (I, Q) rotated by the hue angle and scaled by saturation * value.
  const double yiq[9] = {value, 0, 0, 0, cs, -sn, 0, sn, cs};
  double yiq_to_rgb[9];
  Invert(kRgbToYiq, yiq_to_rgb);
  Multiply(yiq, kRgbToYiq, m);
  Multiply(yiq_to_rgb, m, m);
}

void GrayscaleMatrix(double m[9]) {
  for (int r = 0; r < 3; ++r) {
    m[3 * r] = kRgbToYiq[0];
    m[3 * r + 1] = kRgbToYiq[1];
    m[3 * r + 2] = kRgbToYiq[2];
  }
}

}  // namespace conveyor::ops
