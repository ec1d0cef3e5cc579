// brightness and contrast (DALI's split of brightness_contrast): CPU results against the formulas
// in double, the same bytes as brightness_contrast with the other argument at its identity,
// errors, GPU vs CPU (bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Op(const std::string& op) { return OpSpec(op, op + "_node").AddInput("x").AddOutput("y"); }

TEST(BrightnessContrastSplit, FormulasInDoubleWithPerSampleArguments) {
  const std::vector<Shape> shapes = RandomHwcShapes(4, 1, 20, 20, 3);
  const std::vector<float> factor = RandomVector<float>(4, 0.f, 2.f), extra = RandomVector<float>(4, -0.2f, 0.2f);
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const double max = type == DType::kUInt8 ? 255 : 1, center = type == DType::kUInt8 ? 128 : 0.5;
    const TensorListCPU b = RunOp(Op("brightness").SetArgInput("brightness", "b").SetArgInput("brightness_shift", "s"), Device::kCpu,
                                  in, {{"brightness", PerSampleScalars(factor)}, {"brightness_shift", PerSampleScalars(extra)}});
    const TensorListCPU k = RunOp(Op("contrast").SetArgInput("contrast", "k"), Device::kCpu, in, {{"contrast", PerSampleScalars(factor)}});
    for (int s = 0; s < 4; ++s) {
      const size_t i = static_cast<size_t>(s);
      for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
        const double x = At(in, s, j);
        const double want_b = extra[i] * max + factor[i] * x, want_k = center + factor[i] * (x - center);
        if (type == DType::kUInt8) {
          ASSERT_LE(std::abs(At(b, s, j) - std::clamp(want_b, 0.0, 255.0)), 0.5 + 1e-3);
          ASSERT_LE(std::abs(At(k, s, j) - std::clamp(want_k, 0.0, 255.0)), 0.5 + 1e-3);
        } else {
          ASSERT_NEAR(At(b, s, j), want_b, 1e-6);
          ASSERT_NEAR(At(k, s, j), want_k, 1e-6);
        }
      }
    }
  }
}

TEST(BrightnessContrastSplit, SameBytesAsBrightnessContrast) {
  const TensorListCPU in = RandomBatch(RandomHwcShapes(3, 1, 30, 30, 3), DType::kUInt8, "HWC");
  ExpectSameBytes(RunOp(Op("brightness").SetArg("brightness", 1.3).SetArg("brightness_shift", 0.05), Device::kCpu, in),
                  RunOp(Op("brightness_contrast").SetArg("brightness", 1.3).SetArg("brightness_shift", 0.05), Device::kCpu, in),
                  "brightness");
  ExpectSameBytes(RunOp(Op("contrast").SetArg("contrast", 0.6).SetArg("contrast_center", 100.0), Device::kCpu, in),
                  RunOp(Op("brightness_contrast").SetArg("contrast", 0.6).SetArg("contrast_center", 100.0), Device::kCpu, in),
                  "contrast");
}

TEST(BrightnessContrastSplit, Errors) {
  EXPECT_THAT(RunError(Op("contrast").SetArgInput("contrast", "k"), RandomBatch({Shape{2, 2, 3}, Shape{2, 2, 3}}, DType::kUInt8, "HWC"),
                       {{"contrast", PerSampleScalars<float>({1.f, -1.f})}}),
              HasSubstr("op \"contrast\" (contrast_node): argument \"contrast\": expected a value >= 0, got -1 at sample 1"));
  EXPECT_THAT(RunError(Op("brightness"), RandomBatch({Shape{4}}, DType::kInt32, "")),
              HasSubstr("op \"brightness\" (brightness_node): input 0: expected dtype uint8, float16, bfloat16 or float32, got int32"));
}

TEST(BrightnessContrastSplitGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = RandomHwcShapes(5, 1, 70, 300, 3);
  const ArgInputs args = {{"brightness", PerSampleScalars(RandomVector<float>(5, 0.f, 2.f))},
                          {"contrast", PerSampleScalars(RandomVector<float>(5, 0.f, 2.f))}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const OpSpec b = Op("brightness").SetArgInput("brightness", "b"), k = Op("contrast").SetArgInput("contrast", "k");
    const ArgInputs ba = {{"brightness", args.at("brightness")}}, ka = {{"contrast", args.at("contrast")}};
    ExpectSameBytes(RunOp(b, Device::kGpu, in, ba), RunOp(b, Device::kCpu, in, ba), "brightness");
    ExpectSameBytes(RunOp(k, Device::kGpu, in, ka), RunOp(k, Device::kCpu, in, ka), "contrast");
  }
}

INSTANTIATE_TEST_SUITE_P(
    BrightnessContrastSplit, OperatorConformance,
    ::testing::Values(ConformanceCase{"brightness_cpu", Op("brightness").SetArg("brightness", 1.2), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"brightness_gpu", Op("brightness").SetArg("brightness_shift", 0.1), Device::kGpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"contrast_cpu", Op("contrast").SetArg("contrast", 1.5), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"contrast_gpu", Op("contrast").SetArg("contrast", 0.5), Device::kGpu}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
