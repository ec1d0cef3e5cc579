// brightness_contrast: DALI's formula on hand-computed values, per-sample arguments, errors, GPU
// vs CPU (bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

OpSpec Bc() { return OpSpec("brightness_contrast", "bc").AddInput("x").AddOutput("y"); }

TEST(BrightnessContrast, DaliFormulaOnUint8) {
  // contrast 2 around 128, brightness 0.5, shift 0.1 * 255 = 25.5:
  // 25.5 + 0.5 * (128 + 2 * (in - 128)) = in - 38.5 → 100: 61.5 → 62 (RNE), 10: -28.5 → 0, 250: 211.5 → 212.
  const TensorListCPU in = MakeBatch<uint8_t>({Shape{1, 1, 3}}, {{100, 10, 250}}, "HWC");
  const TensorListCPU out = RunOp(Bc().SetArg("contrast", 2.0).SetArg("brightness", 0.5).SetArg("brightness_shift", 0.1),
                                  Device::kCpu, in);
  EXPECT_EQ(out.dtype(), DType::kUInt8);
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(62, 0, 212));
}

TEST(BrightnessContrast, FloatCenterDefaultsToHalfAndDtype) {
  // float input: center 0.5; contrast 3: 0.5 + 3 * (in - 0.5); float16 output.
  const TensorListCPU in = MakeBatch<float>({Shape{3}}, {{0.5f, 0.75f, 0.f}});
  const TensorListCPU out = RunOp(Bc().SetArg("contrast", 3.0).SetArg("dtype", std::string("float16")), Device::kCpu, in);
  EXPECT_EQ(out.dtype(), DType::kFloat16);
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(0.5f, 1.25f, -1.f));
}

TEST(BrightnessContrast, PerSampleBrightness) {
  const TensorListCPU in = MakeBatch<uint8_t>({Shape{2}, Shape{2}}, {{10, 20}, {10, 20}});
  const TensorListCPU out = RunOp(Bc().SetArgInput("brightness", "b"), Device::kCpu, in,
                                  {{"brightness", PerSampleScalars<float>({2.f, 0.5f})}});
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(20, 40));
  EXPECT_THAT(SampleValues(out, 1), ElementsAre(5, 10));
}

TEST(BrightnessContrast, Errors) {
  EXPECT_THAT(RunError(Bc(), RandomBatch({Shape{2}}, DType::kInt16, "")),
              HasSubstr("op \"brightness_contrast\" (bc): input 0: expected dtype uint8, float16, bfloat16 or float32, got int16"));
  OpSpec bad = Bc().SetArg("dtype", std::string("int8"));
  EXPECT_THAT(ErrorText([&] { bad.Validate(); }), HasSubstr("argument \"dtype\""));
}

TEST(BrightnessContrastGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = RandomHwcShapes(6, 1, 70, 401, 3);
  std::vector<float> b, k;
  for (int i = 0; i < 6; ++i) {
    b.push_back(RandomVector<float>(1, 0.5f, 1.5f)[0]);
    k.push_back(RandomVector<float>(1, 0.5f, 1.5f)[0]);
  }
  const ArgInputs args = {{"brightness", PerSampleScalars(b)}, {"contrast", PerSampleScalars(k)}};
  for (DType in_type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, in_type, "HWC", 0.f, 1.f);
    for (const char* out_type : {"input", "uint8", "float16", "bfloat16", "float32"}) {
      const OpSpec spec = Bc().SetArgInput("brightness", "b").SetArgInput("contrast", "k")
                              .SetArg("brightness_shift", 0.05).SetArg("dtype", std::string(out_type));
      ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args),
                      std::string(DTypeName(in_type)) + " -> " + out_type);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    BrightnessContrast, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Bc().SetArg("contrast", 1.5), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Bc().SetArg("contrast", 1.5), Device::kGpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu_f32", Bc().SetArg("brightness", 0.7), Device::kGpu}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
