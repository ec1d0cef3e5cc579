// 2-D affine matrices on the host, in double: what warp_affine, rotate and the transforms.*
// operators compute their per-sample matrices with. Points are (x, y), x along W, y along H, in
// pixels with (0, 0) the top-left corner of the top-left pixel (DALI's convention):
//
//   | x' |   | m[0] m[1] m[2] |   | x |
//   | y' | = | m[3] m[4] m[5] | * | y |      (the [2, 3] row-major layout the operators output)
//                                 | 1 |
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace conveyor::ops {

struct Affine2D {
  std::array<double, 6> m = {1, 0, 0, 0, 1, 0};

  static Affine2D Identity() { return {}; }
  static Affine2D Translation(double dx, double dy) { return {{1, 0, dx, 0, 1, dy}}; }
  static Affine2D Scale(double sx, double sy) { return {{sx, 0, 0, 0, sy, 0}}; }
  // Counter-clockwise on a y-up plot: [[cos, -sin], [sin, cos]] (DALI's transforms.rotation). On an
  // image (y down) that turns points clockwise.
  static Affine2D Rotation(double degrees);
  // x' = x + shear_x y, y' = shear_y x + y (DALI's transforms.shear).
  static Affine2D Shear(double shear_x, double shear_y) { return {{1, shear_x, 0, shear_y, 1, 0}}; }

  // `this` applied after `first`: (this ∘ first)(p) = this(first(p)).
  Affine2D After(const Affine2D& first) const;
  // The same linear part about `(cx, cy)` instead of the origin: T(c) * this * T(-c).
  Affine2D About(double cx, double cy) const;
  // The inverse map; false (and `out` untouched) when the matrix is singular or not finite.
  bool Invert(Affine2D* out) const;
  bool IsFinite() const;
  // "[[1, 0, 0], [0, 1, 0]]" for messages.
  std::string ToString() const;
};

// 6 finite values (a [2, 3] or [6] argument or tensor, row-major) as a matrix. Throws
// InvalidArgument prefixed with `where` (`op "warp_affine" (w): argument "matrix"`), e.g.
//   ...: expected 6 values (a [2, 3] matrix, row-major), got 4 at sample 1
Affine2D MatrixFromValues(const std::vector<double>& values, const std::string& where, int sample);

// cos and sin of an angle in degrees, exact (0, ±1) at multiples of 90 degrees, so a quarter turn
// moves pixels exactly.
void CosSinDegrees(double degrees, double* cos_out, double* sin_out);

// DALI's rotate canvas for an h x w image turned by `degrees` (keep_size false, no size given):
// w' = ceil(|cos| w + |sin| h - 0.01), h' = ceil(|cos| h + |sin| w - 0.01), each then made odd or
// even as the input side it mostly comes from (w for w' while |sin| <= |cos|, else h), adding one
// pixel when needed — a shared parity keeps the centres aligned, so small angles blur less.
struct CanvasSize {
  int64_t h, w;
};
CanvasSize RotatedCanvas(int64_t h, int64_t w, double degrees);

// The output-to-input map of rotate: output pixel centres turn about the output's centre by
// `degrees` counter-clockwise (on the image as displayed) onto the input's centre.
Affine2D RotateOutputToInput(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, double degrees);

}  // namespace conveyor::ops
