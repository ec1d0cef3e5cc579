// grid_mask: the axis-aligned grid exactly (integer arithmetic), rotated and shifted grids against
// the rule in double (pixels within 1e-4 of a square's edge skipped: float vs double), errors,
// GPU vs CPU (bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Grid() { return OpSpec("grid_mask", "gm").AddInput("x").AddOutput("y"); }

TEST(GridMask, AxisAlignedGridIsExact) {
  const TensorListCPU in = RandomBatch({Shape{37, 53, 3}}, DType::kUInt8, "HWC");
  const TensorListCPU out = RunOp(Grid().SetArg("tile", 10).SetArg("ratio", 0.5), Device::kCpu, in);
  for (int64_t y = 0; y < 37; ++y) {
    for (int64_t x = 0; x < 53; ++x) {
      for (int64_t c = 0; c < 3; ++c) {
        const int64_t e = (y * 53 + x) * 3 + c;
        ASSERT_EQ(At(out, 0, e), x % 10 < 5 && y % 10 < 5 ? 0.f : At(in, 0, e)) << y << " " << x;
      }
    }
  }
}

TEST(GridMask, RotatedShiftedPerSampleMatchesDouble) {
  const std::vector<Shape> shapes = RandomHwcShapes(4, 5, 60, 60, 1);
  const std::vector<int32_t> tile = {7, 13, 20, 33};
  const std::vector<float> ratio = RandomVector<float>(4, 0.1f, 0.9f), angle = RandomVector<float>(4, -3.f, 3.f),
                           sx = RandomVector<float>(4, -20.f, 20.f), sy = RandomVector<float>(4, -20.f, 20.f);
  const TensorListCPU in = RandomBatch(shapes, DType::kFloat32, "HWC", 1.f, 2.f);
  const TensorListCPU out =
      RunOp(Grid().SetArgInput("tile", "t").SetArgInput("ratio", "r").SetArgInput("angle", "a").SetArgInput("shift_x", "x")
                .SetArgInput("shift_y", "y"),
            Device::kCpu, in,
            {{"tile", PerSampleScalars(tile)}, {"ratio", PerSampleScalars(ratio)}, {"angle", PerSampleScalars(angle)},
             {"shift_x", PerSampleScalars(sx)}, {"shift_y", PerSampleScalars(sy)}});
  int64_t masked = 0, checked = 0;
  for (int s = 0; s < 4; ++s) {
    const size_t i = static_cast<size_t>(s);
    const int64_t w = shapes[i][1];
    for (int64_t p = 0; p < shapes[i][0] * w; ++p) {
      const double x = static_cast<double>(p % w), y = static_cast<double>(p / w);
      const double u = (std::cos(angle[i]) * x + std::sin(angle[i]) * y + sx[i]) / tile[i];
      const double v = (-std::sin(angle[i]) * x + std::cos(angle[i]) * y + sy[i]) / tile[i];
      const double fu = u - std::floor(u), fv = v - std::floor(v);
      auto near_edge = [&](double f) { return std::abs(f - ratio[i]) < 1e-4 || f < 1e-4 || f > 1 - 1e-4; };
      if (near_edge(fu) || near_edge(fv)) continue;
      const bool want = fu < ratio[i] && fv < ratio[i];
      ASSERT_EQ(At(out, s, p) == 0.f, want) << "sample " << s << " pixel " << p;
      masked += want;
      ++checked;
    }
  }
  EXPECT_GT(masked, 0);
  EXPECT_LT(masked, checked);
}

TEST(GridMask, Errors) {
  const TensorListCPU in = RandomBatch({Shape{4, 4, 3}}, DType::kUInt8, "HWC");
  EXPECT_THAT(RunError(Grid().SetArgInput("tile", "t"), in, {{"tile", PerSampleScalars<int32_t>({0})}}),
              HasSubstr("op \"grid_mask\" (gm): argument \"tile\": expected a value >= 1, got 0 at sample 0"));
  EXPECT_THAT(RunError(Grid().SetArgInput("ratio", "r"), in, {{"ratio", PerSampleScalars<float>({1.5f})}}),
              HasSubstr("op \"grid_mask\" (gm): argument \"ratio\": expected a value in [0, 1], got 1.5 at sample 0"));
  EXPECT_THAT(RunError(Grid(), RandomBatch({Shape{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"grid_mask\" (gm): input 0: expected layout HWC or HW, got CHW"));
}

TEST(GridMaskGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = RandomHwcShapes(5, 1, 200, 300, 3);
  const ArgInputs args = {{"angle", PerSampleScalars(RandomVector<float>(5, -3.f, 3.f))},
                          {"shift_x", PerSampleScalars(RandomVector<float>(5, -50.f, 50.f))}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC");
    const OpSpec spec = Grid().SetArg("tile", 37).SetArg("ratio", 0.4).SetArgInput("angle", "a").SetArgInput("shift_x", "x");
    ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args), std::string(DTypeName(type)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    GridMask, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Grid().SetArg("tile", 3), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Grid().SetArg("tile", 5).SetArg("angle", 0.3), Device::kGpu, DType::kUInt8, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
