// Node conditions on the GPU: a pipeline with a conditioned GPU flip (probability:), a conditioned
// GPU resize (enable: from a coin node) and a conditioned CPU brightness inside the GPU pipeline,
// run with graph_capture, equals the same pipeline on the CPU byte for byte over iterations of
// varying image sizes (flip and resize are exact on the GPU, brightness runs on the CPU in both),
// and the coin of probability: is the one reproduced from the seed. Once capacities are reached,
// the captured segment holding the selects is only replayed.
#include <gtest/gtest.h>

#include "tests/operators/conditional/conditions_test_util.h"

namespace conveyor {
namespace {

using testing::OutputOnHost;

constexpr int kBatch = 8;
constexpr int kIterations = 24;
constexpr uint64_t kSeed = 99;

std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: cond_gpu, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", num_threads: 2, prefetch_depth: 2, seed: " + std::to_string(kSeed) +
         ", graph_capture: " + (capture ? "true" : "false") +
         "}\nops:\n"
         "  - {op: external_source, name: in, device: cpu, args: {dtype: uint8, layout: HWC, ndim: 3}, outputs: [x]}\n"
         "  - {op: random.coin_flip, name: coin, device: cpu, args: {probability: 0.4}, outputs: [c]}\n"
         "  - {op: flip, name: fl, " + d + ", inputs: [x], args: {vertical: 1}, probability: 0.5, outputs: [f]}\n"
         "  - {op: resize, name: rs, " + d + ", inputs: [x], args: {size: [20, 28], interp_type: cubic}, "
         "enable: $c, outputs: [r]}\n"
         "  - {op: brightness, name: br, device: cpu, inputs: [x], args: {brightness: 1.5}, probability: 0.3, "
         "outputs: [b]}\n"
         "outputs: [f, r, b, c]\n";
}

// The largest sizes during warm-up (capacities reached at once), then random sizes below them.
TensorListCPU Images(int k) {
  std::vector<Shape> shapes;
  for (int s = 0; s < kBatch; ++s) {
    shapes.push_back(k < 2 ? Shape{64, 64, 3}
                           : Shape{testing::RandomVector<int>(1, 8, 64)[0], testing::RandomVector<int>(1, 8, 64)[0], 3});
  }
  return testing::RandomImages(shapes, DType::kUInt8);
}

TEST(ConditionsGpu, CapturedPipelineEqualsTheCpuPipeline) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline cpu = Pipeline::FromYaml(Yaml("cpu", false));
  Pipeline gpu = Pipeline::FromYaml(Yaml("gpu", true));
  std::vector<TensorListCPU> fed;
  for (int k = 0; k < kIterations; ++k) {
    fed.push_back(Images(k));
    cpu.Feed("in", fed.back());
    gpu.Feed("in", fed.back());
  }
  cpu.Build();
  gpu.Build();
  ASSERT_EQ(gpu.graph().node("fl.select").device, Device::kGpu);
  ASSERT_EQ(gpu.graph().node("rs.select").device, Device::kGpu);
  ASSERT_EQ(gpu.graph().node("br.select").device, Device::kCpu);
  const OpSpec vflip = OpSpec("flip", "fl").AddInput("x").AddOutput("f").SetArg("vertical", int64_t{1});
  int flipped = 0;
  int64_t captures_after_warmup = -1;
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 2) {
      cpu.Run();
      gpu.Run();
    }
    PipelineOutputs want = cpu.Outputs(), got = gpu.Outputs();
    ASSERT_TRUE(got.IsGpu(0));
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(testing::CompareExact(OutputOnHost(got, i), OutputOnHost(want, i)), "")
          << "iteration " << k << " output " << i;
    }
    // The GPU flip's choices are the seed's coin.
    const TensorListCPU& x = fed[static_cast<size_t>(k)];
    flipped += testing::ExpectSelected(OutputOnHost(got, 0), x, testing::RunAlone(vflip, x, kSeed, k),
                                       testing::ConditionCoin("fl", 0.5, kSeed, k, kBatch),
                                       "iteration " + std::to_string(k));
    want.Release();
    got.Release();
    // Iterations up to k + 1 are scheduled here: read the count before later ones can start.
    if (k == 4) captures_after_warmup = gpu.counters().captures;
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, kIterations * kBatch);
  EXPECT_GT(captures_after_warmup, 0);
  EXPECT_EQ(gpu.counters().captures, captures_after_warmup) << "shapes within capacity re-captured";
  EXPECT_GE(gpu.counters().replays, kIterations - 4);
}

}  // namespace
}  // namespace conveyor
