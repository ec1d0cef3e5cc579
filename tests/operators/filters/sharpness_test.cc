// sharpness: CPU results against torchvision's formula evaluated in double, per-sample factors,
// borders and tiny images unchanged, errors, GPU vs CPU (bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Sharp() { return OpSpec("sharpness", "sh").AddInput("x").AddOutput("y"); }

TEST(Sharpness, MatchesTorchvisionFormulaInDouble) {
  std::vector<Shape> shapes = RandomHwcShapes(4, 1, 30, 30, 3);
  shapes.push_back(Shape{2, 9, 3});  // H ≤ 2: unchanged
  const std::vector<float> factor = RandomVector<float>(shapes.size(), 0.f, 2.5f);
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const double max = type == DType::kUInt8 ? 255 : 1;
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const TensorListCPU out = RunOp(Sharp().SetArgInput("factor", "f"), Device::kCpu, in, {{"factor", PerSampleScalars(factor)}});
    for (int s = 0; s < in.num_samples(); ++s) {
      const int64_t h = in.shape(s)[0], w = in.shape(s)[1];
      const double f = factor[static_cast<size_t>(s)];
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          for (int64_t c = 0; c < 3; ++c) {
            const int64_t e = (y * w + x) * 3 + c;
            const double v = At(in, s, e);
            double want = v;
            if (y > 0 && x > 0 && y < h - 1 && x < w - 1) {
              double smooth = 0;
              for (int64_t dy = -1; dy <= 1; ++dy) {
                for (int64_t dx = -1; dx <= 1; ++dx) smooth += At(in, s, ((y + dy) * w + x + dx) * 3 + c) * (dy == 0 && dx == 0 ? 5 : 1);
              }
              smooth /= 13;
              if (type == DType::kUInt8) smooth = std::nearbyint(smooth);
              want = std::clamp(f * v + (1 - f) * smooth, 0.0, max);
            }
            const double tol = type == DType::kUInt8 ? 0.5 + 2e-3 : 2e-5;
            ASSERT_LE(std::abs(At(out, s, e) - want), tol) << "sample " << s << " (" << y << ", " << x << ", " << c << ")";
          }
        }
      }
    }
  }
}

TEST(Sharpness, FactorOneKeepsTheImage) {
  const TensorListCPU in = RandomBatch(RandomHwcShapes(3, 1, 20, 20, 3), DType::kUInt8, "HWC");
  ExpectSameBytes(RunOp(Sharp(), Device::kCpu, in), in, "factor 1");
}

TEST(Sharpness, Errors) {
  EXPECT_THAT(RunError(Sharp().SetArgInput("factor", "f"), RandomBatch({Shape{4, 4, 3}}, DType::kUInt8, "HWC"),
                       {{"factor", PerSampleScalars<float>({-1.f})}}),
              HasSubstr("op \"sharpness\" (sh): argument \"factor\": expected a value >= 0, got -1 at sample 0"));
  EXPECT_THAT(RunError(Sharp(), RandomBatch({Shape{4, 4, 3}}, DType::kInt16, "HWC")),
              HasSubstr("op \"sharpness\" (sh): input 0: expected dtype uint8, float16, bfloat16 or float32, got int16"));
}

TEST(SharpnessGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = RandomHwcShapes(6, 1, 100, 300, 3);
  const ArgInputs args = {{"factor", PerSampleScalars(RandomVector<float>(6, 0.f, 3.f))}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const OpSpec spec = Sharp().SetArgInput("factor", "f");
    ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args), std::string(DTypeName(type)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sharpness, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Sharp().SetArg("factor", 2.0), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Sharp().SetArg("factor", 0.3), Device::kGpu, DType::kUInt8, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
