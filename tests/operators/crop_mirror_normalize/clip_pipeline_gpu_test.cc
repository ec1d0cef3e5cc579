// FHWC clips through the image operators inside real pipelines: external_source (uint8 clips of
// varying frame counts and frame sizes) -> resize (cubic) -> crop_mirror_normalize (float16 FCHW, per-sample
// $mirror), and -> random_resized_crop -> flip ($mirror) -> crop with padding. The captured GPU
// pipeline gives bit-identical results to the eager GPU pipeline and to the same pipeline on the
// CPU over 40 iterations; after warm-up the capture count stays fixed while frame counts and sizes
// vary within capacity, and grows only when the clips outgrow it.
#include <gtest/gtest.h>

#include <string>

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize/capture_compare.h"

namespace conveyor {
namespace {

constexpr int kBatch = 3;
constexpr int kIterations = 40;
constexpr int kGrowAt = 30;

std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: clips, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", num_threads: 2, prefetch_depth: 2, seed: 31, graph_capture: " + (capture ? "true" : "false") +
         "}\nops:\n"
         "  - {op: external_source, name: in, device: cpu, args: {dtype: uint8, layout: FHWC, ndim: 4}, outputs: [x]}\n"
         "  - {op: random.coin_flip, name: coin, device: cpu, outputs: [mirror]}\n"
         "  - {op: resize, name: rs, " + d + ", inputs: [x], args: {size: [24, 32], interp_type: cubic}, outputs: [r]}\n"
         "  - {op: crop_mirror_normalize, name: cmn, " + d + ", inputs: [r], args: {crop: [12, 16], mirror: $mirror, "
         "mean: [120, 110, 100], std: [60, 55, 50], dtype: float16, output_layout: CHW}, outputs: [n]}\n"
         "  - {op: random_resized_crop, name: rrc, " + d + ", inputs: [x], args: {size: [20, 24]}, outputs: [c]}\n"
         "  - {op: flip, name: fl, " + d + ", inputs: [c], args: {horizontal: $mirror, vertical: 1}, outputs: [f]}\n"
         "  - {op: crop, name: cr, " + d + ", inputs: [f], args: {crop: [22, 18], out_of_bounds_policy: pad, "
         "fill_values: [7, 8, 9]}, outputs: [k]}\n"
         "outputs: [n, k]\n";
}

// Iteration k's clips: the most frames and the largest frames during warm-up (capacities reached
// at once), then random frame counts (1..6, 0 now and then) and sizes below them, then larger ones
// from kGrowAt (the first of them all beyond capacity).
TensorListCPU Clips(int k) {
  std::vector<int64_t> frames;
  std::vector<Shape> shapes;
  for (int s = 0; s < kBatch; ++s) {
    if (k < 2) {
      frames.push_back(6);
      shapes.push_back(Shape{40, 40, 3});
    } else if (k == kGrowAt) {
      frames.push_back(9);
      shapes.push_back(Shape{60, 60, 3});
    } else {
      const int hi = k >= kGrowAt ? 60 : 40;
      frames.push_back(testing::RandomVector<int64_t>(1, (k + s) % 7 == 0 ? 0 : 1, k >= kGrowAt ? 9 : 6)[0]);
      shapes.push_back(Shape{testing::RandomVector<int>(1, 12, hi)[0], testing::RandomVector<int>(1, 12, hi)[0], 3});
    }
  }
  return testing::RandomClips(frames, shapes, DType::kUInt8);
}

// The CPU pipeline (the reference of the GPU test below) takes clips end to end: FCHW float16 and
// FHWC uint8 outputs whose frame counts are the clips'.
TEST(ClipPipelineCpu, ClipsKeepTheirFramesThroughTheOperators) {
  Pipeline p = Pipeline::FromYaml(Yaml("cpu", false));
  std::vector<TensorListCPU> fed;
  for (int k = 0; k < 3; ++k) {
    fed.push_back(Clips(k == 2 ? 5 : k));
    p.Feed("in", fed.back());
  }
  p.Build();
  for (int k = 0; k < 3; ++k) {
    if (k >= 2) p.Run();
    PipelineOutputs out = p.Outputs();
    const TensorListCPU n = testing::OutputOnHost(out, 0), c = testing::OutputOnHost(out, 1);
    EXPECT_EQ(n.layout(), Layout("FCHW"));
    EXPECT_EQ(n.dtype(), DType::kFloat16);
    EXPECT_EQ(c.layout(), Layout("FHWC"));
    for (int s = 0; s < kBatch; ++s) {
      const int64_t frames = fed[static_cast<size_t>(k)].shape(s)[0];
      EXPECT_EQ(n.shape(s), (Shape{frames, 3, 12, 16})) << "iteration " << k << " sample " << s;
      EXPECT_EQ(c.shape(s), (Shape{frames, 22, 18, 3})) << "iteration " << k << " sample " << s;
    }
    out.Release();
  }
}

TEST(ClipPipelineGpu, CapturedEqualsEagerEqualsCpuOverVaryingClips) {
  CONVEYOR_REQUIRE_GPU();
  testing::ExpectCapturedEqualsEagerEqualsCpu({.yaml = Yaml,
                                               .batch = Clips,
                                               .iterations = kIterations,
                                               .outputs = 2,
                                               .batch_size = kBatch,
                                               .grow_at = kGrowAt});
}

}  // namespace
}  // namespace conveyor
