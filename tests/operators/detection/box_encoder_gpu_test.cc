// box_encoder on the GPU against the CPU encoder (the reference box_encoder_test checks against a
// whole-matrix reference): fresh random boxes of every kind (encoder_testing.h: out of range,
// degenerate, NaN and infinite, tiny, repeated boxes and anchor copies for ties) in batches whose
// samples hold 0 to 300 boxes (more than the kernel's 128-box chunk), int32 [N] and int64 [N, 1]
// labels, offsets on and off, over SSD300's 8732 anchors and small sets (duplicated anchors, anchors
// outside the image, gaps); hand-checked ties; errors; and a YAML pipeline whose box counts change
// every iteration, captured == eager bit for bit and == the CPU pipeline, with captures only when
// the staged inputs outgrow their buffers.
//
// Equal means: labels bit for bit; boxes bit for bit, except that with offset: true the w and h
// columns (log(w / aw), log(h / ah)) may be 1 float ulp apart — CUDA's log and glibc's may round a
// double's last bit differently (both are within 1 double ulp), which the float conversion almost
// always absorbs. Everything else is computed with the CPU's operations in the CPU's order. The
// tests print how many values took that 1 ulp. GPU cases skip without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "tests/operators/detection/encoder_testing.h"
#include "tests/util/pipeline_outputs.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec EncoderSpec(const std::vector<double>& anchors, bool offset, double criteria) {
  OpSpec spec = OpSpec("box_encoder", "enc")
                    .AddInput("boxes")
                    .AddInput("labels")
                    .AddOutput("encoded")
                    .AddOutput("elabels")
                    .SetArg("anchors", anchors)
                    .SetArg("criteria", criteria)
                    .SetArg("offset", offset);
  if (offset) {
    spec.SetArg("scale", 300.0)
        .SetArg("stds", std::vector<double>{0.1, 0.1, 0.2, 0.2})
        .SetArg("means", std::vector<double>{0.01, -0.02, 0.03, 0.5});
  }
  return spec;
}

std::vector<TensorListCPU> RunOnGpu(const OpSpec& spec, const TensorListCPU& boxes, const TensorListCPU& labels) {
  OpHarness h(spec, Device::kGpu, boxes.num_samples());
  h.SetInput(0, boxes);
  h.SetInput(1, labels);
  cuda::Stream stream = cuda::Stream::Create();
  h.Run(stream.view());
  return {h.OutputToHost(0), h.OutputToHost(1)};
}

struct AnchorSet {
  const char* name;
  std::vector<double> anchors;
  double criteria;
};

std::vector<AnchorSet> AnchorSets() {
  return {{"ssd300", Ssd300Anchors(), 0.5},
          {"grid_with_duplicates", GridAnchorsWithDuplicates(), 0.4},
          {"random_with_duplicates", RandomAnchors(40), 0.3},
          {"quarters", QuarterAnchors(), 0.5}};
}

TEST(BoxEncoderGpu, Ssd300AnchorsAreTheReferences) {
  const std::vector<double> a = Ssd300Anchors();
  ASSERT_EQ(a.size(), 4u * 8732);
  // The first map's first box: centre 0.5 / 37.5, side 21 / 300 (ssd_anchors.py's own check).
  EXPECT_NEAR((a[0] + a[2]) / 2, 0.5 / 37.5, 1e-12);
  EXPECT_NEAR(a[2] - a[0], 0.07, 1e-12);
}

TEST(BoxEncoderGpu, EqualsCpuOverAnchorSetsLabelDtypesAndOffsets) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<int64_t> counts = {0, 1, 3, 8, 21, 57, 129, 2, 300};
  int64_t ulp_diffs = 0, values = 0;
  for (const AnchorSet& set : AnchorSets()) {
    for (bool offset : {false, true}) {
      for (bool int64_labels : {false, true}) {
        SCOPED_TRACE(std::string(set.name) + (offset ? " offset" : "") + (int64_labels ? " int64" : " int32") +
                     " seed " + std::to_string(RngSeed()));
        std::vector<std::vector<float>> samples;
        for (int64_t n : counts) samples.push_back(RandomBoxes(static_cast<size_t>(n), set.anchors));
        const TensorListCPU boxes = BoxBatch(samples);
        const TensorListCPU labels = RandomLabelBatch(counts, int64_labels);
        const OpSpec spec = EncoderSpec(set.anchors, offset, set.criteria);
        const std::vector<TensorListCPU> gpu = RunOnGpu(spec, boxes, labels);
        const std::vector<TensorListCPU> cpu = RunBoxOp({spec, {boxes, labels}});
        EXPECT_EQ(CompareEncoded(gpu[0], gpu[1], cpu[0], cpu[1], offset, &ulp_diffs), "");
        EXPECT_GT(MatchedAnchors(cpu[1]), 0);
        values += static_cast<int64_t>(cpu[0].nbytes() / 4);
      }
    }
  }
  std::cout << "box_encoder GPU vs CPU: " << ulp_diffs << " of " << values
            << " encoded values 1 float ulp apart (log columns with offset), all others equal\n";
}

// Five copies of anchor 5 (clipped to the image: IoU 0.84 with it), which is duplicated as anchor
// 73 (GridAnchorsWithDuplicates: anchors 72..83 copy 0, 5, 10, ...): every copy's best anchor is 5
// (the first of the tie), the last copy claims it (label 15); anchor 73 (IoU 0.84 > criteria) takes
// the first copy (label 11). Forty jittered copies of anchor 20 in sample 1 share a best anchor
// too. GPU and CPU alike.
TEST(BoxEncoderGpu, BoxesSharingOneBestAnchor) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<double> anchors = GridAnchorsWithDuplicates();
  ASSERT_EQ(std::vector<double>(anchors.begin() + 4 * 5, anchors.begin() + 4 * 6),
            std::vector<double>(anchors.begin() + 4 * 73, anchors.begin() + 4 * 74));
  std::vector<float> same, jittered;
  for (int i = 0; i < 5; ++i) {
    for (int c = 0; c < 4; ++c) same.push_back(static_cast<float>(anchors[4 * 5 + static_cast<size_t>(c)]));
  }
  for (int i = 0; i < 40; ++i) {
    const auto d = RandomVector<float>(4, -0.01f, 0.01f);
    for (int c = 0; c < 4; ++c) jittered.push_back(static_cast<float>(anchors[4 * 20 + static_cast<size_t>(c)]) + d[c]);
  }
  const TensorListCPU boxes = BoxBatch({same, jittered});
  std::vector<int32_t> jittered_labels(40);
  for (int i = 0; i < 40; ++i) jittered_labels[static_cast<size_t>(i)] = 100 + i;
  const TensorListCPU labels = LabelBatch({{11, 12, 13, 14, 15}, jittered_labels});
  for (bool offset : {false, true}) {
    const OpSpec spec = EncoderSpec(anchors, offset, 0.5);
    const std::vector<TensorListCPU> gpu = RunOnGpu(spec, boxes, labels);
    const std::vector<TensorListCPU> cpu = RunBoxOp({spec, {boxes, labels}});
    int64_t ulp_diffs = 0;
    EXPECT_EQ(CompareEncoded(gpu[0], gpu[1], cpu[0], cpu[1], offset, &ulp_diffs), "") << "seed " << RngSeed();
    const std::vector<int32_t> got = Values<int32_t>(gpu[1], 0);
    EXPECT_EQ(got[5], 15) << "the last box claims the best anchor";
    EXPECT_EQ(got[73], 11) << "the duplicate matches the first box of the tie";
    EXPECT_GT(MatchedAnchors(gpu[1]), 2);
  }
}

TEST(BoxEncoderGpu, EmptyBatchAndSamplesWithoutUsableBoxes) {
  CONVEYOR_REQUIRE_GPU();
  const OpSpec spec = EncoderSpec(Ssd300Anchors(), true, 0.5);
  const std::vector<TensorListCPU> empty = RunOnGpu(spec, BoxBatch({}), LabelBatch({}));
  EXPECT_EQ(empty[0].num_samples(), 0);
  EXPECT_EQ(empty[1].num_samples(), 0);
  // No boxes, or only boxes without area: every anchor is background, as on the CPU.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TensorListCPU boxes = BoxBatch({{}, {0.2f, 0.2f, 0.2f, 0.6f, nan, 0, 1, 1, 0.5f, 0.9f, 0.7f, 0.1f}, {}});
  const TensorListCPU labels = LabelBatch({{}, {1, 2, 3}, {}});
  const std::vector<TensorListCPU> gpu = RunOnGpu(spec, boxes, labels);
  const std::vector<TensorListCPU> cpu = RunBoxOp({spec, {boxes, labels}});
  int64_t ulp_diffs = 0;
  EXPECT_EQ(CompareEncoded(gpu[0], gpu[1], cpu[0], cpu[1], true, &ulp_diffs), "");
  EXPECT_EQ(ulp_diffs, 0);  // the background rows are the host's bits
  EXPECT_EQ(MatchedAnchors(gpu[1]), 0);
}

TEST(BoxEncoderGpu, InputErrorsAsOnTheCpu) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU boxes = BoxBatch({{0.1f, 0.1f, 0.5f, 0.5f}, {0.1f, 0.1f, 0.5f, 0.5f, 0.2f, 0.2f, 0.3f, 0.3f}});
  const OpSpec spec = EncoderSpec(QuarterAnchors(), false, 0.5);
  const std::vector<std::pair<TensorListCPU, TensorListCPU>> bad = {
      {boxes, LabelBatch({{1}, {2}})},
      {boxes, MakeBatch<float>({{1}, {2}}, {{1}, {1, 2}})},
      {boxes, LabelBatch({{1}})},
      {MakeBatch<float>({{1, 3}}, {{0, 0, 1}}), LabelBatch({{1}})},
  };
  for (const auto& [b, l] : bad) {
    const std::string cpu = RunError({spec, {b, l}});
    EXPECT_THAT(cpu, HasSubstr("op \"box_encoder\" (enc): input "));
    EXPECT_EQ(ErrorOf([&] { RunOnGpu(spec, b, l); }), cpu);
  }
}

// --- A pipeline: captured == eager bit for bit, == the CPU pipeline as above. ---

constexpr int kBatch = 6;
constexpr int kIterations = 10;
constexpr int kGrowAt = 8;  // the first iteration whose boxes outgrow the staged buffers

std::string AnchorText(const std::vector<double>& anchors) {
  std::string text;
  char number[32];
  for (double v : anchors) {
    std::snprintf(number, sizeof(number), "%.17g", v);  // reads back exactly
    text += (text.empty() ? "" : ", ") + std::string(number);
  }
  return text;
}

// Two encoders on the same boxes (one captured segment of two nodes): SSD300 with offsets and int64
// [N, 1] labels, and the small grid without offsets with int32 [N] labels.
std::string PipelineYaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: box_encoder_gpu, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", seed: 5, num_threads: 2, prefetch_depth: 2, graph_capture: " + (capture ? "true" : "false") +
         "}\n"
         "ops:\n"
         "  - {op: external_source, name: boxes_src, device: cpu, args: {dtype: float32, ndim: 2}, outputs: [boxes]}\n"
         "  - {op: external_source, name: labels64_src, device: cpu, args: {dtype: int64, ndim: 2}, outputs: [labels64]}\n"
         "  - {op: external_source, name: labels32_src, device: cpu, args: {dtype: int32, ndim: 1}, outputs: [labels32]}\n"
         "  - {op: box_encoder, name: ssd, " + d + ", inputs: [boxes, labels64], args: {criteria: 0.5, offset: true, "
         "scale: 1.0, stds: [0.1, 0.1, 0.2, 0.2], anchors: [" + AnchorText(Ssd300Anchors()) +
         "]}, outputs: [ssd_boxes, ssd_labels]}\n"
         "  - {op: box_encoder, name: grid, " + d + ", inputs: [boxes, labels32], args: {criteria: 0.4, anchors: [" +
         AnchorText(GridAnchorsWithDuplicates()) + "]}, outputs: [grid_boxes, grid_labels]}\n"
         "outputs: [ssd_boxes, ssd_labels, grid_boxes, grid_labels]\n";
}

struct Fed {
  TensorListCPU boxes, labels64, labels32;
};

// Box counts per iteration: 0 and 1 set the staged buffers' capacity (57 boxes each), 2..6 stay
// below it with other counts, 7 repeats 3, 8 outgrows it (up to 200 boxes a sample: two chunks),
// 9 repeats 8.
std::vector<Fed> MakeFeeds() {
  const std::vector<double> anchors = Ssd300Anchors();
  std::vector<Fed> feeds;
  for (int k = 0; k < kIterations; ++k) {
    if (k == 7 || k == 9) {
      feeds.push_back(feeds[static_cast<size_t>(k == 7 ? 3 : 8)]);
      continue;
    }
    std::vector<int64_t> counts;
    if (k == 0) counts = {0, 5, 12, 30, 1, 9};
    if (k == 1) counts = {3, 0, 20, 17, 7, 10};
    if (k == kGrowAt) counts = {140, 0, 60, 200, 3, 90};
    if (counts.empty()) counts = RandomVector<int64_t>(kBatch, 0, 9);
    std::vector<std::vector<float>> samples;
    for (int64_t n : counts) samples.push_back(RandomBoxes(static_cast<size_t>(n), anchors));
    Fed f{BoxBatch(samples), RandomLabelBatch(counts, true), {}};
    std::vector<std::vector<int32_t>> narrow;
    for (int s = 0; s < kBatch; ++s) {
      const std::vector<int64_t> wide = Values<int64_t>(f.labels64, s);
      narrow.emplace_back(wide.size());
      for (size_t i = 0; i < wide.size(); ++i) narrow.back()[i] = static_cast<int32_t>(wide[i] % 1000);
    }
    f.labels32 = LabelBatch(narrow);
    feeds.push_back(f);
  }
  return feeds;
}

TEST(BoxEncoderGpuPipeline, CapturedEqualsEagerEqualsCpuAsBoxCountsChange) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline cpu = Pipeline::FromYaml(PipelineYaml("cpu", false));
  Pipeline eager = Pipeline::FromYaml(PipelineYaml("gpu", false));
  Pipeline captured = Pipeline::FromYaml(PipelineYaml("gpu", true));
  const std::vector<Fed> feeds = MakeFeeds();
  for (Pipeline* p : {&cpu, &eager, &captured}) {
    for (const Fed& f : feeds) {
      p->Feed("boxes_src", f.boxes);
      p->Feed("labels64_src", f.labels64);
      p->Feed("labels32_src", f.labels32);
    }
    p->Build();
  }
  int64_t ulp_diffs = 0, matched = 0, captures_after_warmup = -1;
  for (int k = 0; k < kIterations; ++k) {
    SCOPED_TRACE("iteration " + std::to_string(k) + ", seed " + std::to_string(RngSeed()));
    if (k >= 2) {
      for (Pipeline* p : {&cpu, &eager, &captured}) p->Run();
    }
    PipelineOutputs a = cpu.Outputs(), b = eager.Outputs(), c = captured.Outputs();
    std::vector<TensorListCPU> want, got_eager, got_captured;
    for (int o = 0; o < 4; ++o) {
      want.push_back(OutputOnHost(a, o));
      got_eager.push_back(OutputOnHost(b, o));
      got_captured.push_back(OutputOnHost(c, o));
      ASSERT_EQ(want.back().num_samples(), kBatch);
      EXPECT_EQ(SameBytes(got_captured.back(), got_eager.back()), "") << "captured vs eager, output " << o;
    }
    EXPECT_EQ(CompareEncoded(got_eager[0], got_eager[1], want[0], want[1], true, &ulp_diffs), "") << "ssd";
    EXPECT_EQ(CompareEncoded(got_eager[2], got_eager[3], want[2], want[3], false, &ulp_diffs), "") << "grid";
    matched += MatchedAnchors(want[1]) + MatchedAnchors(want[3]);
    a.Release();
    b.Release();
    c.Release();
    // Iterations up to k + 1 are scheduled here: read the count before the growth can be captured.
    if (k == 4) captures_after_warmup = captured.counters().captures;
    if (k == kGrowAt - 3) {
      EXPECT_EQ(captured.counters().captures, captures_after_warmup) << "box counts within capacity re-captured";
    }
  }
  EXPECT_GT(matched, 0);
  EXPECT_GT(captures_after_warmup, 0);
  EXPECT_GT(captured.counters().captures, captures_after_warmup) << "boxes beyond capacity must re-capture";
  EXPECT_GE(captured.counters().replays, kIterations - 4);  // 2..7; 8 and 9 grow slots 0 and 1
  EXPECT_EQ(eager.counters().captures, 0);
  std::cout << "box_encoder pipeline GPU vs CPU: " << ulp_diffs << " values 1 float ulp apart\n";
}

}  // namespace
}  // namespace conveyor::testing
