// A detection chain through the real Pipeline and executor on the CPU, declared in YAML:
//
//   external_source boxes, labels ──> random_bbox_crop ──> bb_flip (horizontal: $mirror) ──> box_encoder
//   random.coin_flip ──> mirror ───────────────────────────────┘
//
// Every iteration k equals the operators run alone at iteration k with the pipeline's seed and the
// node's name (so draws depend on (seed, node, iteration, sample) only: runs repeat and a resumed
// run continues exactly), the flip follows the coin per sample, a second pipeline gives the same
// bytes, and a pipeline resumed from a checkpoint gives the batches the first one gave.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include "core/pipeline/pipeline.h"
#include "tests/operators/detection/box_testing.h"

namespace conveyor::testing {
namespace {

constexpr int kBatch = 6;
constexpr int kIterations = 6;
constexpr uint64_t kSeed = 42;

std::vector<double> Anchors() {
  std::vector<double> a;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) a.insert(a.end(), {x / 4.0, y / 4.0, (x + 1) / 4.0, (y + 1) / 4.0});
  }
  return a;
}

std::string Yaml() {
  std::ostringstream anchors;
  for (double v : Anchors()) anchors << (anchors.tellp() == 0 ? "" : ", ") << v;
  return "pipeline: {name: detection, batch_size: " + std::to_string(kBatch) +
         ", device: cpu, seed: " + std::to_string(kSeed) +
         ", num_threads: 2, prefetch_depth: 2}\n"
         "ops:\n"
         "  - {op: external_source, name: boxes_src, args: {dtype: float32, ndim: 2}, outputs: [boxes]}\n"
         "  - {op: external_source, name: labels_src, args: {dtype: int32, ndim: 1}, outputs: [labels]}\n"
         "  - {op: random.coin_flip, name: coin, args: {probability: 0.5}, outputs: [mirror]}\n"
         "  - op: random_bbox_crop\n"
         "    name: crop\n"
         "    inputs: [boxes, labels]\n"
         "    args: {thresholds: [0.1, 0.3, 0.5, 0.7, 0.9], scaling: [0.3, 1.0], aspect_ratio: [0.5, 2.0],\n"
         "           num_attempts: 20}\n"
         "    outputs: [anchor, shape, cropped, kept_labels]\n"
         "  - {op: bb_flip, name: flip, inputs: [cropped], args: {ltrb: true, horizontal: $mirror}, outputs: "
         "[flipped]}\n"
         "  - {op: box_encoder, name: enc, inputs: [flipped, kept_labels], args: {anchors: [" +
         anchors.str() +
         "], criteria: 0.5}, outputs: [encoded, encoded_labels]}\n"
         "outputs: [anchor, shape, flipped, kept_labels, mirror, encoded, encoded_labels]\n";
}

struct Fed {
  TensorListCPU boxes, labels;
};

std::vector<Fed> MakeFeeds() {
  std::vector<Fed> feeds;
  for (int k = 0; k < kIterations; ++k) {
    std::vector<std::vector<float>> boxes;
    for (int s = 0; s < kBatch; ++s) boxes.push_back(RandomLtrb(static_cast<size_t>((s + k) % 5)));
    Fed f{BoxBatch(boxes), {}};
    f.labels = RandomLabels(f.boxes);
    feeds.push_back(f);
  }
  return feeds;
}

// A copy with its own bytes: a slot's buffers are rewritten once its outputs are released.
TensorListCPU DeepCopy(const TensorListCPU& list) {
  TensorListCPU own;
  own.Resize(list.shapes(), list.dtype());
  for (int s = 0; s < list.num_samples(); ++s) {
    const size_t bytes = static_cast<size_t>(list.shape(s).num_elements()) * DTypeSize(list.dtype());
    if (bytes) std::memcpy(own.raw_sample(s), list.raw_sample(s), bytes);
  }
  return own;
}

// The outputs of iterations [first, last) of `p` (fed, then built or resumed at `first`),
// scheduling one more iteration after each while fed batches remain.
std::vector<std::vector<TensorListCPU>> Drain(Pipeline& p, int first, int last = kIterations) {
  std::vector<std::vector<TensorListCPU>> all;
  for (int k = first; k < last; ++k) {
    PipelineOutputs out = p.Outputs();
    EXPECT_EQ(out.iteration(), k);
    std::vector<TensorListCPU> copies;
    for (int i = 0; i < out.size(); ++i) copies.push_back(DeepCopy(out.Cpu(i)));
    all.push_back(copies);
    out.Release();
    if (k + 2 < kIterations) p.Run();  // prefetch_depth 2: iterations up to k + 1 are scheduled
  }
  return all;
}

void FeedFrom(Pipeline& p, const std::vector<Fed>& feeds, int first) {
  for (int k = first; k < kIterations; ++k) {
    p.Feed("boxes_src", feeds[static_cast<size_t>(k)].boxes);
    p.Feed("labels_src", feeds[static_cast<size_t>(k)].labels);
  }
}

OpSpec CropSpec() {
  return OpSpec("random_bbox_crop", "crop")
      .AddInput("boxes")
      .AddInput("labels")
      .AddOutput("anchor")
      .AddOutput("shape")
      .AddOutput("cropped")
      .AddOutput("kept_labels")
      .SetArg("thresholds", std::vector<double>{0.1, 0.3, 0.5, 0.7, 0.9})
      .SetArg("scaling", std::vector<double>{0.3, 1.0})
      .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0})
      .SetArg("num_attempts", 20);
}

TEST(DetectionPipeline, ChainEqualsTheOperatorsRunAloneAtEachIteration) {
  const std::vector<Fed> feeds = MakeFeeds();
  Pipeline p = Pipeline::FromYaml(Yaml(), "", {.has_gpu = false});
  FeedFrom(p, feeds, 0);
  p.Build();
  const std::vector<std::vector<TensorListCPU>> got = Drain(p, 0);
  ASSERT_EQ(got.size(), static_cast<size_t>(kIterations));
  int flipped_samples = 0, cropped_samples = 0;
  for (int k = 0; k < kIterations; ++k) {
    const Fed& f = feeds[static_cast<size_t>(k)];
    const std::vector<TensorListCPU> crop = RunBoxOp({CropSpec(), {f.boxes, f.labels}, {}, k, kSeed});
    for (int o = 0; o < 2; ++o) EXPECT_EQ(SameBytes(got[k][o], crop[o]), "") << "iteration " << k << " output " << o;
    EXPECT_EQ(SameBytes(got[k][3], crop[3]), "") << "iteration " << k;
    const std::vector<int32_t> mirror = [&] {
      std::vector<int32_t> m;
      for (int s = 0; s < kBatch; ++s) m.push_back(Values<int32_t>(got[k][4], s)[0]);
      return m;
    }();
    for (int s = 0; s < kBatch; ++s) {
      const std::vector<float> before = Values<float>(crop[2], s), after = Values<float>(got[k][2], s);
      ASSERT_EQ(before.size(), after.size());
      for (size_t i = 0; i < before.size(); i += 4) {
        const float want_l = mirror[s] ? 1 - before[i + 2] : before[i],
                    want_r = mirror[s] ? 1 - before[i] : before[i + 2];
        EXPECT_NEAR(after[i], want_l, 1e-6);
        EXPECT_NEAR(after[i + 2], want_r, 1e-6);
        EXPECT_EQ(after[i + 1], before[i + 1]);
      }
      flipped_samples += mirror[s];
      cropped_samples += Values<float>(crop[1], s)[0] < 1 ? 1 : 0;
    }
    const OpSpec enc = OpSpec("box_encoder", "enc")
                           .AddInput("flipped")
                           .AddInput("kept_labels")
                           .AddOutput("encoded")
                           .AddOutput("encoded_labels")
                           .SetArg("anchors", Anchors())
                           .SetArg("criteria", 0.5);
    const std::vector<TensorListCPU> encoded = RunBoxOp({enc, {got[k][2], got[k][3]}, {}, k, kSeed});
    EXPECT_EQ(SameBytes(got[k][5], encoded[0]), "") << "iteration " << k;
    EXPECT_EQ(SameBytes(got[k][6], encoded[1]), "") << "iteration " << k;
  }
  EXPECT_GT(flipped_samples, 0);
  EXPECT_LT(flipped_samples, kBatch * kIterations);
  EXPECT_GT(cropped_samples, 0);
}

TEST(DetectionPipeline, RunsRepeatAndAResumedRunContinuesExactly) {
  const std::vector<Fed> feeds = MakeFeeds();
  Pipeline first = Pipeline::FromYaml(Yaml(), "", {.has_gpu = false});
  FeedFrom(first, feeds, 0);
  first.Build();
  const std::vector<std::vector<TensorListCPU>> a = Drain(first, 0);

  Pipeline second = Pipeline::FromYaml(Yaml(), "", {.has_gpu = false});
  FeedFrom(second, feeds, 0);
  second.Build();
  const std::vector<std::vector<TensorListCPU>> b = Drain(second, 0, 3);
  const std::string checkpoint = second.Checkpoint();  // the state that reproduces iteration 3
  for (int k = 0; k < 3; ++k) {
    for (size_t o = 0; o < a[k].size(); ++o) EXPECT_EQ(SameBytes(b[k][o], a[k][o]), "") << k << " " << o;
  }

  Pipeline resumed = Pipeline::FromYaml(Yaml(), "", {.has_gpu = false});
  resumed.ResumeFrom(checkpoint);
  FeedFrom(resumed, feeds, 3);
  resumed.Build();
  const std::vector<std::vector<TensorListCPU>> c = Drain(resumed, 3);
  ASSERT_EQ(c.size(), 3u);
  for (int k = 3; k < kIterations; ++k) {
    for (size_t o = 0; o < a[k].size(); ++o) EXPECT_EQ(SameBytes(c[k - 3][o], a[k][o]), "") << k << " " << o;
  }
}

}  // namespace
}  // namespace conveyor::testing
