// resize_crop_mirror on the CPU: a hand-computed case; bit-equality with resize, then crop, then
// flip (rcm_test_util.h) for every filter, antialias, dtype pair, size argument and mirror, with
// per-sample windows; FHWC clips equal their frames one by one; every argument error names what
// was expected, what arrived and where; plus the conformance suite (CPU and GPU cases).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize_crop_mirror/rcm_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Resize() { return OpSpec("resize", "r").AddInput("x").AddOutput("y"); }

INSTANTIATE_TEST_SUITE_P(
    ResizeCropMirror, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"cpu",
                        ResizeCropMirror().SetArg("size", std::vector<double>{6, 8}).SetArg("crop", std::vector<double>{5, 7}),
                        Device::kCpu, DType::kUInt8, true, "HWC", 3, 0.0},
        ConformanceCase{"gpu",
                        ResizeCropMirror()
                            .SetArg("size", std::vector<double>{6, 8})
                            .SetArg("crop", std::vector<double>{5, 7})
                            .SetArg("mirror", int64_t{1}),
                        Device::kGpu, DType::kUInt8, true, "HWC", 3, 0.0},
        ConformanceCase{"gpu_cubic_f32",
                        ResizeCropMirror()
                            .SetArg("resize_shorter", 4.0)
                            .SetArg("crop", std::vector<double>{3, 3})
                            .SetArg("interp_type", "cubic")
                            .SetArg("mirror", int64_t{3}),
                        Device::kGpu, DType::kFloat32, true, "HWC", 3, 0.0}),
    CaseName);

// ---- hand-computed ----

// 2x2 -> 4x4 linear (resize_test's hand computation):
//   0   25     75     100
//   50  58.75  76.25  85
//   150 126.25 78.75  55
//   200 160    80     40
// crop 2x2 at crop_pos_y 1, crop_pos_x 0 is rows 2-3, columns 0-1; mirror 1 swaps the columns.
TEST(ResizeCropMirrorCpu, CropOfALinearUpscaleMirroredMatchesHandComputation) {
  const TensorListCPU in = MakeBatch<float>({{2, 2, 1}}, {{0, 100, 200, 40}}, "HWC");
  const TensorListCPU out = RunOp({ResizeCropMirror()
                                       .SetArg("size", std::vector<double>{4, 4})
                                       .SetArg("crop", std::vector<double>{2, 2})
                                       .SetArg("crop_pos_y", 1.0)
                                       .SetArg("crop_pos_x", 0.0)
                                       .SetArg("mirror", int64_t{1}),
                                   in},
                                  Device::kCpu);
  ASSERT_EQ(out.shape(0), (Shape{2, 2, 1}));
  const std::vector<float> want = {126.25f, 150, 160, 200};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(At<float>(out, 0, i), want[static_cast<size_t>(i)]) << i;
  // Vertical (2) and both (3).
  const TensorListCPU both = RunOp({ResizeCropMirror()
                                        .SetArg("size", std::vector<double>{4, 4})
                                        .SetArg("crop", std::vector<double>{2, 2})
                                        .SetArg("crop_pos_y", 1.0)
                                        .SetArg("crop_pos_x", 0.0)
                                        .SetArg("mirror", int64_t{3}),
                                    in},
                                   Device::kCpu);
  const std::vector<float> want_both = {160, 200, 126.25f, 150};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(At<float>(both, 0, i), want_both[static_cast<size_t>(i)]) << i;
}

// ---- against resize, then crop, then flip ----

// `resize_args` applied to both a resize spec (the reference) and the operator's spec.
using SizeArgs = std::function<OpSpec(OpSpec)>;

void ExpectEqualsResizeThenCropThenMirror(const SizeArgs& size_args, const std::string& interp, bool antialias,
                                          DType in_dtype, const std::string& out_dtype, const std::vector<Shape>& shapes) {
  SCOPED_TRACE(interp + " antialias " + std::to_string(antialias) + " " + std::string(DTypeName(in_dtype)) + " -> " +
               out_dtype + " seed " + std::to_string(RngSeed()));
  const auto common = [&](OpSpec s) {
    return size_args(std::move(s)).SetArg("interp_type", interp).SetArg("antialias", antialias).SetArg("dtype", out_dtype);
  };
  const TensorListCPU in = RandomImages(shapes, in_dtype);
  const OpSpec resize = common(Resize());
  const std::vector<Window> windows = RandomWindows(ResizedSizes(resize, in));
  const TensorListCPU got =
      RunOp({WithWindowInputs(common(ResizeCropMirror())), in, WindowArgs(windows)}, Device::kCpu);
  EXPECT_EQ(CompareExact(got, ResizeThenCropThenMirror(resize, in, windows)), "");
}

TEST(ResizeCropMirrorCpu, EqualsResizeThenCropThenMirrorForEveryFilterAndDtype) {
  const SizeArgs shorter = [](OpSpec s) { return s.SetArg("resize_shorter", 37.0); };
  for (const char* interp : {"nearest", "linear", "cubic"}) {
    for (bool aa : {true, false}) {
      for (DType in_dtype : {DType::kUInt8, DType::kFloat32}) {
        for (const char* out_dtype : {"same", "float32", "uint8"}) {
          ExpectEqualsResizeThenCropThenMirror(shorter, interp, aa, in_dtype, out_dtype,
                                               {{20, 31, 3}, {80, 61, 3}, {45, 45, 3}, {37, 100, 3}, {7, 9, 3}});
        }
      }
    }
  }
}

TEST(ResizeCropMirrorCpu, EqualsResizeThenCropThenMirrorForEverySizeArgument) {
  const std::vector<std::pair<std::string, SizeArgs>> modes = {
      {"size", [](OpSpec s) { return s.SetArg("size", std::vector<double>{30, 41}); }},
      {"size h only", [](OpSpec s) { return s.SetArg("size", std::vector<double>{30, 0}); }},
      {"resize_x", [](OpSpec s) { return s.SetArg("resize_x", 50.0); }},
      {"resize_y", [](OpSpec s) { return s.SetArg("resize_y", 19.0); }},
      {"resize_x and resize_y", [](OpSpec s) { return s.SetArg("resize_x", 23.0).SetArg("resize_y", 64.0); }},
      {"resize_longer", [](OpSpec s) { return s.SetArg("resize_longer", 44.0); }},
      {"resize_shorter + max_size",
       [](OpSpec s) { return s.SetArg("resize_shorter", 40.0).SetArg("max_size", std::vector<double>{50.0}); }},
  };
  for (const auto& [name, args] : modes) {
    SCOPED_TRACE(name);
    ExpectEqualsResizeThenCropThenMirror(args, "linear", true, DType::kUInt8, "same",
                                         {{60, 90, 3}, {33, 20, 1}, {100, 45, 4}});
    ExpectEqualsResizeThenCropThenMirror(args, "cubic", false, DType::kFloat32, "same", {{17, 26, 2}, {64, 64, 3}});
  }
}

// A per-sample resize size (fed), with per-sample windows.
TEST(ResizeCropMirrorCpu, PerSampleResizeSizesAndWindows) {
  const TensorListCPU in = RandomImages({{30, 40, 3}, {50, 20, 3}, {9, 9, 3}}, DType::kUInt8);
  const std::vector<std::vector<float>> sizes = {{20, 60}, {45, 45}, {5, 31}};
  std::vector<Window> windows;
  std::vector<TensorListCPU> want;
  for (int i = 0; i < 3; ++i) {
    const auto& s = sizes[static_cast<size_t>(i)];
    const OpSpec resize = Resize().SetArg("size", std::vector<double>{s[0], s[1]});
    windows.push_back(RandomWindows({{int64_t(s[0]), int64_t(s[1])}})[0]);
    want.push_back(ResizeThenCropThenMirror(resize, SampleOf(in, i), {windows.back()}));
  }
  auto args = WindowArgs(windows);
  args.emplace_back("size", ArgValues(sizes));
  const TensorListCPU got =
      RunOp({WithWindowInputs(ResizeCropMirror()).SetArgInput("size", "sizes"), in, args}, Device::kCpu);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(CompareExact(SampleOf(got, i), want[static_cast<size_t>(i)]), "") << i;
}

// A window the size of the resized image, unmirrored, is the resize itself (crop_pos irrelevant).
TEST(ResizeCropMirrorCpu, WholeWindowEqualsResize) {
  const TensorListCPU in = RandomImages({{375, 500, 3}, {41, 29, 3}}, DType::kUInt8);
  for (const char* interp : {"linear", "cubic", "nearest"}) {
    const TensorListCPU want =
        RunOp({Resize().SetArg("size", std::vector<double>{24, 32}).SetArg("interp_type", interp), in}, Device::kCpu);
    const TensorListCPU got = RunOp({ResizeCropMirror()
                                         .SetArg("size", std::vector<double>{24, 32})
                                         .SetArg("crop", std::vector<double>{24, 32})
                                         .SetArg("crop_pos_x", 0.9)
                                         .SetArg("interp_type", interp),
                                     in},
                                    Device::kCpu);
    EXPECT_EQ(CompareExact(got, want), "") << interp;
  }
}

// crop_h / crop_w instead of crop; the default crop_pos centres; zero-sized samples pass through.
TEST(ResizeCropMirrorCpu, CropHWDefaultCentreAndZeroSizedSamples) {
  const TensorListCPU in = RandomImages({{20, 30, 3}, {0, 0, 3}, {16, 16, 3}}, DType::kUInt8);
  const OpSpec resize = Resize().SetArg("resize_shorter", 16.0);
  const TensorListCPU got =
      RunOp({ResizeCropMirror().SetArg("resize_shorter", 16.0).SetArg("crop_h", 9.0).SetArg("crop_w", 12.0), in},
            Device::kCpu);
  ASSERT_EQ(got.shape(1), (Shape{0, 0, 3}));
  const Window centre{9, 12, 0.5, 0.5, 0};
  for (int i : {0, 2}) {
    EXPECT_EQ(CompareExact(SampleOf(got, i), ResizeThenCropThenMirror(resize, SampleOf(in, i), {centre})), "") << i;
  }
}

// ---- clips ----

TEST(ResizeCropMirrorCpu, ClipsEqualTheirFramesOneByOne) {
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU clips = MixedClips(t, 3, 16, 40);
    const std::vector<std::vector<float>> px = {{0.1f}, {1.f}, {0.f}, {0.5f}, {0.7f}};
    std::vector<std::vector<int64_t>> mirror = {{1}, {0}, {3}, {2}, {1}};
    const std::vector<std::pair<std::string, TensorListCPU>> args = {
        {"crop_pos_x", ArgValues(px, true)}, {"mirror", MakeBatch<int64_t>(std::vector<Shape>(5, Shape{}), mirror)}};
    const OpSpec spec = ResizeCropMirror()
                            .SetArg("resize_shorter", 12.0)
                            .SetArg("crop", std::vector<double>{10, 11})
                            .SetArgInput("crop_pos_x", "px")
                            .SetArgInput("mirror", "m");
    const auto frames = [&](const TensorListCPU& batch) { return RunWith(spec, Device::kCpu, batch, args); };
    EXPECT_EQ(CompareWithFrameByFrame(RunWith(spec, Device::kCpu, clips, args), clips, frames), "") << DTypeName(t);
  }
}

// ---- errors ----

std::string ErrorOf(const OpSpec& spec, const TensorListCPU& in,
                    const std::vector<std::pair<std::string, TensorListCPU>>& args = {}) {
  try {
    RunOp({spec, in, args}, Device::kCpu);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResizeCropMirrorCpu, BadArgumentsAreReportedWithExpectedGotAndNode) {
  const TensorListCPU in = RandomImages({{20, 30, 3}, {40, 40, 3}}, DType::kUInt8);
  // SetArg changes the spec it is called on: every case starts from a fresh one.
  const auto base = [] { return ResizeCropMirror().SetArg("resize_shorter", 16.0); };
  // No window.
  EXPECT_THAT(ErrorOf(base(), in), HasSubstr("op \"resize_crop_mirror\" (rcm): sample 0: expected a crop window of at "
                                           "least 1x1 (give crop [h, w] or crop_h and crop_w), got 0x0"));
  EXPECT_THAT(ErrorOf(base().SetArg("crop", std::vector<double>{4, 4, 4}), in),
              HasSubstr("(rcm): sample 0: crop must be [h, w], got 3 values"));
  // A window larger than the resized image (16x24 and 16x16).
  EXPECT_THAT(ErrorOf(base().SetArg("crop", std::vector<double>{16, 20}), in),
              HasSubstr("(rcm): sample 1: expected a crop window inside the resized image, got 16x20 in 16x16 "
                        "(resized from 40x40; resize_crop_mirror does not pad)"));
  // No resize size, two of them.
  EXPECT_THAT(ErrorOf(ResizeCropMirror().SetArg("crop", std::vector<double>{4, 4}), in),
              HasSubstr("(rcm): sample 0: give exactly one of size, resize_x/resize_y, resize_shorter, resize_longer; "
                        "got none"));
  EXPECT_THAT(ErrorOf(base().SetArg("resize_longer", 9.0).SetArg("crop", std::vector<double>{4, 4}), in),
              HasSubstr("got 2 of them"));
  // Constants out of the schema's ranges.
  EXPECT_THAT(ErrorOf(base().SetArg("crop", std::vector<double>{4, 4}).SetArg("mirror", int64_t{4}), in),
              HasSubstr("mirror"));
  EXPECT_THAT(ErrorOf(base().SetArg("crop", std::vector<double>{4, 4}).SetArg("crop_pos_x", 1.5), in),
              HasSubstr("crop_pos_x"));
  EXPECT_THAT(ErrorOf(base().SetArg("crop", std::vector<double>{4, 4}).SetArg("interp_type", "bilinear"), in),
              HasSubstr("interp_type"));
  // Per-sample values out of range (the schema's ranges cover constants only).
  const OpSpec fed = base().SetArg("crop", std::vector<double>{4, 4});  // a copy
  EXPECT_THAT(ErrorOf(OpSpec(fed).SetArgInput("mirror", "m"), in,
                      {{"mirror", MakeBatch<int64_t>({Shape{}, Shape{}}, {{0}, {4}})}}),
              HasSubstr("(rcm): sample 1: expected mirror 0 (none), 1 (horizontal), 2 (vertical) or 3 (both), got 4"));
  EXPECT_THAT(ErrorOf(OpSpec(fed).SetArgInput("crop_pos_y", "py"), in, {{"crop_pos_y", ArgValues({{0.5f}, {-0.25f}}, true)}}),
              HasSubstr("(rcm): sample 1: expected crop_pos_x and crop_pos_y in [0, 1], got 0.5 and -0.25"));
  // Inputs.
  TensorListCPU chw = RandomImages({{3, 20, 30}}, DType::kUInt8, "CHW");
  EXPECT_THAT(ErrorOf(fed, chw), HasSubstr("(rcm): input 0: expected layout HWC or FHWC, got CHW"));
  TensorListCPU ints = RandomImages({{20, 30, 3}}, DType::kInt32);
  EXPECT_THAT(ErrorOf(fed, ints), HasSubstr("(rcm): input 0: expected dtype uint8 or float32, got int32"));
  TensorListCPU nine = RandomImages({{20, 30, 9}}, DType::kUInt8);
  EXPECT_THAT(ErrorOf(fed, nine), HasSubstr("(rcm): input 0: sample 0: expected at most 8 channels, got 9"));
}

}  // namespace
}  // namespace conveyor::testing
