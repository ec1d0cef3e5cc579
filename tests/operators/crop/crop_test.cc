// crop: windows placed as DALI places them, padding, per-sample arguments, every error message,
// conformance; clips (FHWC) equal their frames cropped one by one with the clip's window; GPU equal
// to CPU (exact) on random images and clips of varying sizes, padded or not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize/image_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Crop() { return OpSpec("crop", "c").AddInput("x").AddOutput("y"); }

INSTANTIATE_TEST_SUITE_P(
    Crop, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"cpu", Crop().SetArg("crop", std::vector<double>{1, 1}), Device::kCpu, DType::kUInt8, true,
                        "HWC", 3, 0.0},
        ConformanceCase{"gpu_pad", Crop().SetArg("crop", std::vector<double>{4, 6}).SetArg("out_of_bounds_policy", "pad"),
                        Device::kGpu, DType::kUInt8, true, "HWC", 3, 0.0},
        ConformanceCase{"gpu_f32", Crop().SetArg("crop_h", 1.0).SetArg("crop_w", 1.0).SetArg("crop_pos_x", 0.0),  // fits the 1x1 sample
                        Device::kGpu, DType::kFloat32, true, "HWC", 3, 0.0}),
    CaseName);

// A 4 x 5 one-channel image with value 10y + x.
TensorListCPU Grid() {
  std::vector<float> v;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 5; ++x) v.push_back(static_cast<float>(10 * y + x));
  }
  return MakeBatch<float>({{4, 5, 1}}, {v}, "HWC");
}

// Expects out[y][x] = 10(y0 + y) + (x0 + x), or `fill` outside the 4 x 5 grid.
void ExpectWindow(const TensorListCPU& out, int64_t y0, int64_t x0, int64_t h, int64_t w, float fill = 0) {
  ASSERT_EQ(out.shape(0), (Shape{h, w, 1}));
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      const int64_t sy = y0 + y, sx = x0 + x;
      const bool inside = sy >= 0 && sy < 4 && sx >= 0 && sx < 5;
      EXPECT_EQ(At<float>(out, 0, y * w + x), inside ? static_cast<float>(10 * sy + sx) : fill) << y << "," << x;
    }
  }
}

TEST(CropCpu, WindowPlacedByCropPos) {
  // x0 = round(pos * (5 - 2)), y0 = round(pos * (4 - 3)).
  ExpectWindow(RunOp({Crop().SetArg("crop", std::vector<double>{3, 2}), Grid()}, Device::kCpu), 1, 2, 3, 2);  // 0.5: round(1.5), round(0.5) -> 2, 1
  ExpectWindow(RunOp({Crop().SetArg("crop", std::vector<double>{3, 2}).SetArg("crop_pos_x", 0.0).SetArg("crop_pos_y", 0.0),
                      Grid()},
                     Device::kCpu),
               0, 0, 3, 2);
  ExpectWindow(RunOp({Crop().SetArg("crop_h", 2.0).SetArg("crop_w", 5.0).SetArg("crop_pos_y", 1.0), Grid()}, Device::kCpu),
               2, 0, 2, 5);
}

TEST(CropCpu, PadsOutsideWithFillValues) {
  // A 6 x 7 window centred on the 4 x 5 image: y0 = round(0.5 * -2) = -1, x0 = round(0.5 * -2) = -1.
  ExpectWindow(RunOp({Crop().SetArg("crop", std::vector<double>{6, 7}).SetArg("out_of_bounds_policy", "pad")
                          .SetArg("fill_values", std::vector<double>{-3}),
                      Grid()},
                     Device::kCpu),
               -1, -1, 6, 7, -3.f);
}

TEST(CropCpu, PerChannelFillValuesAreRoundedForUint8) {
  const TensorListCPU in = MakeBatch<uint8_t>({{1, 1, 3}}, {{7, 8, 9}}, "HWC");
  const TensorListCPU out = RunOp({Crop()
                                       .SetArg("crop", std::vector<double>{1, 2})
                                       .SetArg("crop_pos_x", 0.0)
                                       .SetArg("out_of_bounds_policy", "pad")
                                       .SetArg("fill_values", std::vector<double>{1.4, 300, 2.5}),
                                   in},
                                  Device::kCpu);
  const std::vector<int> want = {7, 8, 9, 1, 255, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(At<uint8_t>(out, 0, i), want[static_cast<size_t>(i)]) << i;
}

TEST(CropCpu, PerSampleWindowsFromAnotherNode) {
  const TensorListCPU in = RandomImages({{10, 12, 3}, {6, 6, 3}}, DType::kUInt8);
  const TensorListCPU out = RunOp({Crop().SetArgInput("crop", "sizes").SetArgInput("crop_pos_x", "px"), in,
                                   {{"crop", ArgValues({{2, 3}, {6, 1}})}, {"crop_pos_x", ArgValues({{0}, {1}}, true)}}},
                                  Device::kCpu);
  ASSERT_EQ(out.shape(0), (Shape{2, 3, 3}));
  ASSERT_EQ(out.shape(1), (Shape{6, 1, 3}));
  // Sample 0: y0 = round(0.5 * 8) = 4, x0 = 0; sample 1: y0 = 0, x0 = 5.
  for (int y = 0; y < 2; ++y) {
    for (int k = 0; k < 9; ++k) EXPECT_EQ(At<uint8_t>(out, 0, y * 9 + k), At<uint8_t>(in, 0, (4 + y) * 36 + k));
  }
  for (int y = 0; y < 6; ++y) {
    for (int k = 0; k < 3; ++k) EXPECT_EQ(At<uint8_t>(out, 1, y * 3 + k), At<uint8_t>(in, 1, (y * 6 + 5) * 3 + k));
  }
}

std::string ErrorOf(const OpRun& r) {
  try {
    RunOp(r, Device::kCpu);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(CropCpu, ErrorsSayWhatAndWhere) {
  const TensorListCPU img = RandomImages({{4, 5, 3}, {3, 3, 3}}, DType::kUInt8);
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{4, 4}), img}),
              HasSubstr("op \"crop\" (c): sample 1: crop window 4x4 at (y=-1, x=-1) does not fit the 3x3 image; use "
                        "out_of_bounds_policy: pad"));
  EXPECT_THAT(ErrorOf({Crop(), img}),
              HasSubstr("op \"crop\" (c): sample 0: the crop window must be at least 1x1 (give crop [h, w] or crop_h and "
                        "crop_w), got 0x0"));
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{1, 2, 3}), img}),
              HasSubstr("op \"crop\" (c): sample 0: crop must be [h, w], got 3 values"));
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{1, 1}).SetArg("out_of_bounds_policy", "pad")
                           .SetArg("fill_values", std::vector<double>{1, 2}),
                       img}),
              HasSubstr("op \"crop\" (c): sample 0: fill_values has 2 values, the image has 3 channels (give 1 or 3)"));
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{1, 1}).SetArgInput("crop_pos_y", "p"), img,
                       {{"crop_pos_y", ArgValues({{0.5}, {1.5}}, true)}}}),
              HasSubstr("op \"crop\" (c): sample 1: crop_pos_x and crop_pos_y must lie in [0, 1], got 0.5 and 1.5"));
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{1, 1}), RandomImages({{3, 3, 3}}, DType::kUInt8, "CHW")}),
              HasSubstr("op \"crop\" (c): input 0: expected layout HWC or FHWC, got CHW"));
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{1, 1}), RandomImages({{2, 3, 3, 3}}, DType::kUInt8, "HWCF")}),
              HasSubstr("op \"crop\" (c): input 0: expected layout HWC or FHWC, got HWCF (a sequence is FHWC: frames "
                        "first)"));
  // A clip's window is checked against its frames' size.
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{4, 2}), RandomClips({1, 5}, {{4, 4, 3}, {3, 7, 3}}, DType::kUInt8)}),
              HasSubstr("op \"crop\" (c): sample 1: crop window 4x2 at (y=-1, x=3) does not fit the 3x7 image"));
  EXPECT_THAT(ErrorOf({Crop().SetArg("crop", std::vector<double>{1, 1}), RandomImages({{3, 3, 3}}, DType::kInt16)}),
              HasSubstr("op \"crop\" (c): input 0: expected dtype uint8 or float32, got int16"));
}

TEST(CropCpu, FillValuesCountIsCheckedAtConstruction) {
  try {
    OpHarness h(Crop().SetArg("crop", std::vector<double>{1, 1}).SetArg("fill_values", std::vector<double>{}),
                Device::kCpu);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("op \"crop\" (c): fill_values must have 1 to 16 values, got 0"));
  }
}

// Random per-sample windows (sizes up to `limit`, anchors in [0, 1]) for `n` samples.
std::vector<std::pair<std::string, TensorListCPU>> RandomWindows(int n, int limit) {
  std::vector<std::vector<float>> sizes, px, py;
  for (int i = 0; i < n; ++i) {
    sizes.push_back({float(RandomVector<int>(1, 1, limit)[0]), float(RandomVector<int>(1, 1, limit)[0])});
    px.push_back({RandomVector<float>(1, 0.f, 1.f)[0]});
    py.push_back({RandomVector<float>(1, 0.f, 1.f)[0]});
  }
  return {{"crop", ArgValues(sizes)}, {"crop_pos_x", ArgValues(px, true)}, {"crop_pos_y", ArgValues(py, true)}};
}

OpSpec CropPerSample(const char* policy) {
  return Crop().SetArgInput("crop", "s").SetArgInput("crop_pos_x", "x").SetArgInput("crop_pos_y", "y")
      .SetArg("out_of_bounds_policy", policy).SetArg("fill_values", std::vector<double>{7, 100.5, 300});
}

// Clips of mixed frame counts and sizes, per-sample windows (inside, and with padding partly
// outside): each frame is cut with its clip's window, as the frame alone would be.
TEST(CropCpu, ClipsEqualTheirFramesCroppedOneByOne) {
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    for (const char* policy : {"error", "pad"}) {
      const TensorListCPU clips = MixedClips(t, 3, 12, 40);
      const auto args = RandomWindows(clips.num_samples(), std::string(policy) == "pad" ? 50 : 12);
      const auto frames = [&](const TensorListCPU& b) { return RunWith(CropPerSample(policy), Device::kCpu, b, args); };
      EXPECT_EQ(CompareWithFrameByFrame(RunWith(CropPerSample(policy), Device::kCpu, clips, args), clips, frames), "")
          << DTypeName(t) << " " << policy << " seed " << RngSeed();
    }
  }
}

TEST(CropGpu, ClipsEqualCpu) {
  CONVEYOR_REQUIRE_GPU();
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    for (const char* policy : {"error", "pad"}) {
      const TensorListCPU clips = RandomClips({4, 1, 7, 0, 2, 3}, RandomFrameShapes(6, 40, 200, 3), t);
      const auto args = RandomWindows(clips.num_samples(), std::string(policy) == "pad" ? 260 : 39);
      EXPECT_EQ(CompareExact(RunWith(CropPerSample(policy), Device::kGpu, clips, args),
                             RunWith(CropPerSample(policy), Device::kCpu, clips, args)),
                "")
          << DTypeName(t) << " " << policy << " seed " << RngSeed();
    }
  }
}

TEST(CropGpu, EqualsCpuOnRandomImagesOfVaryingSizes) {
  CONVEYOR_REQUIRE_GPU();
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    for (const char* policy : {"error", "pad"}) {
      std::vector<Shape> shapes;
      std::vector<std::vector<float>> sizes, px, py;
      for (int i = 0; i < 8; ++i) {
        const int h = RandomVector<int>(1, 40, 300)[0], w = RandomVector<int>(1, 40, 300)[0];
        shapes.push_back(Shape{h, w, 3});
        const int limit = std::string(policy) == "pad" ? 400 : 39;  // pad: windows larger than the image too
        sizes.push_back({float(RandomVector<int>(1, 1, limit)[0]), float(RandomVector<int>(1, 1, limit)[0])});
        px.push_back({RandomVector<float>(1, 0.f, 1.f)[0]});
        py.push_back({RandomVector<float>(1, 0.f, 1.f)[0]});
      }
      shapes.push_back(Shape{0, 7, 3});
      sizes.push_back({3, 3});
      px.push_back({0.5f});
      py.push_back({0.5f});
      const OpRun r{Crop().SetArgInput("crop", "s").SetArgInput("crop_pos_x", "x").SetArgInput("crop_pos_y", "y")
                        .SetArg("out_of_bounds_policy", policy).SetArg("fill_values", std::vector<double>{7, 100.5, 300}),
                    RandomImages(shapes, t),
                    {{"crop", ArgValues(sizes)}, {"crop_pos_x", ArgValues(px, true)}, {"crop_pos_y", ArgValues(py, true)}}};
      EXPECT_EQ(CompareExact(RunOp(r, Device::kGpu), RunOp(r, Device::kCpu)), "")
          << DTypeName(t) << " " << policy << " seed " << RngSeed();
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
