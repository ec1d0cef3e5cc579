// Node conditions in CPU pipelines, on fresh random images of varying sizes: every sample of a
// conditioned node's output is either the node's result or its input unchanged, chosen by the
// coin that `probability:` inserts (its draws reproduced from the seed) or by the `enable:` source
// (a coin_flip node, fed data); probability 0 and 1; a shape-changing node (resize); resume from a
// checkpoint; the YAML round trip and the hidden nodes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/pipeline/yaml_loader.h"
#include "tests/operators/conditional/conditions_test_util.h"

namespace conveyor {
namespace {

using testing::ConditionCoin;
using testing::ExpectSelected;
using testing::OutputOnHost;
using testing::RunAlone;

constexpr int kBatch = 16;
constexpr uint64_t kSeed = 321;

std::string Prelude(int prefetch = 2) {
  return "pipeline: {name: cond, batch_size: " + std::to_string(kBatch) +
         ", device: cpu, num_threads: 2, prefetch_depth: " + std::to_string(prefetch) +
         ", seed: " + std::to_string(kSeed) +
         "}\nops:\n"
         "  - {op: external_source, name: in, args: {dtype: uint8, layout: HWC, ndim: 3}, outputs: [x]}\n";
}

const OpSpec kFlip = OpSpec("flip", "fl").AddInput("x").AddOutput("f");

// Feeds `iterations` batches of random images, builds, and calls `check(k, outputs, fed batch)`
// for each iteration.
template <typename Check>
void RunIterations(Pipeline& p, int iterations, Check check, int prefetch = 2) {
  std::vector<TensorListCPU> fed;
  for (int k = 0; k < iterations; ++k) {
    fed.push_back(testing::VaryingImages(kBatch));
    p.Feed("in", fed.back());
  }
  p.Build();
  for (int k = 0; k < iterations; ++k) {
    if (k >= prefetch) p.Run();
    PipelineOutputs out = p.Outputs();
    check(k, out, fed[static_cast<size_t>(k)]);
  }
}

TEST(Conditions, ProbabilityPicksResultOrInputByTheReproducibleCoin) {
  Pipeline p = Pipeline::FromYaml(Prelude() +
                                  "  - {op: flip, name: fl, inputs: [x], probability: 0.5, outputs: [f]}\n"
                                  "outputs: [f]\n");
  int selected = 0, total = 0;
  RunIterations(p, 4, [&](int k, const PipelineOutputs& out, const TensorListCPU& x) {
    const std::vector<int> coin = ConditionCoin("fl", 0.5, kSeed, k, kBatch);
    selected +=
        ExpectSelected(OutputOnHost(out, 0), x, RunAlone(kFlip, x, kSeed, k), coin, "iteration " + std::to_string(k));
    total += kBatch;
  });
  // 64 fair coins: both outcomes occur (all alike has probability 2^-63).
  EXPECT_GT(selected, 0);
  EXPECT_LT(selected, total);
}

TEST(Conditions, EnableFromACoinFlipNode) {
  Pipeline p = Pipeline::FromYaml(Prelude() +
                                  "  - {op: random.coin_flip, name: coin, args: {probability: 0.3}, outputs: [c]}\n"
                                  "  - {op: flip, name: fl, inputs: [x], enable: $c, outputs: [f]}\n"
                                  "outputs: [f, c]\n");
  RunIterations(p, 3, [&](int k, const PipelineOutputs& out, const TensorListCPU& x) {
    const TensorListCPU c = OutputOnHost(out, 1);
    std::vector<int> mask;
    for (int s = 0; s < kBatch; ++s) mask.push_back(testing::At<int32_t>(c, s, 0));
    ExpectSelected(OutputOnHost(out, 0), x, RunAlone(kFlip, x, kSeed, k), mask, "iteration " + std::to_string(k));
  });
}

TEST(Conditions, EnableFromFedDataOfEveryMaskDtype) {
  for (const char* dtype : {"bool", "int32", "uint8", "int64"}) {
    SCOPED_TRACE(dtype);
    Pipeline p = Pipeline::FromYaml(Prelude() + "  - {op: external_source, name: m, args: {dtype: " + dtype +
                                    ", ndim: 0}, outputs: [mask]}\n"
                                    "  - {op: flip, name: fl, inputs: [x], args: {vertical: 1}, enable: $mask, outputs: [f]}\n"
                                    "outputs: [f]\n");
    std::vector<std::vector<int>> masks;
    for (int k = 0; k < 3; ++k) {
      // Integers other than 0 and 1 count as selected (nonzero), as flip's own flags do.
      std::vector<int> m = testing::RandomVector<int>(kBatch, 0, 1);
      TensorListCPU batch;
      batch.Resize(std::vector<Shape>(kBatch, Shape{}), ParseDType(dtype));
      for (int s = 0; s < kBatch; ++s) {
        const bool one_byte = std::string(dtype) == "bool";
        const int64_t raw = m[static_cast<size_t>(s)] && !one_byte ? testing::RandomVector<int>(1, 1, 100)[0]
                                                                    : m[static_cast<size_t>(s)];
        std::memcpy(batch.raw_sample(s), &raw, DTypeSize(batch.dtype()));  // the low bytes (little-endian)
      }
      p.Feed("m", std::move(batch));
      masks.push_back(m);
    }
    const OpSpec vflip = OpSpec("flip", "fl").AddInput("x").AddOutput("f").SetArg("vertical", int64_t{1});
    RunIterations(p, 3, [&](int k, const PipelineOutputs& out, const TensorListCPU& x) {
      ExpectSelected(OutputOnHost(out, 0), x, RunAlone(vflip, x, kSeed, k), masks[static_cast<size_t>(k)],
                     "iteration " + std::to_string(k));
    });
  }
}

TEST(Conditions, ProbabilityZeroPassesEverySampleAndOneComputesEvery) {
  for (const char* p_text : {"0", "1"}) {
    SCOPED_TRACE(p_text);
    Pipeline p = Pipeline::FromYaml(Prelude() + "  - {op: flip, name: fl, inputs: [x], probability: " + p_text +
                                    ", outputs: [f]}\noutputs: [f]\n");
    const int want = std::string(p_text) == "1" ? 1 : 0;
    RunIterations(p, 2, [&](int k, const PipelineOutputs& out, const TensorListCPU& x) {
      ExpectSelected(OutputOnHost(out, 0), x, RunAlone(kFlip, x, kSeed, k), std::vector<int>(kBatch, want),
                     "iteration " + std::to_string(k));
    });
  }
}

// 50 x 60 lies outside VaryingImages' sizes (8-40 x 8-48): no input is already its own resize
// (an input of the target size would come out unchanged and look unselected).
TEST(Conditions, UnselectedSamplesKeepTheirShapeUnderResize) {
  Pipeline p = Pipeline::FromYaml(Prelude() +
                                  "  - {op: resize, name: rs, inputs: [x], args: {size: [50, 60]}, probability: 0.5,"
                                  " outputs: [r]}\n"
                                  "outputs: [r]\n");
  const OpSpec resize =
      OpSpec("resize", "rs").AddInput("x").AddOutput("r").SetArg("size", std::vector<double>{50, 60});
  int resized = 0;
  RunIterations(p, 3, [&](int k, const PipelineOutputs& out, const TensorListCPU& x) {
    const std::vector<int> coin = ConditionCoin("rs", 0.5, kSeed, k, kBatch);
    const TensorListCPU got = OutputOnHost(out, 0);
    resized += ExpectSelected(got, x, RunAlone(resize, x, kSeed, k), coin, "iteration " + std::to_string(k));
    for (int s = 0; s < kBatch; ++s) {
      EXPECT_EQ(got.shape(s), coin[static_cast<size_t>(s)] ? Shape({50, 60, 3}) : x.shape(s)) << "sample " << s;
    }
  });
  EXPECT_GT(resized, 0);
  EXPECT_LT(resized, 3 * kBatch);
}

// The coin is an ordinary node keyed by (seed, name, iteration, sample): a run resumed from a
// checkpoint draws what the first run drew.
TEST(Conditions, ResumedRunDrawsTheSameCoins) {
  const std::string yaml = Prelude() +
                           "  - {op: flip, name: fl, inputs: [x], probability: 0.5, outputs: [f]}\n"
                           "outputs: [f]\n";
  std::vector<TensorListCPU> fed;
  for (int k = 0; k < 4; ++k) fed.push_back(testing::VaryingImages(kBatch));
  Pipeline first = Pipeline::FromYaml(yaml);
  for (const TensorListCPU& b : fed) first.Feed("in", b);
  first.Build();
  first.Run();
  first.Run();
  std::vector<TensorListCPU> want;
  std::string checkpoint;
  for (int k = 0; k < 4; ++k) {
    if (k == 2) checkpoint = first.Checkpoint();
    PipelineOutputs out = first.Outputs();
    want.push_back(OutputOnHost(out, 0));
  }
  Pipeline resumed = Pipeline::FromYaml(yaml);
  resumed.ResumeFrom(checkpoint);
  resumed.Feed("in", fed[2]);
  resumed.Feed("in", fed[3]);
  resumed.Build();
  for (int k = 2; k < 4; ++k) {
    PipelineOutputs out = resumed.Outputs();
    EXPECT_EQ(testing::CompareExact(OutputOnHost(out, 0), want[static_cast<size_t>(k)]), "") << "iteration " << k;
  }
}

TEST(Conditions, ACheckpointOfAnotherConditionIsRefusedNamingTheNode) {
  const auto yaml = [](const std::string& condition) {
    return Prelude() + "  - {op: flip, name: fl, inputs: [x], " + condition + ", outputs: [f]}\noutputs: [f]\n";
  };
  Pipeline first = Pipeline::FromYaml(yaml("probability: 0.5"));
  first.Feed("in", testing::VaryingImages(kBatch));
  first.Build();
  const std::string checkpoint = first.Checkpoint();
  Pipeline other = Pipeline::FromYaml(yaml("probability: 0.25"));
  other.ResumeFrom(checkpoint);
  other.Feed("in", testing::VaryingImages(kBatch));
  try {
    other.Build();
    ADD_FAILURE() << "expected the checkpoint to be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("node \"fl\" changed (op, device, inputs, outputs, arguments or "
                                               "enable:/probability:)"));
  }
}

TEST(Conditions, HiddenNodesFollowTheNodeAndTheSpecRoundTrips) {
  const PipelineSpec spec = ParsePipelineYaml(Prelude() +
                                              "  - {op: random.coin_flip, name: coin, outputs: [c]}\n"
                                              "  - {op: flip, name: fl, inputs: [x], probability: 0.25, outputs: [f]}\n"
                                              "  - {op: flip, name: fl2, inputs: [f], enable: $c, outputs: [g]}\n"
                                              "outputs: [g]\n");
  ASSERT_EQ(spec.conditions.size(), 2u);
  EXPECT_EQ(spec.conditions.at("fl").probability, 0.25);
  EXPECT_EQ(spec.conditions.at("fl2").enable, "c");
  const PipelineSpec again = ParsePipelineYaml(ToYaml(spec));
  EXPECT_EQ(again, spec) << ToYaml(spec);

  const Graph g = Graph::Build(spec, {.has_gpu = false});
  std::vector<std::string> names;
  for (const GraphNode& n : g.nodes()) names.push_back(n.name());
  EXPECT_THAT(names, ::testing::ElementsAre("in", "coin", "fl", "fl.coin", "fl.select", "fl2", "fl2.select"));
  EXPECT_EQ(g.node("fl").spec.outputs(), std::vector<std::string>{"fl.computed"});
  EXPECT_EQ(g.node("fl.select").spec.inputs(), (std::vector<std::string>{"x", "fl.computed"}));
  EXPECT_EQ(g.node("fl2.select").spec.arg_inputs().at("enable"), "c");
  EXPECT_EQ(g.spec(), spec);  // the graph keeps the spec as written
}

}  // namespace
}  // namespace conveyor
