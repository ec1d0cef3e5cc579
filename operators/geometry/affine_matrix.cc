#include "operators/geometry/affine_matrix.h"

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace conveyor::ops {

void CosSinDegrees(double degrees, double* cos_out, double* sin_out) {
  const double turn = std::fmod(degrees, 360.0);
  const double quarters = turn / 90.0;
  if (quarters == std::floor(quarters)) {
    static constexpr double kCos[4] = {1, 0, -1, 0}, kSin[4] = {0, 1, 0, -1};
    const int q = (static_cast<int>(quarters) % 4 + 4) % 4;
    *cos_out = kCos[q];
    *sin_out = kSin[q];
    return;
  }
  const double radians = turn * (M_PI / 180.0);
  *cos_out = std::cos(radians);
  *sin_out = std::sin(radians);
}

Affine2D Affine2D::Rotation(double degrees) {
  double c, s;
  CosSinDegrees(degrees, &c, &s);
  return {{c, -s, 0, s, c, 0}};
}

Affine2D Affine2D::After(const Affine2D& first) const {
  const auto& a = m;
  const auto& b = first.m;
  return {{a[0] * b[0] + a[1] * b[3], a[0] * b[1] + a[1] * b[4], a[0] * b[2] + a[1] * b[5] + a[2],
           a[3] * b[0] + a[4] * b[3], a[3] * b[1] + a[4] * b[4], a[3] * b[2] + a[4] * b[5] + a[5]}};
}

Affine2D Affine2D::About(double cx, double cy) const {
  return Translation(cx, cy).After(After(Translation(-cx, -cy)));
}

bool Affine2D::Invert(Affine2D* out) const {
  const double det = m[0] * m[4] - m[1] * m[3];
  if (!IsFinite() || det == 0 || !std::isfinite(det)) return false;
  const double i00 = m[4] / det, i01 = -m[1] / det, i10 = -m[3] / det, i11 = m[0] / det;
  Affine2D inv{{i00, i01, -(i00 * m[2] + i01 * m[5]), i10, i11, -(i10 * m[2] + i11 * m[5])}};
  if (!inv.IsFinite()) return false;
  *out = inv;
  return true;
}

bool Affine2D::IsFinite() const {
  for (double v : m) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

std::string Affine2D::ToString() const {
  std::ostringstream s;
  s << "[[" << m[0] << ", " << m[1] << ", " << m[2] << "], [" << m[3] << ", " << m[4] << ", " << m[5] << "]]";
  return s.str();
}

Affine2D MatrixFromValues(const std::vector<double>& values, const std::string& where, int sample) {
  const auto at = [sample] { return " at sample " + std::to_string(sample); };
  if (values.size() != 6) {
    throw InvalidArgument(where + ": expected 6 values (a [2, 3] matrix, row-major), got " +
                          std::to_string(values.size()) + at());
  }
  Affine2D m;
  for (size_t j = 0; j < 6; ++j) m.m[j] = values[j];
  if (!m.IsFinite()) throw InvalidArgument(where + ": expected finite values, got " + m.ToString() + at());
  return m;
}

CanvasSize RotatedCanvas(int64_t h, int64_t w, double degrees) {
  double c, s;
  CosSinDegrees(degrees, &c, &s);
  c = std::abs(c);
  s = std::abs(s);
  constexpr double kSlack = 1e-2;  // DALI's: a side a hair over an integer does not grow a pixel
  int64_t out_w = static_cast<int64_t>(std::ceil(c * static_cast<double>(w) + s * static_cast<double>(h) - kSlack));
  int64_t out_h = static_cast<int64_t>(std::ceil(c * static_cast<double>(h) + s * static_cast<double>(w) - kSlack));
  const bool mostly_same = s <= c;
  const int64_t parity_w = (mostly_same ? w : h) % 2, parity_h = (mostly_same ? h : w) % 2;
  if (out_w % 2 != parity_w) ++out_w;
  if (out_h % 2 != parity_h) ++out_h;
  return {out_h, out_w};
}

Affine2D RotateOutputToInput(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, double degrees) {
  // Output to input turns the other way than the picture: a point right of the output's centre
  // reads the input below its centre for +90 degrees (the picture turns counter-clockwise).
  return Affine2D::Translation(0.5 * static_cast<double>(in_w), 0.5 * static_cast<double>(in_h))
      .After(Affine2D::Rotation(degrees))
      .After(Affine2D::Translation(-0.5 * static_cast<double>(out_w), -0.5 * static_cast<double>(out_h)));
}

}  // namespace conveyor::ops
