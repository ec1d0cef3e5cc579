// flip: hand-checked mirrors on small images, per-sample flags, layouts and dtypes, errors,
// conformance; clips (FHWC, FCHW) equal their frames flipped one by one with the clip's flags;
// GPU equal to CPU (exact: no arithmetic) on random images and clips of varying sizes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize/image_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Flip() { return OpSpec("flip", "f").AddInput("x").AddOutput("y"); }

INSTANTIATE_TEST_SUITE_P(
    Flip, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Flip(), Device::kCpu, DType::kUInt8, true, "HWC", 3, 0.0},
                      ConformanceCase{"gpu", Flip().SetArg("vertical", 1), Device::kGpu, DType::kUInt8, true, "HWC", 3, 0.0},
                      ConformanceCase{"gpu_hw_f32", Flip(), Device::kGpu, DType::kFloat32, true, "HW", 0, 0.0}),
    CaseName);

// A 2 x 3 RGB image whose pixel (y, x) has channels (10y + x, 100 + 10y + x, 200 + 10y + x).
TensorListCPU Tiny() {
  std::vector<uint8_t> px;
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 3; ++x) {
      for (int c = 0; c < 3; ++c) px.push_back(static_cast<uint8_t>(100 * c + 10 * y + x));
    }
  }
  return MakeBatch<uint8_t>({{2, 3, 3}}, {px}, "HWC");
}

uint8_t Pixel(const TensorListCPU& out, int y, int x, int c) { return At<uint8_t>(out, 0, (y * 3 + x) * 3 + c); }

TEST(FlipCpu, MirrorsPixelsNotChannels) {
  for (int h : {0, 1}) {
    for (int v : {0, 1}) {
      const TensorListCPU out = RunOp({Flip().SetArg("horizontal", h).SetArg("vertical", v), Tiny()}, Device::kCpu);
      ASSERT_EQ(out.shape(0), (Shape{2, 3, 3}));
      for (int y = 0; y < 2; ++y) {
        for (int x = 0; x < 3; ++x) {
          const int sy = v ? 1 - y : y, sx = h ? 2 - x : x;
          for (int c = 0; c < 3; ++c) EXPECT_EQ(Pixel(out, y, x, c), 100 * c + 10 * sy + sx) << h << v << y << x << c;
        }
      }
    }
  }
}

TEST(FlipCpu, ChwMirrorsEachPlane) {
  // 2 planes of 2 x 2: plane p, (y, x) = 10p + 2y + x.
  const TensorListCPU in = MakeBatch<float>({{2, 2, 2}}, {{0, 1, 2, 3, 10, 11, 12, 13}}, "CHW");
  const TensorListCPU out = RunOp({Flip().SetArg("vertical", 1), in}, Device::kCpu);
  const std::vector<float> want = {3, 2, 1, 0, 13, 12, 11, 10};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(At<float>(out, 0, i), want[static_cast<size_t>(i)]) << i;
  EXPECT_EQ(out.layout(), Layout("CHW"));
}

TEST(FlipCpu, PerSampleFlagsFromAnotherNode) {
  const TensorListCPU in = RandomImages({{5, 4, 3}, {5, 4, 3}, {5, 4, 3}}, DType::kUInt8);
  const TensorListCPU flags = MakeBatch<int32_t>({{}, {}, {}}, {{0}, {1}, {0}});
  const TensorListCPU out =
      RunOp({Flip().SetArgInput("horizontal", "coin"), in, {{"horizontal", flags}}}, Device::kCpu);
  const TensorListCPU flipped = RunOp({Flip(), in}, Device::kCpu);
  EXPECT_EQ(CompareExact(SampleOf(out, 0), SampleOf(in, 0)), "");
  EXPECT_EQ(CompareExact(SampleOf(out, 1), SampleOf(flipped, 1)), "");
  EXPECT_EQ(CompareExact(SampleOf(out, 2), SampleOf(in, 2)), "");
  EXPECT_NE(CompareExact(SampleOf(out, 1), SampleOf(in, 1)), "");
}

TEST(FlipCpu, TwiceIsIdentityForEveryDtype) {
  for (DType t : {DType::kUInt8, DType::kInt16, DType::kFloat32, DType::kFloat64}) {
    const TensorListCPU in = RandomImages({{7, 9, 2}, {1, 5, 1}}, t);
    const OpSpec spec = Flip().SetArg("vertical", 1);
    const TensorListCPU once = RunOp({spec, in}, Device::kCpu);
    EXPECT_EQ(CompareExact(RunOp({spec, once}, Device::kCpu), in), "") << DTypeName(t);
  }
}

TEST(FlipCpu, InputErrorsSayWhatArrived) {
  try {
    RunOp({Flip(), RandomImages({{2, 3, 4, 5}}, DType::kUInt8, "NHWC")}, Device::kCpu);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("op \"flip\" (f): input 0: expected layout HWC, CHW, HW, FHWC or FCHW, got "
                                    "NHWC (a sequence is FHWC or FCHW: frames first)"));
  }
}

// Per-sample flags for `n` samples: horizontal i % 2, vertical (i / 2) % 2 (all four pairs).
std::vector<std::pair<std::string, TensorListCPU>> FlagInputs(int n) {
  std::vector<std::vector<int32_t>> h, v;
  for (int i = 0; i < n; ++i) {
    h.push_back({i % 2});
    v.push_back({(i / 2) % 2});
  }
  const std::vector<Shape> scalars(static_cast<size_t>(n), Shape{});
  return {{"horizontal", MakeBatch<int32_t>(scalars, h)}, {"vertical", MakeBatch<int32_t>(scalars, v)}};
}

OpSpec FlipPerSample() { return Flip().SetArgInput("horizontal", "h").SetArgInput("vertical", "v"); }

// Clips of mixed frame counts (0 and 1 included) and sizes: every frame mirrored as its clip's
// flags say, i.e. the clip equals its frames flipped one by one as images.
TEST(FlipCpu, ClipsEqualTheirFramesFlippedOneByOne) {
  const TensorListCPU fhwc = MixedClips(DType::kUInt8, 3);
  const auto args = FlagInputs(fhwc.num_samples());
  const auto frames = [&](const TensorListCPU& batch) { return RunWith(FlipPerSample(), Device::kCpu, batch, args); };
  EXPECT_EQ(CompareWithFrameByFrame(RunWith(FlipPerSample(), Device::kCpu, fhwc, args), fhwc, frames), "")
      << "seed " << RngSeed();
  // FCHW (e.g. crop_mirror_normalize's clips): planes of each frame.
  const TensorListCPU fchw =
      RandomClips({2, 4, 1, 3}, {{3, 9, 13}, {2, 17, 5}, {1, 6, 6}, {4, 11, 12}}, DType::kFloat32, "FCHW");
  const auto args4 = FlagInputs(fchw.num_samples());
  const auto chw_frames = [&](const TensorListCPU& batch) { return RunWith(FlipPerSample(), Device::kCpu, batch, args4); };
  EXPECT_EQ(CompareWithFrameByFrame(RunWith(FlipPerSample(), Device::kCpu, fchw, args4), fchw, chw_frames, "CHW"), "")
      << "seed " << RngSeed();
}

TEST(FlipGpu, ClipsEqualCpu) {
  CONVEYOR_REQUIRE_GPU();
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU clips = RandomClips({3, 1, 6, 0, 2, 4}, RandomFrameShapes(6, 1, 150, 3), t);
    const auto args = FlagInputs(clips.num_samples());
    EXPECT_EQ(CompareExact(RunWith(FlipPerSample(), Device::kGpu, clips, args),
                           RunWith(FlipPerSample(), Device::kCpu, clips, args)),
              "")
        << DTypeName(t) << " seed " << RngSeed();
  }
}

TEST(FlipGpu, EqualsCpuOnRandomImagesOfVaryingSizes) {
  CONVEYOR_REQUIRE_GPU();
  for (DType t : {DType::kUInt8, DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
    for (const char* layout : {"HWC", "CHW"}) {
      std::vector<Shape> shapes;
      for (int i = 0; i < 6; ++i) {
        const int64_t a = RandomVector<int>(1, 1, 300)[0], b = RandomVector<int>(1, 1, 300)[0];
        shapes.push_back(layout[0] == 'C' ? Shape{3, a, b} : Shape{a, b, 3});
      }
      shapes.push_back(layout[0] == 'C' ? Shape{3, 0, 5} : Shape{0, 5, 3});
      const TensorListCPU in = RandomImages(shapes, t, layout);
      std::vector<std::vector<int32_t>> h, v;
      for (size_t i = 0; i < shapes.size(); ++i) {
        h.push_back({static_cast<int32_t>(i % 2)});
        v.push_back({static_cast<int32_t>((i / 2) % 2)});
      }
      const std::vector<Shape> scalars(shapes.size(), Shape{});
      const OpRun r{Flip().SetArgInput("horizontal", "h").SetArgInput("vertical", "v"), in,
                  {{"horizontal", MakeBatch<int32_t>(scalars, h)}, {"vertical", MakeBatch<int32_t>(scalars, v)}}};
      EXPECT_EQ(CompareExact(RunOp(r, Device::kGpu), RunOp(r, Device::kCpu)), "")
          << DTypeName(t) << " " << layout << " seed " << RngSeed();
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
