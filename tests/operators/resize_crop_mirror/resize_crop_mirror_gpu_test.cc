// resize_crop_mirror on the GPU against the CPU reference, bit for bit, with per-sample windows,
// positions and mirrors (all four masks), in the regimes that take the resample kernels' other
// paths: the two-tap kernel (its staged uint8 RGB linear path at photo sizes, the direct path,
// nearest), the tiled kernel (exact taps, unrolled and looped taps, row chunks), 1..8 channels,
// mixed channel counts, FHWC clips; and in pipelines, eager and captured, over varying sizes.
#include <gtest/gtest.h>

#include <string>

#include "core/pipeline/pipeline.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize/capture_compare.h"
#include "tests/operators/resize_crop_mirror/rcm_test_util.h"

namespace conveyor::testing {
namespace {

OpSpec Resize() { return OpSpec("resize", "r").AddInput("x").AddOutput("y"); }

// `spec` (the resize arguments, interp_type, antialias, dtype) with random per-sample windows for
// `in`, on the GPU and on the CPU: the same bytes.
void ExpectGpuEqualsCpu(const OpSpec& size_spec, const TensorListCPU& in) {
  OpSpec resize = Resize();
  for (const auto& [name, value] : size_spec.args()) resize.SetArg(name, value);
  const std::vector<Window> windows = RandomWindows(ResizedSizes(resize, in));
  OpSpec spec = ResizeCropMirror();
  for (const auto& [name, value] : size_spec.args()) spec.SetArg(name, value);
  spec = WithWindowInputs(spec);
  const auto args = WindowArgs(windows);
  const TensorListCPU cpu = RunOp({spec, in, args}, Device::kCpu);
  const TensorListCPU gpu = RunOp({spec, in, args}, Device::kGpu);
  EXPECT_EQ(CompareExact(gpu, cpu), "") << "seed " << RngSeed();
}

TEST(ResizeCropMirrorGpu, EqualsCpuForEveryFilterDtypeAndAntialias) {
  CONVEYOR_REQUIRE_GPU();
  for (const char* interp : {"nearest", "linear", "cubic"}) {
    for (bool aa : {true, false}) {
      for (DType in_dtype : {DType::kUInt8, DType::kFloat32}) {
        for (const char* out_dtype : {"same", "uint8", "float32"}) {
          SCOPED_TRACE(std::string(interp) + " antialias " + std::to_string(aa) + " " + std::string(DTypeName(in_dtype)) +
                       " -> " + out_dtype);
          ExpectGpuEqualsCpu(OpSpec("x", "x")
                                 .SetArg("resize_shorter", 45.0)
                                 .SetArg("interp_type", interp)
                                 .SetArg("antialias", aa)
                                 .SetArg("dtype", out_dtype),
                             RandomImages(VaryingShapes(8, 120, 150, 3), in_dtype));
        }
      }
    }
  }
}

// The evaluation recipe (resize_shorter 256, centre-ish 224 windows) on photo sizes: the two-tap
// kernel's staged path (uint8 RGB linear, no antialias), the exact-taps path (antialias), cubic,
// nearest; and upscales of small images.
TEST(ResizeCropMirrorGpu, EqualsCpuOnPhotoSizedResizeShorterCrops) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> photos = {{375, 500, 3}, {500, 375, 3}, {333, 499, 3}, {230, 1000, 3},
                                     {640, 480, 3}, {101, 67, 3},  {224, 224, 3}, {17, 9, 3}};
  for (const char* interp : {"linear", "cubic", "nearest"}) {
    for (bool aa : {true, false}) {
      for (const char* out_dtype : {"uint8", "float32"}) {
        SCOPED_TRACE(std::string(interp) + " antialias " + std::to_string(aa) + " -> " + out_dtype);
        ExpectGpuEqualsCpu(OpSpec("x", "x")
                               .SetArg("resize_shorter", 256.0)
                               .SetArg("interp_type", interp)
                               .SetArg("antialias", aa)
                               .SetArg("dtype", out_dtype),
                           RandomImages(photos, DType::kUInt8));
      }
    }
  }
}

// 1200 rows -> 16: a tile needs every input row (several chunks) and ~150 cubic taps.
TEST(ResizeCropMirrorGpu, EqualsCpuOnLargeDownscales) {
  CONVEYOR_REQUIRE_GPU();
  for (const char* interp : {"linear", "cubic"}) {
    ExpectGpuEqualsCpu(OpSpec("x", "x").SetArg("size", std::vector<double>{16, 40}).SetArg("interp_type", interp),
                       RandomImages({{1200, 40, 3}, {37, 900, 3}, {640, 480, 1}}, DType::kUInt8));
  }
}

TEST(ResizeCropMirrorGpu, EqualsCpuForOneToEightChannelsAndMixedBatches) {
  CONVEYOR_REQUIRE_GPU();
  for (int c : {1, 2, 4, 5, 8}) {
    SCOPED_TRACE(c);
    for (const char* interp : {"linear", "cubic"}) {
      for (bool aa : {true, false}) {
        ExpectGpuEqualsCpu(OpSpec("x", "x").SetArg("size", std::vector<double>{53, 47}).SetArg("interp_type", interp)
                               .SetArg("antialias", aa),
                           RandomImages(VaryingShapes(4, 90, 90, c), DType::kUInt8));
      }
    }
  }
  std::vector<Shape> mixed = VaryingShapes(3, 80, 80, 3);
  for (const Shape& s : VaryingShapes(3, 80, 80, 4)) mixed.push_back(s);
  ExpectGpuEqualsCpu(OpSpec("x", "x").SetArg("resize_longer", 60.0), RandomImages(mixed, DType::kFloat32));
}

TEST(ResizeCropMirrorGpu, ClipsEqualCpu) {
  CONVEYOR_REQUIRE_GPU();
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU clips = MixedClips(t, 3, 16, 60);
    std::vector<std::vector<int64_t>> mirror = {{1}, {2}, {3}, {0}, {1}};
    const std::vector<std::pair<std::string, TensorListCPU>> args = {
        {"mirror", MakeBatch<int64_t>(std::vector<Shape>(5, Shape{}), mirror)}};
    const OpSpec spec = ResizeCropMirror()
                            .SetArg("resize_shorter", 20.0)
                            .SetArg("crop", std::vector<double>{17, 19})
                            .SetArg("crop_pos_y", 0.2)
                            .SetArgInput("mirror", "m");
    EXPECT_EQ(CompareExact(RunWith(spec, Device::kGpu, clips, args), RunWith(spec, Device::kCpu, clips, args)), "")
        << DTypeName(t);
  }
}

// ---- pipelines: CPU = eager GPU = captured GPU ----

constexpr int kBatch = 4;
constexpr int kIterations = 60;
constexpr int kGrowAt = 40;

// external_source -> resize_crop_mirror with per-sample mirror (coin flip) and crop_pos_x
// (uniform draws), and a second node with a constant vertical mirror and cubic filter.
std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: rcm, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", num_threads: 2, prefetch_depth: 2, seed: 91, graph_capture: " + (capture ? "true" : "false") +
         "}\nops:\n"
         "  - {op: external_source, name: in, device: cpu, args: {dtype: uint8, layout: HWC, ndim: 3}, outputs: [x]}\n"
         "  - {op: random.coin_flip, name: coin, device: cpu, outputs: [flip]}\n"
         "  - {op: random.uniform, name: pos, device: cpu, args: {range: [0, 1]}, outputs: [px]}\n"
         "  - {op: resize_crop_mirror, name: rcm, " + d + ", inputs: [x], args: {resize_shorter: 40, crop: [24, 32], "
         "crop_pos_x: $px, mirror: $flip}, outputs: [a]}\n"
         "  - {op: resize_crop_mirror, name: rcm2, " + d + ", inputs: [x], args: {size: [30, 30], crop: [20, 16], "
         "crop_pos_y: 0, mirror: 2, interp_type: cubic, dtype: float32}, outputs: [b]}\n"
         "outputs: [a, b]\n";
}

// The CPU pipeline (the reference below) loads from YAML, feeds $px and $flip, and gives the
// windows' shapes and dtypes.
TEST(ResizeCropMirrorPipelineCpu, RunsWithPerSampleArgumentsFromOtherNodes) {
  Pipeline p = Pipeline::FromYaml(Yaml("cpu", false));
  for (int k = 0; k < 4; ++k) p.Feed("in", GrowingImages(k, kBatch, kGrowAt));
  p.Build();
  for (int k = 0; k < 4; ++k) {
    if (k >= 2) p.Run();
    PipelineOutputs out = p.Outputs();
    const TensorListCPU a = OutputOnHost(out, 0), b = OutputOnHost(out, 1);
    ASSERT_EQ(a.num_samples(), kBatch);
    for (int i = 0; i < kBatch; ++i) {
      EXPECT_EQ(a.shape(i), (Shape{24, 32, 3}));
      EXPECT_EQ(b.shape(i), (Shape{20, 16, 3}));
    }
    EXPECT_EQ(a.dtype(), DType::kUInt8);
    EXPECT_EQ(b.dtype(), DType::kFloat32);
    out.Release();
  }
}

TEST(ResizeCropMirrorPipelineGpu, CapturedEqualsEagerEqualsCpuOverVaryingSizes) {
  CONVEYOR_REQUIRE_GPU();
  ExpectCapturedEqualsEagerEqualsCpu(
      {.yaml = Yaml, .batch = [](int k) { return testing::GrowingImages(k, kBatch, kGrowAt); }, .iterations = kIterations, .outputs = 2, .batch_size = kBatch, .grow_at = kGrowAt});
}

}  // namespace
}  // namespace conveyor::testing
