// Test helpers for pad / slice / paste: an independent window reference (element reads through the
// dtype, no shared code with the operators) and specs.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/operators/resize/image_test_util.h"

namespace conveyor::testing {

inline double ElementAsDouble(const TensorListCPU& list, int s, int64_t i) {
  switch (list.dtype()) {
    case DType::kUInt8: return At<uint8_t>(list, s, i);
    case DType::kInt8: return At<int8_t>(list, s, i);
    case DType::kUInt16: return At<uint16_t>(list, s, i);
    case DType::kInt16: return At<int16_t>(list, s, i);
    case DType::kInt32: return At<int32_t>(list, s, i);
    case DType::kFloat32: return At<float>(list, s, i);
    default: ADD_FAILURE() << "dtype"; return 0;
  }
}

// Expects sample `s` of `out` to be the window [y0, y0 + h) x [x0, x0 + w) x [c0, c0 + c) of
// sample `s` of `in`, with fill[c] (or fill[0]) outside. Returns the first mismatch, or "".
inline std::string CheckWindow(const TensorListCPU& out, const TensorListCPU& in, int s, int64_t y0, int64_t x0,
                               int64_t c0, int64_t h, int64_t w, int64_t c, const std::vector<double>& fill) {
  if (out.shape(s) != (Shape{h, w, c})) {
    return "sample " + std::to_string(s) + ": shape " + out.shape(s).ToString() + ", want " + Shape{h, w, c}.ToString();
  }
  const Shape& is = in.shape(s);
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t k = 0; k < c; ++k) {
        const int64_t sy = y0 + y, sx = x0 + x, sk = c0 + k;
        const bool inside = sy >= 0 && sy < is[0] && sx >= 0 && sx < is[1] && sk >= 0 && sk < is[2];
        const double want = inside ? ElementAsDouble(in, s, (sy * is[1] + sx) * is[2] + sk)
                                   : fill[fill.size() == 1 ? 0 : static_cast<size_t>(k)];
        const double got = ElementAsDouble(out, s, (y * w + x) * c + k);
        if (!(got == want)) {
          return "sample " + std::to_string(s) + " at (" + std::to_string(y) + ", " + std::to_string(x) + ", " +
                 std::to_string(k) + "): " + std::to_string(got) + ", want " + std::to_string(want);
        }
      }
    }
  }
  return "";
}

inline OpSpec Unary(const std::string& op, const std::string& name) {
  return OpSpec(op, name).AddInput("x").AddOutput("y");
}

inline std::string ErrorOf(const OpRun& r, Device device = Device::kCpu) {
  try {
    RunOp(r, device);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// Random [h, w, c] shapes, h and w in [1, max_side].
inline std::vector<Shape> RandomShapes(int n, int max_side, int64_t channels) {
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    shapes.push_back(Shape{RandomVector<int>(1, 1, max_side)[0], RandomVector<int>(1, 1, max_side)[0], channels});
  }
  return shapes;
}

}  // namespace conveyor::testing
