// Test helpers for the geometry operators: specs, and an independent warp reference written from
// the definition in double (source point of each output pixel centre, taps, weights, border) —
// none of warp_pixel.h's code — to check the CPU operators against.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {

using Matrix = std::array<double, 6>;  // [2, 3] row-major, output -> input unless said otherwise

// RandomBatch (HWC) that also takes zero-sized samples (RandomBatch would memcpy from an empty
// vector's null data()).
inline TensorListCPU RandomHwc(const std::vector<Shape>& shapes, DType dtype, float lo = -20.f, float hi = 300.f) {
  TensorListCPU list;
  list.Resize(shapes, dtype);
  list.set_layout("HWC");
  for (int s = 0; s < list.num_samples(); ++s) {
    if (shapes[static_cast<size_t>(s)].num_elements() == 0) continue;
    const TensorListCPU one = RandomBatch({shapes[static_cast<size_t>(s)]}, dtype, "HWC", lo, hi);
    std::memcpy(list.raw_sample(s), one.raw_sample(0), static_cast<size_t>(one.shape(0).num_elements()) * DTypeSize(dtype));
  }
  return list;
}

inline OpSpec Warp(const std::string& interp = "linear") {
  return OpSpec("warp_affine", "warp").AddInput("x").AddOutput("y").SetArg("interp_type", interp);
}
inline OpSpec Rotate(const std::string& interp = "linear") {
  return OpSpec("rotate", "rot").AddInput("x").AddOutput("y").SetArg("interp_type", interp);
}
inline OpSpec Jitter() { return OpSpec("jitter", "jit").AddInput("x").AddOutput("y"); }
inline OpSpec Transform(const std::string& kind) { return OpSpec("transforms." + kind, kind).AddOutput("m"); }
inline std::vector<double> Values(const Matrix& m) { return {m.begin(), m.end()}; }

// Keys' cubic with a = -0.5, from its textbook form.
inline double KeysCubic(double t) {
  t = std::abs(t);
  if (t < 1) return 1.5 * t * t * t - 2.5 * t * t + 1;
  if (t < 2) return -0.5 * t * t * t + 2.5 * t * t - 4 * t + 2;
  return 0;
}

// Output pixel (x, y), channel c, of sample s of `in` warped by `m`; `fill` empty: clamp to the
// edge. `ambiguous` (nearest only) is set when the source point lies within 1e-3 of a pixel
// edge, where float and double may pick different pixels.
inline double ReferencePixel(const TensorListCPU& in, int s, const Matrix& m, int x, int y, int c,
                             const std::string& interp, const std::vector<double>& fill, bool* ambiguous) {
  const Shape& shape = in.shape(s);
  const int64_t h = shape[0], w = shape[1], ch = shape[2];
  const auto get = [&](int64_t ix, int64_t iy) -> double {
    if (ix < 0 || iy < 0 || ix >= w || iy >= h) {
      if (!fill.empty()) return fill.size() == 1 ? fill[0] : fill[static_cast<size_t>(c)];
      ix = std::min(std::max<int64_t>(ix, 0), w - 1);
      iy = std::min(std::max<int64_t>(iy, 0), h - 1);
    }
    return At(in, s, (iy * w + ix) * ch + c);
  };
  const double px = x + 0.5, py = y + 0.5;
  const double sx = m[0] * px + m[1] * py + m[2], sy = m[3] * px + m[4] * py + m[5];
  if (interp == "nearest") {
    const auto near_edge = [](double v) { return std::abs(v - std::round(v)) < 1e-3; };
    *ambiguous = near_edge(sx) || near_edge(sy);
    return get(static_cast<int64_t>(std::floor(sx)), static_cast<int64_t>(std::floor(sy)));
  }
  *ambiguous = false;
  const double u = sx - 0.5, v = sy - 0.5;
  const int64_t i = static_cast<int64_t>(std::floor(u)), j = static_cast<int64_t>(std::floor(v));
  const double a = u - static_cast<double>(i), b = v - static_cast<double>(j);
  if (interp == "linear") {
    return (1 - a) * (1 - b) * get(i, j) + a * (1 - b) * get(i + 1, j) + (1 - a) * b * get(i, j + 1) +
           a * b * get(i + 1, j + 1);
  }
  double sum = 0;
  for (int64_t l = j - 1; l <= j + 2; ++l) {
    for (int64_t k = i - 1; k <= i + 2; ++k) sum += KeysCubic(u - static_cast<double>(k)) * KeysCubic(v - static_cast<double>(l)) * get(k, l);
  }
  return sum;
}

// Sample s of `out` against the reference: uint8 outputs within 1 of the rounded, clamped value,
// float32 within 0.05 (inputs span about 300; float32 source coordinates are off by ~1e-5 pixel).
inline void ExpectWarpMatches(const TensorListCPU& in, const TensorListCPU& out, int s, const Matrix& m,
                              const std::string& interp, const std::vector<double>& fill, const std::string& what) {
  const Shape& shape = out.shape(s);
  int64_t checked = 0;
  for (int y = 0; y < shape[0]; ++y) {
    for (int x = 0; x < shape[1]; ++x) {
      for (int c = 0; c < shape[2]; ++c) {
        bool ambiguous = false;
        double want = ReferencePixel(in, s, m, x, y, c, interp, fill, &ambiguous);
        if (ambiguous) continue;
        ++checked;
        if (out.dtype() == DType::kUInt8) want = std::min(std::max(std::floor(want + 0.5), 0.0), 255.0);
        const double tol = out.dtype() == DType::kUInt8 ? 1.0 : 0.05;
        const double got = At(out, s, (static_cast<int64_t>(y) * shape[1] + x) * shape[2] + c);
        ASSERT_NEAR(got, want, tol) << what << ": sample " << s << " at (" << y << ", " << x << ", " << c << ")";
      }
    }
  }
  if (shape.num_elements() >= 64) {
    EXPECT_GT(checked, shape.num_elements() / 2) << what << ": too few unambiguous pixels";
  }
}

// The inverse of a [2, 3] map, by the 2 x 2 adjugate.
inline Matrix Inverse(const Matrix& m) {
  const double det = m[0] * m[4] - m[1] * m[3];
  const double a = m[4] / det, b = -m[1] / det, c = -m[3] / det, d = m[0] / det;
  return {a, b, -(a * m[2] + b * m[5]), c, d, -(c * m[2] + d * m[5])};
}

// A random output -> input map of an in_h x in_w image onto an out_h x out_w canvas: a random
// linear part (rotation, scale 0.5..2, shear) about the centres, the centres shifted a little.
inline Matrix RandomMatrix(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w) {
  const std::vector<double> r = RandomVector<double>(6, -1.0, 1.0);
  const double angle = r[0] * M_PI, scale = std::exp2(r[1]), shear = 0.4 * r[2];
  const double l00 = scale * std::cos(angle), l01 = -scale * std::sin(angle) + shear;
  const double l10 = scale * std::sin(angle), l11 = scale * std::cos(angle);
  const double icx = in_w / 2.0 + 0.2 * in_w * r[3], icy = in_h / 2.0 + 0.2 * in_h * r[4];
  const double ocx = out_w / 2.0, ocy = out_h / 2.0;
  return {l00, l01, icx - (l00 * ocx + l01 * ocy), l10, l11, icy - (l10 * ocx + l11 * ocy)};
}

// One [2, 3] float32 tensor per sample (what transforms.* produce), for matrix arguments.
inline TensorListCPU PerSampleMatrices(const std::vector<Matrix>& ms) {
  std::vector<std::vector<float>> values;
  for (const Matrix& m : ms) values.push_back(std::vector<float>(m.begin(), m.end()));
  return MakeBatch<float>(std::vector<Shape>(ms.size(), Shape{2, 3}), values);
}

// The matrices as float32 rounds them (what the operators compute with).
inline Matrix AsFloat(const Matrix& m) {
  Matrix r;
  for (size_t i = 0; i < 6; ++i) r[i] = static_cast<float>(m[i]);
  return r;
}

}  // namespace conveyor::testing
