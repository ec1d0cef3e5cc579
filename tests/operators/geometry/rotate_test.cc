// rotate on the CPU: quarter turns are exact transposes and flips (every interpolation, odd and
// even sides), DALI's canvas sizes, keep_size and size, random per-sample angles against the
// independent reference; conformance (CPU cases).
#include <gtest/gtest.h>

#include "tests/operators/geometry/geometry_conformance.h"

namespace conveyor::testing {
namespace {

// Where output (y, x) of a counter-clockwise quarter turn `quarters` of an h x w image reads.
std::pair<int64_t, int64_t> QuarterTurnSource(int quarters, int64_t h, int64_t w, int64_t y, int64_t x) {
  switch (((quarters % 4) + 4) % 4) {
    case 0: return {y, x};
    case 1: return {x, w - 1 - y};          // the right edge comes to the top
    case 2: return {h - 1 - y, w - 1 - x};
    default: return {h - 1 - x, y};         // the left edge comes to the top
  }
}

TEST(Rotate, QuarterTurnsAreExactTransposesAndFlips) {
  for (const Shape& shape : {Shape{1, 1, 3}, Shape{5, 8, 3}, Shape{7, 4, 1}, Shape{9, 13, 4}}) {
    for (DType type : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU in = RandomBatch({shape}, type, "HWC");
      const int64_t h = shape[0], w = shape[1], c = shape[2];
      for (const std::string interp : {"nearest", "linear", "cubic"}) {
        for (const double angle : {0.0, 90.0, 180.0, 270.0, -90.0, 450.0, -540.0}) {
          const int quarters = static_cast<int>(angle / 90);
          for (const bool fill : {false, true}) {
            OpSpec spec = Rotate(interp).SetArg("angle", angle);
            if (fill) spec.SetArg("fill_value", std::vector<double>{3});
            const TensorListCPU out = RunOp(spec, Device::kCpu, in);
            const bool turned = quarters % 2 != 0;
            ASSERT_EQ(out.shape(0), (Shape{turned ? w : h, turned ? h : w, c})) << angle;
            for (int64_t y = 0; y < out.shape(0)[0]; ++y) {
              for (int64_t x = 0; x < out.shape(0)[1]; ++x) {
                const auto [sy, sx] = QuarterTurnSource(quarters, h, w, y, x);
                for (int64_t k = 0; k < c; ++k) {
                  ASSERT_EQ(At(out, 0, (y * out.shape(0)[1] + x) * c + k), At(in, 0, (sy * w + sx) * c + k))
                      << interp << " angle " << angle << " shape " << shape.ToString() << " at (" << y << ", " << x << ")";
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(Rotate, CanvasFollowsDali) {
  // w' = ceil(|cos| w + |sin| h - 0.01), h' likewise, then the parity of the side it mostly comes from.
  const auto canvas = [](int64_t h, int64_t w, double deg) {
    const TensorListCPU in = RandomBatch({Shape{h, w, 1}}, DType::kUInt8, "HWC");
    return RunOp(Rotate().SetArg("angle", deg), Device::kCpu, in).shape(0);
  };
  // 30 degrees of 100 x 200: w' = ceil(173.2 + 50 - 0.01) = 224 (even, as w), h' = ceil(86.6 + 100) = 187 -> 188 (as h).
  EXPECT_EQ(canvas(100, 200, 30), (Shape{188, 224, 1}));
  // 60 degrees: mostly turned, so w' takes h's parity and h' takes w's: w' = ceil(100 + 86.6) = 187 -> 188,
  // h' = ceil(50 + 173.2) = 224.
  EXPECT_EQ(canvas(100, 200, 60), (Shape{224, 188, 1}));
  // 45 degrees of an odd square: 7 sqrt(2) = 9.9 -> 10 -> 11 (odd, as 7).
  EXPECT_EQ(canvas(7, 7, 45), (Shape{11, 11, 1}));
  // A hair over an integer does not grow the canvas: 1e-4 degrees of 10 x 10 stays 10 x 10.
  EXPECT_EQ(canvas(10, 10, 1e-4), (Shape{10, 10, 1}));
}

// The rotation's output -> input map from its definition: turn output offsets from the output's
// centre by +angle (y down: a point right of the centre reads below it for +90) onto the input's.
Matrix RotationMap(double deg, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w) {
  const double a = deg * M_PI / 180, c = std::cos(a), s = std::sin(a);
  const double ocx = out_w / 2.0, ocy = out_h / 2.0, icx = in_w / 2.0, icy = in_h / 2.0;
  return {c, -s, icx - c * ocx + s * ocy, s, c, icy - s * ocx - c * ocy};
}

TEST(Rotate, RandomAnglesPerSampleMatchTheReference) {
  std::vector<Shape> shapes = RandomHwcShapes(4, 1, 40, 40, 3);
  shapes.push_back(Shape{1, 1, 3});
  shapes.push_back(Shape{2, 7, 3});
  const std::vector<float> angles = RandomVector<float>(shapes.size(), -400.f, 400.f);
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", -20.f, 300.f);
    for (const std::string interp : {"nearest", "linear", "cubic"}) {
      for (const bool keep : {false, true}) {
        const OpSpec spec = Rotate(interp).SetArgInput("angle", "a").SetArg("keep_size", keep).SetArg("fill_value", std::vector<double>{9});
        const TensorListCPU out = RunOp(spec, Device::kCpu, in, {{"angle", PerSampleScalars(angles)}});
        for (int s = 0; s < in.num_samples(); ++s) {
          const Shape& is = in.shape(s);
          const Shape& os = out.shape(s);
          if (keep) {
            ASSERT_EQ(os, is);
          }
          ExpectWarpMatches(in, out, s, AsFloat(RotationMap(angles[static_cast<size_t>(s)], is[0], is[1], os[0], os[1])),
                            interp, {9}, interp + " angle " + std::to_string(angles[static_cast<size_t>(s)]));
        }
      }
    }
  }
}

TEST(Rotate, SizeGivesTheCanvas) {
  const TensorListCPU in = RandomBatch({Shape{10, 20, 3}, Shape{5, 5, 3}}, DType::kFloat32, "HWC");
  const TensorListCPU out = RunOp(Rotate().SetArg("angle", 33.0).SetArgInput("size", "s"), Device::kCpu, in,
                                  {{"size", PerSampleLists<float>({{15, 9}, {1, 1}})}});
  EXPECT_EQ(out.shape(0), (Shape{15, 9, 3}));
  EXPECT_EQ(out.shape(1), (Shape{1, 1, 3}));
  for (int s = 0; s < 2; ++s) {
    ExpectWarpMatches(in, out, s, AsFloat(RotationMap(33, in.shape(s)[0], in.shape(s)[1], out.shape(s)[0], out.shape(s)[1])),
                      "linear", {}, "size");
  }
}

INSTANTIATE_TEST_SUITE_P(Rotate, OperatorConformance, ::testing::ValuesIn(ImageConformanceCases("rotate", Device::kCpu)),
                         CaseName);

}  // namespace
}  // namespace conveyor::testing
