// random_resized_crop: the output is the resize of the window drawn from the sample's Philox
// stream (checked against resize of that window cut out by hand), windows change with the
// iteration, errors, conformance; an FHWC clip draws one window that every frame is cropped with;
// GPU equal to CPU (bit-identical) on varying sizes, clips and iterations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "operators/common/crop_window.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize/image_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Rrc() {
  return OpSpec("random_resized_crop", "rrc").AddInput("x").AddOutput("y").SetArg("size", std::vector<double>{24, 20});
}

INSTANTIATE_TEST_SUITE_P(
    RandomResizedCrop, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Rrc(), Device::kCpu, DType::kUInt8, true, "HWC", 3, 0.0},
                      ConformanceCase{"gpu", Rrc(), Device::kGpu, DType::kUInt8, true, "HWC", 3, 0.0},
                      ConformanceCase{"gpu_cubic_f32", Rrc().SetArg("interp_type", "cubic"), Device::kGpu,
                                      DType::kFloat32, true, "HWC", 3, 0.0}),
    CaseName);

// The window [y, y + h) x [x, x + w) of sample i as its own image.
TensorListCPU Cut(const TensorListCPU& in, int i, const ops::CropWindow& w) {
  const Shape s = in.shape(i);
  const size_t e = DTypeSize(in.dtype());
  TensorListCPU out;
  out.Resize({Shape{w.h, w.w, s[2]}}, in.dtype());
  out.set_layout("HWC");
  for (int64_t y = 0; y < w.h; ++y) {
    std::memcpy(static_cast<char*>(out.raw_sample(0)) + y * w.w * s[2] * e,
                static_cast<const char*>(in.raw_sample(i)) + ((w.y + y) * s[1] + w.x) * s[2] * e,
                static_cast<size_t>(w.w * s[2]) * e);
  }
  return out;
}

TEST(RandomResizedCropCpu, EqualsResizeOfTheDrawnWindow) {
  const TensorListCPU in = RandomImages({{120, 90, 3}, {40, 200, 3}, {64, 64, 1}}, DType::kUInt8);
  for (const char* interp : {"linear", "cubic"}) {
    const OpSpec spec = Rrc().SetArg("interp_type", interp);
    OpHarness h(spec, Device::kCpu, in.num_samples());
    h.SetInput(0, in);
    h.set_seed(99);
    h.set_iteration(5);
    h.Run();
    const TensorListCPU out = h.OutputToHost(0);
    const ops::RandomCropParams params;  // the defaults: area [0.08, 1], aspect [3/4, 4/3], 10 attempts
    for (int i = 0; i < in.num_samples(); ++i) {
      Philox rng(99, h.workspace().node_id(), 5, static_cast<uint32_t>(i));
      const ops::CropWindow w = ops::DrawRandomCropWindow(rng, in.shape(i)[0], in.shape(i)[1], params);
      const TensorListCPU want = RunOp(
          {OpSpec("resize", "r").AddInput("x").AddOutput("y").SetArg("size", std::vector<double>{24, 20})
               .SetArg("interp_type", interp),
           Cut(in, i, w)},
          Device::kCpu);
      EXPECT_EQ(CompareExact(SampleOf(out, i), want), "") << interp << " sample " << i;
    }
  }
}

TEST(RandomResizedCropCpu, WindowsChangeWithIterationAndRepeatWithIt) {
  const TensorListCPU in = RandomImages({{100, 100, 3}}, DType::kUInt8);
  const TensorListCPU a = RunOp({Rrc(), in, {}, 1}, Device::kCpu);
  const TensorListCPU b = RunOp({Rrc(), in, {}, 2}, Device::kCpu);
  EXPECT_NE(CompareExact(a, b), "");
  EXPECT_EQ(CompareExact(a, RunOp({Rrc(), in, {}, 1}, Device::kCpu)), "");
}

TEST(RandomResizedCropCpu, FullAreaAndSquareAspectTakesTheWholeImage) {
  // random_area [1, 1] with aspect [1, 1] on a square image: the window is the image.
  const TensorListCPU in = RandomImages({{50, 50, 3}}, DType::kFloat32);
  const TensorListCPU out = RunOp({Rrc()
                                       .SetArg("random_area", std::vector<double>{1, 1})
                                       .SetArg("random_aspect_ratio", std::vector<double>{1, 1}),
                                   in},
                                  Device::kCpu);
  const TensorListCPU want = RunOp(
      {OpSpec("resize", "r").AddInput("x").AddOutput("y").SetArg("size", std::vector<double>{24, 20}), in}, Device::kCpu);
  EXPECT_EQ(CompareExact(out, want), "");
}

std::string ConstructionError(const OpSpec& spec) {
  try {
    OpHarness h(spec, Device::kCpu);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(RandomResizedCropCpu, ArgumentErrorsSayWhatAndWhere) {
  EXPECT_THAT(ConstructionError(Rrc().SetArg("size", std::vector<double>{24})),
              HasSubstr("op \"random_resized_crop\" (rrc): size must be [h, w], got 1 values"));
  EXPECT_THAT(ConstructionError(Rrc().SetArg("random_area", std::vector<double>{0.5, 0.2})),
              HasSubstr("op \"random_resized_crop\" (rrc): random_area must be [lo, hi] with 0 < lo <= hi <= 1, got [0.5, 0.2]"));
  EXPECT_THAT(ConstructionError(Rrc().SetArg("random_aspect_ratio", std::vector<double>{2, 1})),
              HasSubstr("op \"random_resized_crop\" (rrc): random_aspect_ratio must be [lo, hi] with 0 < lo <= hi"));
  EXPECT_THAT(ConstructionError(OpSpec("random_resized_crop", "rrc").AddInput("x").AddOutput("y")),
              HasSubstr("missing required argument \"size\""));
  try {
    RunOp({Rrc(), RandomImages({{3, 4, 4}}, DType::kUInt8, "CHW")}, Device::kCpu);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("op \"random_resized_crop\" (rrc): input 0: expected layout HWC or FHWC, got CHW"));
  }
  try {
    RunOp({Rrc(), RandomImages({{2, 3, 4, 3}}, DType::kUInt8, "FCHW")}, Device::kCpu);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("op \"random_resized_crop\" (rrc): input 0: expected layout HWC or FHWC, got FCHW "
                                    "(a sequence is FHWC: frames first)"));
  }
}

// One window per clip: the sample's draw (Philox of seed, node, iteration, sample; the frame's
// height and width), and every frame of the clip is that window cut out and resized.
TEST(RandomResizedCropCpu, ClipFramesShareTheClipsWindow) {
  const TensorListCPU clips = RandomClips({4, 1, 3}, {{120, 90, 3}, {40, 200, 3}, {64, 64, 1}}, DType::kUInt8);
  OpHarness h(Rrc(), Device::kCpu, clips.num_samples());
  h.SetInput(0, clips);
  h.set_seed(99);
  h.set_iteration(5);
  h.Run();
  const TensorListCPU out = h.OutputToHost(0);
  EXPECT_EQ(out.layout(), Layout("FHWC"));
  const ops::RandomCropParams params;
  const OpSpec resize = OpSpec("resize", "r").AddInput("x").AddOutput("y").SetArg("size", std::vector<double>{24, 20});
  for (int i = 0; i < clips.num_samples(); ++i) {
    const Shape frame = FrameShape(clips.shape(i));
    ASSERT_EQ(out.shape(i), (Shape{clips.shape(i)[0], 24, 20, frame[2]}));
    Philox rng(99, h.workspace().node_id(), 5, static_cast<uint32_t>(i));
    const ops::CropWindow w = ops::DrawRandomCropWindow(rng, frame[0], frame[1], params);
    const size_t frame_bytes = size_t{24} * 20 * static_cast<size_t>(frame[2]);
    for (int64_t j = 0; j < clips.shape(i)[0]; ++j) {
      const TensorListCPU want = RunOp({resize, Cut(FrameBatch(clips, j, "HWC"), i, w)}, Device::kCpu);
      EXPECT_EQ(std::memcmp(static_cast<const uint8_t*>(out.raw_sample(i)) + j * frame_bytes, want.raw_sample(0),
                            frame_bytes),
                0)
          << "clip " << i << " frame " << j << " seed " << RngSeed();
    }
  }
}

// Mixed frame counts (0 and 1 included) and sizes, several iterations: a clip equals its frames
// run one by one as images with the clip's sample index (so with the clip's window).
TEST(RandomResizedCropCpu, ClipsEqualTheirFramesCroppedOneByOne) {
  for (const char* interp : {"linear", "cubic"}) {
    for (int64_t it = 0; it < 3; ++it) {
      const TensorListCPU clips = MixedClips(DType::kUInt8, 3);
      const OpSpec spec = Rrc().SetArg("interp_type", interp);
      const auto frames = [&](const TensorListCPU& b) { return RunWith(spec, Device::kCpu, b, {}, it); };
      EXPECT_EQ(CompareWithFrameByFrame(RunWith(spec, Device::kCpu, clips, {}, it), clips, frames), "")
          << interp << " iteration " << it << " seed " << RngSeed();
    }
  }
}

TEST(RandomResizedCropGpu, ClipsEqualCpu) {
  CONVEYOR_REQUIRE_GPU();
  for (const char* interp : {"nearest", "linear", "cubic"}) {
    for (DType t : {DType::kUInt8, DType::kFloat32}) {
      for (int64_t it = 0; it < 2; ++it) {
        const TensorListCPU clips = RandomClips({3, 1, 6, 0, 2}, RandomFrameShapes(5, 1, 300, 3), t);
        const OpSpec spec = Rrc().SetArg("size", std::vector<double>{56, 72}).SetArg("interp_type", interp);
        EXPECT_EQ(CompareExact(RunWith(spec, Device::kGpu, clips, {}, it), RunWith(spec, Device::kCpu, clips, {}, it)), "")
            << interp << " " << DTypeName(t) << " iteration " << it << " seed " << RngSeed();
      }
    }
  }
}

TEST(RandomResizedCropGpu, EqualsCpuOnVaryingSizesAndIterations) {
  CONVEYOR_REQUIRE_GPU();
  for (const char* interp : {"nearest", "linear", "cubic"}) {
    for (DType t : {DType::kUInt8, DType::kFloat32}) {
      for (int64_t it = 0; it < 3; ++it) {
        std::vector<Shape> shapes;
        for (int i = 0; i < 6; ++i) shapes.push_back(Shape{RandomVector<int>(1, 1, 400)[0], RandomVector<int>(1, 1, 400)[0], 3});
        shapes.push_back(Shape{0, 10, 3});
        const OpRun r{Rrc().SetArg("size", std::vector<double>{56, 72}).SetArg("interp_type", interp),
                      RandomImages(shapes, t), {}, it};
        EXPECT_EQ(CompareExact(RunOp(r, Device::kGpu), RunOp(r, Device::kCpu)), "")
            << interp << " " << DTypeName(t) << " iteration " << it << " seed " << RngSeed();
      }
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
