// The geometric operators inside real pipelines: external_source (images of varying sizes) ->
// random_resized_crop -> flip with a per-sample $coin, and -> resize (resize_longer, so outputs
// never exceed the warm-up's) -> crop with padding. A captured GPU pipeline gives bit-identical results to the eager GPU pipeline and
// to the same pipeline on the CPU, over 100 iterations; after warm-up the capture count stays
// fixed while shapes vary within capacity, and grows only when the inputs outgrow it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/operators/resize/capture_compare.h"

namespace conveyor {
namespace {

constexpr int kBatch = 4;
constexpr int kIterations = 100;
constexpr int kGrowAt = 70;

std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: geometry, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", num_threads: 2, prefetch_depth: 2, seed: 77, graph_capture: " + (capture ? "true" : "false") +
         "}\nops:\n"
         "  - {op: external_source, name: in, device: cpu, args: {dtype: uint8, layout: HWC, ndim: 3}, outputs: [x]}\n"
         "  - {op: random.coin_flip, name: coin, device: cpu, outputs: [mirror]}\n"
         "  - {op: random_resized_crop, name: rrc, " + d + ", inputs: [x], args: {size: [24, 32]}, outputs: [c]}\n"
         "  - {op: flip, name: fl, " + d + ", inputs: [c], args: {horizontal: $mirror, vertical: 0}, outputs: [f]}\n"
         "  - {op: resize, name: rs, " + d + ", inputs: [x], args: {resize_longer: 20, interp_type: cubic}, "
         "outputs: [r]}\n"
         "  - {op: crop, name: cr, " + d + ", inputs: [r], args: {crop: [16, 28], out_of_bounds_policy: pad, "
         "fill_values: [7, 8, 9]}, outputs: [k]}\n"
         "outputs: [f, k]\n";
}

// The CPU pipeline (the reference of the GPU test below) equals the operators run one by one.
TEST(GeometryPipelineCpu, EqualsTheOperatorsRunOneByOne) {
  Pipeline p = Pipeline::FromYaml(Yaml("cpu", false));
  std::vector<TensorListCPU> fed;
  for (int k = 0; k < 6; ++k) {
    fed.push_back(testing::GrowingImages(k, kBatch, kGrowAt));
    p.Feed("in", fed.back());
  }
  p.Build();
  for (int k = 0; k < 6; ++k) {
    if (k >= 2) p.Run();
    PipelineOutputs out = p.Outputs();
    auto run = [&](OpSpec spec, const TensorListCPU& in, std::vector<std::pair<std::string, TensorListCPU>> args = {}) {
      OpHarness h(std::move(spec), Device::kCpu, in.num_samples());
      h.SetInput(0, in);
      for (auto& [name, v] : args) h.SetArgInput(name, v);
      h.set_seed(77);
      h.set_iteration(k);
      h.Run();
      return h.OutputToHost(0);
    };
    OpHarness coin(OpSpec("random.coin_flip", "coin").AddOutput("mirror"), Device::kCpu, kBatch);
    coin.set_seed(77);
    coin.set_iteration(k);
    coin.Run();
    const TensorListCPU crops = run(
        OpSpec("random_resized_crop", "rrc").AddInput("x").AddOutput("c").SetArg("size", std::vector<double>{24, 32}),
        fed[static_cast<size_t>(k)]);
    const TensorListCPU flipped = run(OpSpec("flip", "fl").AddInput("c").AddOutput("f").SetArgInput("horizontal", "mirror"),
                                      crops, {{"horizontal", coin.OutputToHost(0)}});
    const TensorListCPU resized = run(OpSpec("resize", "rs").AddInput("x").AddOutput("r").SetArg("resize_longer", 20.0)
                                          .SetArg("interp_type", "cubic"),
                                      fed[static_cast<size_t>(k)]);
    const TensorListCPU cropped = run(OpSpec("crop", "cr").AddInput("r").AddOutput("k")
                                          .SetArg("crop", std::vector<double>{16, 28})
                                          .SetArg("out_of_bounds_policy", "pad")
                                          .SetArg("fill_values", std::vector<double>{7, 8, 9}),
                                      resized);
    EXPECT_EQ(testing::CompareExact(testing::OutputOnHost(out, 0), flipped), "") << "iteration " << k;
    EXPECT_EQ(testing::CompareExact(testing::OutputOnHost(out, 1), cropped), "") << "iteration " << k;
    out.Release();
  }
}

TEST(GeometryPipelineGpu, CapturedEqualsEagerEqualsCpuOverVaryingSizes) {
  CONVEYOR_REQUIRE_GPU();
  testing::ExpectCapturedEqualsEagerEqualsCpu({.yaml = Yaml,
                                               .batch = [](int k) { return testing::GrowingImages(k, kBatch, kGrowAt); },
                                               .iterations = kIterations,
                                               .outputs = 2,
                                               .batch_size = kBatch,
                                               .grow_at = kGrowAt});
}

}  // namespace
}  // namespace conveyor
