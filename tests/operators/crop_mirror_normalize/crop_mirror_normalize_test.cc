// crop_mirror_normalize: hand-computed CPU cases, every argument error, FHWC clips equal to their
// frames processed one by one (output FCHW / FHWC), GPU against the CPU reference on images and
// clips (bit-identical: both compute the same fmaf on the same floats), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

OpSpec Cmn() { return OpSpec("crop_mirror_normalize", "cmn").AddInput("x").AddOutput("y"); }

// Pixel (y, x, c) = 10 * (y * W + x) + c.
TensorListCPU Ramp(int64_t H, int64_t W, int64_t C) {
  std::vector<uint8_t> v;
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x)
      for (int64_t c = 0; c < C; ++c) v.push_back(static_cast<uint8_t>(10 * (y * W + x) + c));
  return MakeBatch<uint8_t>({Shape{H, W, C}}, {v}, "HWC");
}

TEST(CropMirrorNormalize, CropsMirrorsNormalizesToChw) {
  // crop [2, 2] at crop_pos_x 1 → columns 1, 2; mirrored → 2, 1. (in - c) / 2 = 5 * (y * 3 + x).
  const TensorListCPU out = RunOp(Cmn()
                                      .SetArg("crop", std::vector<int64_t>{2, 2})
                                      .SetArg("crop_pos_x", 1.0)
                                      .SetArg("mirror", 1)
                                      .SetArg("mean", std::vector<double>{0, 1, 2})
                                      .SetArg("std", std::vector<double>{2.0}),
                                  Device::kCpu, Ramp(2, 3, 3));
  EXPECT_EQ(out.shape(0), (Shape{3, 2, 2}));
  EXPECT_EQ(out.layout(), Layout("CHW"));
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(10, 5, 25, 20, 10, 5, 25, 20, 10, 5, 25, 20));
}

TEST(CropMirrorNormalize, AnchorRoundsAsDali) {
  // H = 5, h = 2: y0 = round(0.5 * 3) = 2 (half away from zero); x0 = round(0.25 * 2) = 1 (0.5 → 1).
  const TensorListCPU out = RunOp(Cmn().SetArg("crop", std::vector<int64_t>{2, 1}).SetArg("crop_pos_x", 0.25),
                                  Device::kCpu, Ramp(5, 3, 1));
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(70, 100));  // pixels (2, 1), (3, 1)
}

TEST(CropMirrorNormalize, Uint8OutputClampsAndRoundsHalfToEven) {
  const TensorListCPU in = MakeBatch<uint8_t>({Shape{1, 4, 1}}, {{10, 60, 180, 51}}, "HWC");
  // 2 * in - 100: -80 → 0, 20, 260 → 255, 2.
  EXPECT_THAT(SampleValues(RunOp(Cmn().SetArg("dtype", DType::kUInt8).SetArg("scale", 2.0).SetArg("shift", -100.0),
                                 Device::kCpu, in),
                           0),
              ElementsAre(0, 20, 255, 2));
  const TensorListCPU ties = MakeBatch<uint8_t>({Shape{1, 4, 1}}, {{10, 14, 6, 255}}, "HWC");
  // in / 4: 2.5 → 2, 3.5 → 4, 1.5 → 2, 63.75 → 64.
  EXPECT_THAT(SampleValues(RunOp(Cmn().SetArg("dtype", DType::kUInt8).SetArg("std", std::vector<double>{4}),
                                 Device::kCpu, ties),
                           0),
              ElementsAre(2, 4, 2, 64));
}

TEST(CropMirrorNormalize, HwcWithPaddedChannel) {
  const TensorListCPU out =
      RunOp(Cmn().SetArg("output_layout", Layout("HWC")).SetArg("pad_output", true).SetArg("mirror", 1),
            Device::kCpu, Ramp(1, 2, 3));
  EXPECT_EQ(out.shape(0), (Shape{1, 2, 4}));
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(10, 11, 12, 0, 0, 1, 2, 0));
}

TEST(CropMirrorNormalize, HalfOutputsRoundToNearestEven) {
  const TensorListCPU in = MakeBatch<uint8_t>({Shape{1, 1, 1}}, {{1}}, "HWC");
  // 1 / 3 in float, then to float16 / bfloat16 with RNE.
  const float third = 1.f / 3.f;
  const TensorListCPU h = RunOp(Cmn().SetArg("dtype", DType::kFloat16).SetArg("std", std::vector<double>{3}),
                                Device::kCpu, in);
  EXPECT_EQ(static_cast<const uint16_t*>(h.raw_sample(0))[0], FloatToHalfBits(third));
  EXPECT_EQ(static_cast<const uint16_t*>(h.raw_sample(0))[0], 0x3555);
  const TensorListCPU b = RunOp(Cmn().SetArg("dtype", DType::kBFloat16).SetArg("std", std::vector<double>{3}),
                                Device::kCpu, in);
  EXPECT_EQ(static_cast<const uint16_t*>(b.raw_sample(0))[0], 0x3EAB);
}

TEST(CropMirrorNormalize, PerSampleArguments) {
  TensorListCPU in = Ramp(1, 3, 1);
  TensorListCPU two;
  two.Resize({Shape{1, 3, 1}, Shape{1, 3, 1}}, DType::kUInt8);
  two.set_layout("HWC");
  for (int s = 0; s < 2; ++s) std::memcpy(two.raw_sample(s), in.raw_sample(0), 3);
  const TensorListCPU out =
      RunOp(Cmn().SetArg("crop", std::vector<int64_t>{1, 2}).SetArgInput("mirror", "m").SetArgInput("crop_pos_x", "px")
                .SetArgInput("mean", "mu"),
            Device::kCpu, two,
            {{"mirror", PerSampleScalars<int32_t>({0, 1})},
             {"crop_pos_x", PerSampleScalars<float>({0.f, 1.f})},
             {"mean", PerSampleLists<float>({{0.f}, {5.f}})}});
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(0, 10));
  EXPECT_THAT(SampleValues(out, 1), ElementsAre(15, 5));  // columns 2, 1 minus 5
}

// An unlabelled batch (external_source, readers.numpy without `layout`) of 3-D samples is taken as
// HWC, as the geometric operators take it: the same result as the labelled batch. 2-D samples
// without a layout are refused, saying why.
TEST(CropMirrorNormalize, UnlabelledThreeDimensionalInputIsTakenAsHwc) {
  const OpSpec spec = Cmn().SetArg("crop", std::vector<int64_t>{2, 2}).SetArg("mirror", 1);
  const TensorListCPU labelled = Ramp(3, 4, 3);
  TensorListCPU unlabelled = labelled;
  unlabelled.set_layout(Layout());
  const TensorListCPU want = RunOp(spec, Device::kCpu, labelled);
  const TensorListCPU got = RunOp(spec, Device::kCpu, unlabelled);
  EXPECT_EQ(got.layout(), Layout("CHW"));
  EXPECT_EQ(SampleValues(got, 0), SampleValues(want, 0));
  const TensorListCPU flat = MakeBatch<uint8_t>({Shape{4, 5}}, {std::vector<uint8_t>(20, 7)}, "");
  EXPECT_THAT(RunError(Cmn(), flat),
              HasSubstr("input 0: expected layout HWC or FHWC, got none (sample 0 has shape (4, 5); an unlabelled batch is "
                        "taken as HWC only when every sample has 3 dims)"));
}

TEST(CropMirrorNormalize, Errors) {
  const TensorListCPU img = Ramp(4, 4, 3);
  TensorListCPU chw = img;
  chw.set_layout("CHW");
  EXPECT_THAT(RunError(Cmn(), chw),
              HasSubstr("op \"crop_mirror_normalize\" (cmn): input 0: expected layout HWC or FHWC, got CHW"));
  EXPECT_THAT(RunError(Cmn(), RandomBatch({Shape{2, 2, 2, 3}}, DType::kUInt8, "NHWC")),
              HasSubstr("op \"crop_mirror_normalize\" (cmn): input 0: expected layout HWC or FHWC, got NHWC (a sequence "
                        "is FHWC: frames first)"));
  EXPECT_THAT(RunError(Cmn().SetArg("output_layout", Layout("FCHW")), img),
              HasSubstr("op \"crop_mirror_normalize\" (cmn): argument \"output_layout\": FCHW is for FHWC clips, but "
                        "input 0 is HWC (give CHW)"));
  EXPECT_THAT(RunError(Cmn().SetArg("crop", std::vector<int64_t>{3, 5}),
                       RandomBatch({Shape{2, 4, 6, 3}, Shape{3, 4, 4, 3}}, DType::kUInt8, "FHWC")),
              HasSubstr("sample 1: crop window [3, 5] does not fit the frames of shape (4, 4, 3)"));
  const TensorListCPU ints = RandomBatch({Shape{2, 2, 3}}, DType::kInt32, "HWC");
  EXPECT_THAT(RunError(Cmn(), ints), HasSubstr("input 0: expected dtype uint8, float16 or float32, got int32"));
  EXPECT_THAT(RunError(Cmn().SetArg("mean", std::vector<double>{1, 2}), img),
              HasSubstr("argument \"mean\": expected 1 or 3 values (one per channel), got 2 at sample 0"));
  EXPECT_THAT(RunError(Cmn().SetArg("std", std::vector<double>{1, 0, 1}), img),
              HasSubstr("argument \"std\": must be nonzero, got 0 for channel 1 at sample 0"));
  EXPECT_THAT(RunError(Cmn().SetArg("crop", std::vector<int64_t>{5, 2}), img),
              HasSubstr("sample 0: crop window [5, 2] does not fit the image of shape (4, 4, 3)"));
  EXPECT_THAT(RunError(Cmn().SetArg("crop", std::vector<int64_t>{5, 2, 1}), img),
              HasSubstr("argument \"crop\": expected [h, w], got 3 values"));
  EXPECT_THAT(RunError(Cmn().SetArg("dtype", DType::kInt32), img),
              HasSubstr("argument \"dtype\": expected float32, float16, bfloat16 or uint8, got int32"));
  EXPECT_THAT(RunError(Cmn().SetArg("output_layout", Layout("HW")), img),
              HasSubstr("argument \"output_layout\": expected CHW or HWC (FCHW or FHWC for clips), got HW"));
  EXPECT_THAT(RunError(Cmn(), RandomBatch({Shape{2, 2, 5}}, DType::kUInt8, "HWC")),
              HasSubstr("input 0: sample 0 has 5 channels, expected 1 to 4"));
  EXPECT_THAT(RunError(Cmn().SetArg("pad_output", true), RandomBatch({Shape{2, 2, 4}}, DType::kUInt8, "HWC")),
              HasSubstr("sample 0 has 4 channels, expected 1 to 3 (pad_output adds one)"));
  EXPECT_THAT(RunError(Cmn(), RandomBatch({Shape{2, 2, 3}, Shape{2, 2}}, DType::kUInt8, "HWC")),
              HasSubstr("input 0: sample 1 has shape (2, 2), expected 3 dims (HWC)"));
}

// Fresh random images of varying sizes (odd widths, several column tiles, widths a multiple of 8
// and not), random per-sample anchors and mirror flags: the GPU output equals the CPU reference bit
// for bit for every dtype and layout.
TEST(CropMirrorNormalizeGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const int n = 9;
  for (DType in_type : {DType::kUInt8, DType::kFloat32, DType::kFloat16}) {
    std::vector<Shape> shapes = RandomHwcShapes(n, 40, 90, 700, 3);
    for (Shape& s : shapes) s[1] = std::max<int64_t>(s[1], 310);  // room for the 301-wide crop
    shapes[0] = Shape{41, 529, 3};  // three column tiles, odd width; tall enough for the 37-row crop
    const TensorListCPU in = RandomBatch(shapes, in_type, "HWC", 0.f, 255.f);
    std::vector<int32_t> mirror;
    std::vector<float> px, py;
    for (int i = 0; i < n; ++i) {
      mirror.push_back(static_cast<int32_t>(RandomVector<int>(1, 0, 1)[0]));
      px.push_back(RandomVector<float>(1, 0.f, 1.f)[0]);
      py.push_back(RandomVector<float>(1, 0.f, 1.f)[0]);
    }
    const ArgInputs args = {{"mirror", PerSampleScalars(mirror)},
                            {"crop_pos_x", PerSampleScalars(px)},
                            {"crop_pos_y", PerSampleScalars(py)}};
    for (DType out_type : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kUInt8}) {
      for (const char* layout : {"CHW", "HWC"}) {
        // Widths that are multiples of 8 (296: two column tiles, 224) take the vectorised uint8 RGB
        // path; the others the per-element one.
        for (std::vector<int64_t> crop : {std::vector<int64_t>{37, 301}, std::vector<int64_t>{40, 37},
                                          std::vector<int64_t>{33, 296}, std::vector<int64_t>{24, 224},
                                          std::vector<int64_t>{}}) {
          for (bool pad : {false, true}) {
            const OpSpec spec = Cmn()
                                    .SetArg("crop", crop)
                                    .SetArg("dtype", out_type)
                                    .SetArg("output_layout", Layout(layout))
                                    .SetArg("pad_output", pad)
                                    .SetArg("mean", std::vector<double>{123.675, 116.28, 103.53})
                                    .SetArg("std", std::vector<double>{58.395, 57.12, 57.375})
                                    .SetArgInput("mirror", "m")
                                    .SetArgInput("crop_pos_x", "px")
                                    .SetArgInput("crop_pos_y", "py");
            ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args),
                            std::string(DTypeName(in_type)) + " -> " + std::string(DTypeName(out_type)) + " " + layout +
                                " crop " + std::to_string(crop.size() ? crop[1] : 0) + (pad ? " pad" : ""));
          }
        }
      }
    }
  }
}

// ---- clips (FHWC) ----

// Random per-sample mirror flags and anchors for `n` samples.
ArgInputs RandomPlacements(int n) {
  std::vector<int32_t> mirror;
  std::vector<float> px, py;
  for (int i = 0; i < n; ++i) {
    mirror.push_back(static_cast<int32_t>(RandomVector<int>(1, 0, 1)[0]));
    px.push_back(RandomVector<float>(1, 0.f, 1.f)[0]);
    py.push_back(RandomVector<float>(1, 0.f, 1.f)[0]);
  }
  return {{"mirror", PerSampleScalars(mirror)}, {"crop_pos_x", PerSampleScalars(px)}, {"crop_pos_y", PerSampleScalars(py)}};
}

OpSpec CmnPerSample(std::vector<int64_t> crop, DType out_type, const char* layout, bool pad) {
  return Cmn()
      .SetArg("crop", std::move(crop))
      .SetArg("dtype", out_type)
      .SetArg("output_layout", Layout(layout))
      .SetArg("pad_output", pad)
      .SetArg("mean", std::vector<double>{123.675, 116.28, 103.53})
      .SetArg("std", std::vector<double>{58.395, 57.12, 57.375})
      .SetArgInput("mirror", "m")
      .SetArgInput("crop_pos_x", "px")
      .SetArgInput("crop_pos_y", "py");
}

std::vector<std::pair<std::string, TensorListCPU>> AsPairs(const ArgInputs& args) { return {args.begin(), args.end()}; }

// Mixed frame counts (0 and 1 included) and sizes with per-sample mirror and anchors: each frame
// is cropped, mirrored and normalised with its clip's parameters, as the frame alone would be;
// output_layout CHW gives FCHW, HWC gives FHWC.
TEST(CropMirrorNormalize, ClipsEqualTheirFramesOneByOne) {
  for (const char* layout : {"CHW", "HWC"}) {
    for (DType out_type : {DType::kFloat16, DType::kUInt8}) {
      const TensorListCPU clips = MixedClips(DType::kUInt8, 3, 16, 40);
      const auto args = AsPairs(RandomPlacements(clips.num_samples()));
      const OpSpec spec = CmnPerSample({12, 16}, out_type, layout, out_type == DType::kUInt8);
      const auto frames = [&](const TensorListCPU& b) { return RunWith(spec, Device::kCpu, b, args); };
      EXPECT_EQ(CompareWithFrameByFrame(RunWith(spec, Device::kCpu, clips, args), clips, frames), "")
          << layout << " " << DTypeName(out_type) << " seed " << RngSeed();
    }
  }
}

// DALI's spelling for sequences, output_layout FCHW / FHWC, gives the same as CHW / HWC.
TEST(CropMirrorNormalize, FramesLayoutNamesTheSameOutput) {
  const TensorListCPU clips = MixedClips(DType::kFloat32, 3);
  for (const char* layout : {"CHW", "HWC"}) {
    const TensorListCPU want = RunOp(Cmn().SetArg("output_layout", Layout(layout)), Device::kCpu, clips);
    const TensorListCPU got =
        RunOp(Cmn().SetArg("output_layout", Layout("F" + std::string(layout))), Device::kCpu, clips);
    EXPECT_EQ(want.layout(), Layout("F" + std::string(layout)));
    ExpectSameBytes(got, want, layout);
  }
}

// Clips on the GPU against the CPU: each kernel path (uint8 RGB to CHW with window widths a
// multiple of 8 and not, the tiled kernel for the rest), every output dtype, both layouts.
TEST(CropMirrorNormalizeGpu, ClipsMatchCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  for (DType in_type : {DType::kUInt8, DType::kFloat32, DType::kFloat16}) {
    std::vector<Shape> shapes;
    for (const Shape& f : RandomFrameShapes(6, 40, 300, 3)) shapes.push_back(Shape{f[0], std::max<int64_t>(f[1], 232), 3});
    const std::vector<int64_t> frames = {3, 1, 5, 0, 2, 4};
    std::vector<Shape> clip_shapes;
    for (size_t i = 0; i < shapes.size(); ++i) clip_shapes.push_back(Shape{frames[i], shapes[i][0], shapes[i][1], 3});
    const TensorListCPU clips = RandomBatch(clip_shapes, in_type, "FHWC", 0.f, 255.f);
    const ArgInputs args = RandomPlacements(clips.num_samples());
    for (DType out_type : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kUInt8}) {
      for (const char* layout : {"CHW", "HWC"}) {
        for (std::vector<int64_t> crop : {std::vector<int64_t>{33, 37}, std::vector<int64_t>{24, 224}}) {
          const OpSpec spec = CmnPerSample(crop, out_type, layout, false);
          ExpectSameBytes(RunOp(spec, Device::kGpu, clips, args), RunOp(spec, Device::kCpu, clips, args),
                          std::string(DTypeName(in_type)) + " -> " + std::string(DTypeName(out_type)) + " " + layout +
                              " crop " + std::to_string(crop[1]));
        }
      }
    }
  }
}

// A second run with smaller images on the same harness: the kernel reads the new descriptors and
// the grid from the larger capacity still covers everything (what a captured replay relies on).
TEST(CropMirrorNormalizeGpu, ShrinkingBatchReusesCapacity) {
  CONVEYOR_REQUIRE_GPU();
  const OpSpec spec = Cmn().SetArg("dtype", DType::kFloat16).SetArgInput("mirror", "m");
  OpHarness h(spec, Device::kGpu, 4);
  cuda::Stream stream = cuda::Stream::Create();
  for (const auto& shapes : {RandomHwcShapes(4, 200, 300, 300, 3), RandomHwcShapes(4, 1, 50, 60, 3)}) {
    const TensorListCPU in = RandomBatch(shapes, DType::kUInt8, "HWC");
    const TensorListCPU mirror = PerSampleScalars<int32_t>({1, 0, 1, 1});
    h.SetInput(0, in);
    h.SetArgInput("mirror", mirror);
    h.Run(stream.view());
    ExpectSameBytes(h.OutputToHost(0), RunOp(spec, Device::kCpu, in, {{"mirror", mirror}}), "run");
  }
}

INSTANTIATE_TEST_SUITE_P(
    CropMirrorNormalize, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Cmn(), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Cmn().SetArg("dtype", DType::kFloat16), Device::kGpu, DType::kUInt8, true,
                                      "HWC", 3},
                      ConformanceCase{"gpu_hwc_u8", Cmn().SetArg("dtype", DType::kUInt8).SetArg("output_layout", Layout("HWC")),
                                      Device::kGpu, DType::kUInt8, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
