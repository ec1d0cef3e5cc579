// resize on the CPU: hand-computed images, an independent double-precision evaluation of the
// sampling formula, output sizes, per-sample sizes, every argument error; FHWC clips equal their
// frames resized one by one to the clip's size; plus the conformance suite (CPU and GPU cases).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize/image_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Resize() { return OpSpec("resize", "r").AddInput("x").AddOutput("y"); }

INSTANTIATE_TEST_SUITE_P(
    Resize, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"cpu", Resize().SetArg("size", std::vector<double>{5, 7}), Device::kCpu, DType::kUInt8, true,
                        "HWC", 3, 0.0},
        ConformanceCase{"gpu", Resize().SetArg("size", std::vector<double>{5, 7}), Device::kGpu, DType::kUInt8, true,
                        "HWC", 3, 0.0},
        ConformanceCase{"gpu_cubic_f32", Resize().SetArg("resize_shorter", 3.0).SetArg("interp_type", "cubic"),
                        Device::kGpu, DType::kFloat32, true, "HWC", 3, 0.0}),
    CaseName);

// ---- hand-computed ----

// 2x2 -> 4x4 linear: along each axis the output centres 0.25, 0.75, 1.25, 1.75 take weights
// [1, 0], [.75, .25], [.25, .75], [0, 1] (edge taps renormalised).
TEST(ResizeCpu, LinearUpscaleByTwoMatchesHandComputation) {
  const TensorListCPU in = MakeBatch<float>({{2, 2, 1}}, {{0, 100, 200, 40}}, "HWC");
  const TensorListCPU out = RunOp({Resize().SetArg("size", std::vector<double>{4, 4}), in}, Device::kCpu);
  ASSERT_EQ(out.shape(0), (Shape{4, 4, 1}));
  const std::vector<float> want = {0,   25,     75,    100,  //
                                   50,  58.75,  76.25, 85,   //
                                   150, 126.25, 78.75, 55,   //
                                   200, 160,    80,    40};
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(At<float>(out, 0, i), want[static_cast<size_t>(i)]) << i;
}

TEST(ResizeCpu, Uint8OutputRoundsHalfUp) {
  const TensorListCPU in = MakeBatch<uint8_t>({{2, 2, 1}}, {{0, 100, 200, 40}}, "HWC");
  const TensorListCPU out = RunOp({Resize().SetArg("size", std::vector<double>{4, 4}), in}, Device::kCpu);
  const std::vector<int> want = {0, 25, 75, 100, 50, 59, 76, 85, 150, 126, 79, 55, 200, 160, 80, 40};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(At<uint8_t>(out, 0, i), want[static_cast<size_t>(i)]) << i;
}

// 4x4 -> 2x2 nearest: centres (o + 0.5) * 2 = 1, 3 pick rows and columns 1 and 3.
TEST(ResizeCpu, NearestDownscalePicksPixelCentres) {
  std::vector<uint8_t> px(4 * 4 * 2);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 7);
  const TensorListCPU in = MakeBatch<uint8_t>({{4, 4, 2}}, {px}, "HWC");
  const TensorListCPU out =
      RunOp({Resize().SetArg("size", std::vector<double>{2, 2}).SetArg("interp_type", "nearest"), in}, Device::kCpu);
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 2; ++x) {
      for (int c = 0; c < 2; ++c) {
        EXPECT_EQ(At<uint8_t>(out, 0, (y * 2 + x) * 2 + c), px[static_cast<size_t>(((2 * y + 1) * 4 + 2 * x + 1) * 2 + c)]);
      }
    }
  }
}

// Weights sum to one for every filter, so a flat image stays flat (cubic overshoot included).
TEST(ResizeCpu, FlatImageStaysFlatForEveryFilter) {
  for (const char* interp : {"nearest", "linear", "cubic", "INTERP_CUBIC"}) {
    for (bool aa : {false, true}) {
      const TensorListCPU in = MakeBatch<uint8_t>({{37, 53, 3}}, {std::vector<uint8_t>(37 * 53 * 3, 173)}, "HWC");
      const TensorListCPU out = RunOp(
          {Resize().SetArg("size", std::vector<double>{11, 90}).SetArg("interp_type", interp).SetArg("antialias", aa), in},
          Device::kCpu);
      for (int64_t i = 0; i < out.shape(0).num_elements(); ++i) {
        ASSERT_EQ(At<uint8_t>(out, 0, i), 173) << interp << " antialias " << aa << " element " << i;
      }
    }
  }
}

// ---- an independent evaluation: out = sum_j sum_i wy_j wx_i in[j][i], in double ----

double Kernel(const std::string& interp, double t) {
  t = std::abs(t);
  if (interp == "linear") return std::max(0.0, 1 - t);
  const double a = -0.5;  // Keys
  if (t < 1) return (a + 2) * t * t * t - (a + 3) * t * t + 1;
  if (t < 2) return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
  return 0;
}

// (index, weight) of every input pixel that output `o` reads along one axis.
std::vector<std::pair<int, double>> AxisWeights(const std::string& interp, bool antialias, int in, int out, int o) {
  const double scale = static_cast<double>(in) / out;
  const double center = (o + 0.5) * scale;
  if (interp == "nearest") return {{std::clamp(static_cast<int>(std::floor(center)), 0, in - 1), 1.0}};
  const double stretch = antialias && scale > 1 ? scale : 1;
  std::vector<std::pair<int, double>> w;
  double sum = 0;
  for (int j = 0; j < in; ++j) {
    const double k = Kernel(interp, (j + 0.5 - center) / stretch);
    if (k != 0) {
      w.emplace_back(j, k);
      sum += k;
    }
  }
  for (auto& [j, k] : w) k /= sum;
  return w;
}

struct Case {
  std::string interp;
  bool antialias;
  Shape in;
  int out_h, out_w;
};

TEST(ResizeCpu, MatchesIndependentDoublePrecisionFormula) {
  const std::vector<Case> cases = {
      {"linear", true, {47, 61, 3}, 20, 13},  {"linear", false, {47, 61, 3}, 20, 13},
      {"linear", true, {9, 12, 1}, 31, 40},   {"cubic", true, {50, 33, 3}, 17, 70},
      {"cubic", false, {50, 33, 4}, 17, 9},   {"cubic", true, {200, 7, 2}, 9, 7},
      {"nearest", true, {23, 29, 3}, 40, 11}, {"linear", true, {375, 500, 3}, 224, 224},
  };
  for (const Case& c : cases) {
    for (DType out_dtype : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU in = RandomImages({c.in}, DType::kUInt8);
      const TensorListCPU out = RunOp({Resize()
                                           .SetArg("size", std::vector<double>{double(c.out_h), double(c.out_w)})
                                           .SetArg("interp_type", c.interp)
                                           .SetArg("antialias", c.antialias)
                                           .SetArg("dtype", std::string(DTypeName(out_dtype))),
                                       in},
                                      Device::kCpu);
      ASSERT_EQ(out.shape(0), (Shape{c.out_h, c.out_w, c.in[2]}));
      const int ch = static_cast<int>(c.in[2]);
      int64_t worst_at = -1;
      double worst = 0;
      for (int oy = 0; oy < c.out_h; ++oy) {
        const auto wy = AxisWeights(c.interp, c.antialias, static_cast<int>(c.in[0]), c.out_h, oy);
        for (int ox = 0; ox < c.out_w; ++ox) {
          const auto wx = AxisWeights(c.interp, c.antialias, static_cast<int>(c.in[1]), c.out_w, ox);
          for (int k = 0; k < ch; ++k) {
            double ref = 0;
            for (auto [j, a] : wy) {
              for (auto [i, b] : wx) ref += a * b * At<uint8_t>(in, 0, (j * c.in[1] + i) * ch + k);
            }
            const int64_t idx = (static_cast<int64_t>(oy) * c.out_w + ox) * ch + k;
            const double got = out_dtype == DType::kUInt8 ? At<uint8_t>(out, 0, idx) : At<float>(out, 0, idx);
            if (out_dtype == DType::kUInt8) ref = std::clamp(std::floor(ref + 0.5), 0.0, 255.0);
            if (std::abs(got - ref) > worst) {
              worst = std::abs(got - ref);
              worst_at = idx;
            }
          }
        }
      }
      // float32 scales and sums against exact doubles: a sampling position off by ~1e-5 pixels
      // times a 255 step moves a value by < 0.01, which can flip a uint8 rounding by 1.
      const double tolerance = out_dtype == DType::kUInt8 ? 1.0 : 0.02;
      EXPECT_LE(worst, tolerance) << c.interp << " antialias " << c.antialias << " " << c.in.ToString() << " -> "
                                  << c.out_h << "x" << c.out_w << " " << DTypeName(out_dtype) << " at element "
                                  << worst_at;
    }
  }
}

TEST(ResizeCpu, AntialiasChangesOnlyDownscaledResults) {
  const TensorListCPU in = RandomImages({{40, 30, 3}}, DType::kUInt8);
  auto run = [&](std::vector<double> size, bool aa) {
    return RunOp({Resize().SetArg("size", size).SetArg("antialias", aa), in}, Device::kCpu);
  };
  EXPECT_EQ(CompareExact(run({80, 45}, true), run({80, 45}, false)), "");  // upscale: no effect
  EXPECT_NE(CompareExact(run({13, 10}, true), run({13, 10}, false)), "");  // downscale: filtered
}

// ---- sizes ----

Shape OutShape(OpSpec spec, Shape in) {
  return RunOp({std::move(spec), RandomImages({in}, DType::kUInt8)}, Device::kCpu).shape(0);
}

TEST(ResizeCpu, OutputSizesFollowDaliRules) {
  EXPECT_EQ(OutShape(Resize().SetArg("resize_shorter", 256.0), {375, 500, 3}), (Shape{256, 341, 3}));
  EXPECT_EQ(OutShape(Resize().SetArg("resize_shorter", 256.0), {500, 375, 3}), (Shape{341, 256, 3}));
  EXPECT_EQ(OutShape(Resize().SetArg("resize_longer", 224.0), {375, 500, 1}), (Shape{168, 224, 1}));
  EXPECT_EQ(OutShape(Resize().SetArg("size", std::vector<double>{224, 0}), {375, 500, 3}), (Shape{224, 299, 3}));
  EXPECT_EQ(OutShape(Resize().SetArg("size", std::vector<double>{0, 100}), {375, 500, 3}), (Shape{75, 100, 3}));
  EXPECT_EQ(OutShape(Resize().SetArg("resize_x", 100.0), {375, 500, 3}), (Shape{75, 100, 3}));
  EXPECT_EQ(OutShape(Resize().SetArg("resize_y", 150.0), {375, 500, 3}), (Shape{150, 200, 3}));
  EXPECT_EQ(OutShape(Resize().SetArg("resize_x", 10.0).SetArg("resize_y", 20.0), {375, 500, 3}), (Shape{20, 10, 3}));
  // max_size caps the longer side of an aspect-keeping resize.
  EXPECT_EQ(OutShape(Resize().SetArg("resize_shorter", 256.0).SetArg("max_size", std::vector<double>{300}),
                     {100, 400, 3}),
            (Shape{75, 300, 3}));
  EXPECT_EQ(OutShape(Resize().SetArg("size", std::vector<double>{50, 60}).SetArg("max_size", std::vector<double>{40, 100}),
                     {10, 10, 3}),
            (Shape{40, 60, 3}));
  // A zero-sized image has nothing to resample.
  EXPECT_EQ(OutShape(Resize().SetArg("size", std::vector<double>{5, 5}), {0, 4, 3}), (Shape{0, 0, 3}));
}

TEST(ResizeCpu, PerSampleSizesFromAnotherNode) {
  const TensorListCPU in = RandomImages({{20, 30, 3}, {8, 8, 3}, {16, 4, 3}}, DType::kUInt8);
  const OpSpec spec = Resize().SetArgInput("size", "sizes");
  const TensorListCPU out = RunOp({spec, in, {{"size", ArgValues({{5, 6}, {16, 0}, {3, 9}})}}}, Device::kCpu);
  EXPECT_EQ(out.shape(0), (Shape{5, 6, 3}));
  EXPECT_EQ(out.shape(1), (Shape{16, 16, 3}));
  EXPECT_EQ(out.shape(2), (Shape{3, 9, 3}));
  // A sample equals a run of that image alone with its size given as a constant.
  const TensorListCPU alone =
      RunOp({Resize().SetArg("size", std::vector<double>{3, 9}), SampleOf(in, 2)}, Device::kCpu);
  EXPECT_EQ(CompareExact(SampleOf(out, 2), alone), "");
}

// ---- errors ----

std::string ErrorOf(OpSpec spec, TensorListCPU in, Device device = Device::kCpu) {
  try {
    RunOp({std::move(spec), std::move(in)}, device);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResizeCpu, ArgumentErrorsSayWhatAndWhere) {
  const TensorListCPU img = RandomImages({{4, 4, 3}, {6, 5, 3}}, DType::kUInt8);
  EXPECT_THAT(ErrorOf(Resize(), img),
              HasSubstr("op \"resize\" (r): sample 0: give exactly one of size, resize_x/resize_y, resize_shorter, "
                        "resize_longer; got none"));
  EXPECT_THAT(ErrorOf(Resize().SetArg("resize_shorter", 3.0).SetArg("resize_x", 4.0), img),
              HasSubstr("got 2 of them"));
  EXPECT_THAT(ErrorOf(Resize().SetArg("size", std::vector<double>{3, 4, 5}), img),
              HasSubstr("op \"resize\" (r): sample 0: size must be [h, w], got [3, 4, 5]"));
  EXPECT_THAT(ErrorOf(Resize().SetArg("resize_x", 4.0).SetArg("max_size", std::vector<double>{1, 2, 3}), img),
              HasSubstr("max_size must be [m] or [h, w], got [1, 2, 3]"));
}

TEST(ResizeCpu, PerSampleNegativeSizeNamesTheSample) {
  const TensorListCPU img = RandomImages({{4, 4, 3}, {6, 5, 3}}, DType::kUInt8);
  try {
    RunOp({Resize().SetArgInput("resize_x", "xs"), img, {{"resize_x", ArgValues({{3}, {-2}}, true)}}}, Device::kCpu);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("op \"resize\" (r): sample 1: resize_x must not be negative, got -2"));
  }
  try {
    RunOp({Resize().SetArgInput("size", "s"), img, {{"size", ArgValues({{3, 3}, {-1, 4}})}}}, Device::kCpu);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("op \"resize\" (r): sample 1: size must not be negative, got [-1, 4]"));
  }
}

// ---- clips (FHWC) ----

// Mixed frame counts (0 and 1 included) and sizes, per-sample output sizes (up and down), every
// filter: each frame is resized to its clip's size as the frame alone would be; the output is FHWC.
TEST(ResizeCpu, ClipsEqualTheirFramesResizedOneByOne) {
  for (const char* interp : {"nearest", "linear", "cubic"}) {
    for (DType t : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU clips = MixedClips(t, 3);
      std::vector<std::vector<float>> sizes;
      for (int i = 0; i < clips.num_samples(); ++i) {
        sizes.push_back({float(RandomVector<int>(1, 1, 60)[0]), float(RandomVector<int>(1, 1, 60)[0])});
      }
      const std::vector<std::pair<std::string, TensorListCPU>> args = {{"size", ArgValues(sizes)}};
      const OpSpec spec = Resize().SetArgInput("size", "s").SetArg("interp_type", interp);
      const auto frames = [&](const TensorListCPU& b) { return RunWith(spec, Device::kCpu, b, args); };
      EXPECT_EQ(CompareWithFrameByFrame(RunWith(spec, Device::kCpu, clips, args), clips, frames), "")
          << interp << " " << DTypeName(t) << " seed " << RngSeed();
    }
  }
}

// Sizes derived from the frame (resize_shorter) are the frame's, and a clip of empty frames gives
// (F, 0, 0, C).
TEST(ResizeCpu, ClipSizesComeFromTheFrames) {
  const TensorListCPU clips = RandomClips({4, 2, 3}, {{20, 40, 3}, {0, 7, 3}, {9, 3, 1}}, DType::kUInt8);
  const TensorListCPU out = RunOp({Resize().SetArg("resize_shorter", 10.0), clips}, Device::kCpu);
  EXPECT_EQ(out.layout(), Layout("FHWC"));
  EXPECT_EQ(out.shape(0), (Shape{4, 10, 20, 3}));
  EXPECT_EQ(out.shape(1), (Shape{2, 0, 0, 3}));
  EXPECT_EQ(out.shape(2), (Shape{3, 30, 10, 1}));
}

TEST(ResizeCpu, InputErrorsSayWhatArrived) {
  const OpSpec spec = Resize().SetArg("size", std::vector<double>{2, 2});
  EXPECT_THAT(ErrorOf(spec, RandomImages({{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"resize\" (r): input 0: expected layout HWC or FHWC, got CHW"));
  EXPECT_THAT(ErrorOf(spec, RandomImages({{2, 3, 4, 3}}, DType::kUInt8, "NHWC")),
              HasSubstr("op \"resize\" (r): input 0: expected layout HWC or FHWC, got NHWC (a sequence is FHWC: "
                        "frames first)"));
  EXPECT_THAT(ErrorOf(spec, RandomClips({2, 3}, {{3, 4, 3}, {3, 3, 9}}, DType::kUInt8)),
              HasSubstr("op \"resize\" (r): input 0: sample 1: expected at most 8 channels, got 9 (shape (3, 3, 3, 9))"));
  EXPECT_THAT(ErrorOf(spec, RandomImages({{3, 4, 3}}, DType::kInt32)),
              HasSubstr("op \"resize\" (r): input 0: expected dtype uint8 or float32, got int32"));
  EXPECT_THAT(ErrorOf(spec, RandomImages({{3, 4, 3}, {2, 2, 9}}, DType::kUInt8)),
              HasSubstr("op \"resize\" (r): input 0: sample 1: expected at most 8 channels, got 9 (shape (2, 2, 9))"));
  EXPECT_THAT(ErrorOf(spec, RandomImages({{3, 4}}, DType::kUInt8, "HW")),
              HasSubstr("expected layout HWC or FHWC, got HW"));
}

}  // namespace
}  // namespace conveyor::testing
