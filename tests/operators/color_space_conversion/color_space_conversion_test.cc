// color_space_conversion: hand-computed pixels for every kind of map, round trips, copies,
// errors, GPU vs CPU (bit-identical) for every pair and dtype, conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<std::string> kSpaces = {"RGB", "BGR", "GRAY", "YCbCr"};

OpSpec Csc(const std::string& from, const std::string& to) {
  return OpSpec("color_space_conversion", "csc").AddInput("x").AddOutput("y").SetArg("image_type", from)
      .SetArg("output_type", to);
}

TensorListCPU Pixels(const std::vector<uint8_t>& v, int64_t c) {
  return MakeBatch<uint8_t>({Shape{1, static_cast<int64_t>(v.size()) / c, c}}, {v}, "HWC");
}

TEST(ColorSpaceConversion, RgbToYCbCrByHand) {
  // red: Y 76.245 → 76, Cb 84.972 → 85, Cr 255.5 → 255 (clamped); black: 0, 128, 128;
  // white: 255, 128, 128; green: Y 149.685 → 150, Cb 43.528 → 44, Cr 21.235 → 21.
  const TensorListCPU out =
      RunOp(Csc("RGB", "YCbCr"), Device::kCpu, Pixels({255, 0, 0, 0, 0, 0, 255, 255, 255, 0, 255, 0}, 3));
  EXPECT_EQ(out.shape(0), (Shape{1, 4, 3}));
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(76, 85, 255, 0, 128, 128, 255, 128, 128, 150, 44, 21));
}

TEST(ColorSpaceConversion, YCbCrToRgbAndGrayByHand) {
  // (100, 128, 228): R = 100 + 1.402 * 100 = 240.2, G = 100 - 0.714136 * 100 = 28.59, B = 100.
  EXPECT_THAT(SampleValues(RunOp(Csc("YCbCr", "RGB"), Device::kCpu, Pixels({100, 128, 228}, 3)), 0),
              ElementsAre(240, 29, 100));
  EXPECT_THAT(SampleValues(RunOp(Csc("YCbCr", "BGR"), Device::kCpu, Pixels({100, 128, 228}, 3)), 0),
              ElementsAre(100, 29, 240));
  // YCbCr → GRAY is Y itself, whatever the chroma.
  EXPECT_THAT(SampleValues(RunOp(Csc("YCbCr", "GRAY"), Device::kCpu, Pixels({37, 5, 250, 255, 0, 0}, 3)), 0),
              ElementsAre(37, 255));
}

TEST(ColorSpaceConversion, GrayAndSwapsByHand) {
  // 0.299 * 10 + 0.587 * 20 + 0.114 * 30 = 18.15.
  const TensorListCPU gray = RunOp(Csc("RGB", "GRAY"), Device::kCpu, Pixels({10, 20, 30}, 3));
  EXPECT_EQ(gray.shape(0), (Shape{1, 1, 1}));
  EXPECT_THAT(SampleValues(gray, 0), ElementsAre(18));
  EXPECT_THAT(SampleValues(RunOp(Csc("BGR", "GRAY"), Device::kCpu, Pixels({30, 20, 10}, 3)), 0), ElementsAre(18));
  const TensorListCPU f = MakeBatch<float>({Shape{1, 1, 3}}, {{10.f, 20.f, 30.f}}, "HWC");
  EXPECT_NEAR(SampleValues(RunOp(Csc("RGB", "GRAY"), Device::kCpu, f), 0)[0], 18.15f, 1e-4);
  EXPECT_THAT(SampleValues(RunOp(Csc("RGB", "BGR"), Device::kCpu, Pixels({1, 2, 3}, 3)), 0), ElementsAre(3, 2, 1));
  EXPECT_THAT(SampleValues(RunOp(Csc("GRAY", "RGB"), Device::kCpu, Pixels({77, 3}, 1)), 0),
              ElementsAre(77, 77, 77, 3, 3, 3));
  EXPECT_THAT(SampleValues(RunOp(Csc("GRAY", "YCbCr"), Device::kCpu, Pixels({77}, 1)), 0), ElementsAre(77, 128, 128));
}

TEST(ColorSpaceConversion, FloatIsUnclampedOnTheSameScale) {
  // Red: Cr = 128 + 0.5 * 255 = 255.5 stays 255.5 in float32.
  const TensorListCPU f = MakeBatch<float>({Shape{1, 1, 3}}, {{255.f, 0.f, 0.f}}, "HWC");
  const std::vector<float> v = SampleValues(RunOp(Csc("RGB", "YCbCr"), Device::kCpu, f), 0);
  EXPECT_NEAR(v[0], 76.245f, 1e-4);
  EXPECT_NEAR(v[1], 84.97232f, 1e-4);
  EXPECT_NEAR(v[2], 255.5f, 1e-4);
}

TEST(ColorSpaceConversion, RoundTripRgbYCbCrRgb) {
  const TensorListCPU rgb = RandomBatch({Shape{31, 17, 3}}, DType::kUInt8, "HWC");
  const TensorListCPU back =
      RunOp(Csc("YCbCr", "RGB"), Device::kCpu, RunOp(Csc("RGB", "YCbCr"), Device::kCpu, rgb));
  const TensorListCPU rgb_f = RandomBatch({Shape{31, 17, 3}}, DType::kFloat32, "HWC", 0.f, 255.f);
  const TensorListCPU back_f =
      RunOp(Csc("YCbCr", "RGB"), Device::kCpu, RunOp(Csc("RGB", "YCbCr"), Device::kCpu, rgb_f));
  const int64_t n = rgb.shape(0).num_elements();
  int64_t off_by_more = 0;
  for (int64_t j = 0; j < n; ++j) {
    // uint8 YCbCr carries up to 0.5 rounding per channel (and Cr/Cb clamping at saturated
    // colours), which the inverse can amplify by up to 1.772: a few pixels land 2 away.
    EXPECT_LE(std::abs(At(back, 0, j) - At(rgb, 0, j)), 2.f) << j;
    off_by_more += std::abs(At(back, 0, j) - At(rgb, 0, j)) > 1.f;
    // float32: the matrices are inverse to 6 digits.
    EXPECT_NEAR(At(back_f, 0, j), At(rgb_f, 0, j), 1e-2) << j;
  }
  EXPECT_LT(off_by_more, n / 20) << "most uint8 round trips are within 1";
}

TEST(ColorSpaceConversion, SameTypeIsACopy) {
  for (const std::string& space : kSpaces) {
    const int64_t c = space == "GRAY" ? 1 : 3;
    const TensorListCPU in = RandomBatch({Shape{5, 7, c}, Shape{0, 3, c}}, DType::kFloat32, "HWC", -1e3f, 1e3f);
    ExpectSameBytes(RunOp(Csc(space, space), Device::kCpu, in), in, space);
  }
}

// An unlabelled batch of 3-D samples is taken as HWC (CheckInput) and comes out labelled HWC, with
// the pixels the labelled batch gives.
TEST(ColorSpaceConversion, UnlabelledInputIsTakenAsHwcAndLabelled) {
  const TensorListCPU labelled = RandomBatch({Shape{3, 5, 3}, Shape{2, 7, 3}}, DType::kUInt8, "HWC");
  TensorListCPU unlabelled = labelled;
  unlabelled.set_layout(Layout());
  const TensorListCPU want = RunOp(Csc("RGB", "YCbCr"), Device::kCpu, labelled);
  const TensorListCPU got = RunOp(Csc("RGB", "YCbCr"), Device::kCpu, unlabelled);
  EXPECT_EQ(got.layout(), Layout("HWC"));
  for (int s = 0; s < 2; ++s) EXPECT_EQ(SampleValues(got, s), SampleValues(want, s)) << "sample " << s;
}

TEST(ColorSpaceConversion, Errors) {
  EXPECT_THAT(RunError(Csc("RGB", "GRAY"), RandomBatch({Shape{2, 2, 3}, Shape{2, 2, 1}}, DType::kUInt8, "HWC")),
              HasSubstr("op \"color_space_conversion\" (csc): input 0: sample 1 has shape (2, 2, 1): expected 3 "
                        "channels for image_type RGB, got 1"));
  EXPECT_THAT(RunError(Csc("GRAY", "RGB"), RandomBatch({Shape{2, 2, 3}}, DType::kUInt8, "HWC")),
              HasSubstr("sample 0 has shape (2, 2, 3): expected 1 channel for image_type GRAY, got 3"));
  EXPECT_THAT(RunError(Csc("RGB", "BGR"), RandomBatch({Shape{3, 2, 2}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"color_space_conversion\" (csc): input 0: expected layout HWC, got CHW"));
  EXPECT_THAT(RunError(Csc("RGB", "BGR"), RandomBatch({Shape{2, 2, 3}}, DType::kFloat16, "HWC")),
              HasSubstr("input 0: expected dtype uint8 or float32, got float16"));
  OpSpec bad = Csc("RGB", "HSV");
  EXPECT_THAT(ErrorText([&] { bad.Validate(); }), HasSubstr("argument \"output_type\""));
  OpSpec missing = OpSpec("color_space_conversion", "csc").AddInput("x").AddOutput("y");
  EXPECT_THAT(ErrorText([&] { missing.Validate(); }), HasSubstr("output_type"));
}

TEST(ColorSpaceConversionGpu, MatchesCpuBitExactlyForEveryPair) {
  CONVEYOR_REQUIRE_GPU();
  for (const std::string& from : kSpaces) {
    const int64_t c = from == "GRAY" ? 1 : 3;
    // Varying sizes; widths that leave tails of every length after the 16-pixel groups.
    std::vector<Shape> shapes = RandomHwcShapes(6, 1, 90, 301, c);
    shapes.push_back(Shape{1, 1, c});
    shapes.push_back(Shape{0, 5, c});
    for (DType t : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU in = RandomBatch(shapes, t, "HWC", -20.f, 275.f);  // floats beyond 0..255 too
      for (const std::string& to : kSpaces) {
        ExpectSameBytes(RunOp(Csc(from, to), Device::kGpu, in), RunOp(Csc(from, to), Device::kCpu, in),
                        from + " -> " + to + " " + std::string(DTypeName(t)));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    ColorSpaceConversion, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"cpu", Csc("RGB", "YCbCr"), Device::kCpu, DType::kUInt8, true, "HWC", 3},
        ConformanceCase{"gpu", Csc("RGB", "YCbCr"), Device::kGpu, DType::kUInt8, true, "HWC", 3},
        ConformanceCase{"gpu_f32_gray", Csc("BGR", "GRAY"), Device::kGpu, DType::kFloat32, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
