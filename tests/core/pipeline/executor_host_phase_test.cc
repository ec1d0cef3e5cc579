// The executor's third operator shape, a GPU operator with a host phase (core/op/operator.h,
// docs/executor.md), through testing.host_phase: a host-placed uint8 input read in Setup, a
// per-sample host transform on the executor's pool into per-slot pinned staging, then an async
// copy and a kernel on the GPU stage's stream. On a real GPU (tag gpu; skips without one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/op/philox.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/core/pipeline/executor_testing/executor_test_ops.h"
#include "tests/util/gpu_test.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using testing::DrawAugment;
using testing::HostPhaseValue;
using Clock = std::chrono::steady_clock;

constexpr int kSeed = 77;

std::string Yaml(const std::string& ops, const std::string& outputs, int batch, int threads, int prefetch) {
  return "pipeline: {name: host_phase_test, batch_size: " + std::to_string(batch) +
         ", device: gpu, num_threads: " + std::to_string(threads) + ", prefetch_depth: " + std::to_string(prefetch) +
         ", seed: " + std::to_string(kSeed) + ", graph_capture: true}\nops:\n" + ops + "outputs: [" + outputs + "]\n";
}

TensorListCPU ToHost(const TensorListGPU& list) {
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, list, stream.view());  // waits on the list's ready event on `stream`
  stream.Synchronize();
  return host;
}

// Random bytes in samples of random length; the first `full` batches take `max_size` for every
// sample, so every slot of the ring reaches its capacity during warm-up.
class ByteBatches {
 public:
  ByteBatches(int batch, int64_t max_size, int full) : batch_(batch), max_size_(max_size), full_(full) {}
  TensorListCPU Next() {
    std::vector<Shape> shapes;
    for (int s = 0; s < batch_; ++s) {
      int64_t n = max_size_;
      if (made_ >= full_) {
        // About one sample in ten is empty: the padding and offsets of zero-size samples too.
        n = rng_() % 10 == 0 ? 0 : 1 + static_cast<int64_t>(rng_() % static_cast<uint64_t>(max_size_));
      }
      shapes.push_back(Shape{n});
    }
    TensorListCPU list;
    list.Resize(shapes, DType::kUInt8);
    for (int s = 0; s < batch_; ++s) {
      auto* p = static_cast<uint8_t*>(list.raw_sample(s));
      for (int64_t i = 0; i < shapes[s].num_elements(); ++i) p[i] = static_cast<uint8_t>(rng_());
    }
    ++made_;
    return list;
  }

 private:
  int batch_;
  int64_t max_size_;
  int full_;
  int made_ = 0;
  std::mt19937_64 rng_{20261123};
};

// Feeds `p` from `batches`, keeping a copy of every batch fed (the reference) until checked.
void FeedOne(Pipeline& p, ByteBatches& batches, std::deque<TensorListCPU>& fed) {
  TensorListCPU batch = batches.Next();
  TensorListCPU copy;
  copy.Resize(batch.shapes(), batch.dtype());
  if (batch.nbytes() > 0) std::memcpy(copy.raw_sample(0), batch.raw_sample(0), batch.nbytes());
  fed.push_back(std::move(copy));
  p.Feed("src", std::move(batch));
}

// Builds `p` fed two batches ahead from `batches` (samples up to max_size bytes) and takes
// `iterations` outputs, each waited for and released, feeding one batch per output.
void RunFedTwoAhead(Pipeline& p, int batch, int64_t max_size, int iterations) {
  ByteBatches batches(batch, max_size, 2);
  std::deque<TensorListCPU> fed;
  for (int i = 0; i < 2; ++i) FeedOne(p, batches, fed);
  p.Build();
  for (int k = 0; k < iterations; ++k) {
    PipelineOutputs out = p.Outputs();
    out.Sync();
    out.Release();
    fed.pop_front();
    FeedOne(p, batches, fed);
    p.Run();
  }
}

TEST(ExecutorHostPhase, MatchesTheHostReferenceAndTheCapturedSegmentAfterItStaysCaptured) {
  CONVEYOR_REQUIRE_GPU();
  constexpr int kBatch = 5, kPrefetch = 3, kIterations = 60;
  constexpr int64_t kMaxSize = 2000;
  Pipeline p = Pipeline::FromYaml(Yaml(
      "  - {op: external_source, name: src, device: cpu, args: {dtype: uint8, ndim: 1}, outputs: [raw]}\n"
      "  - {op: testing.host_phase, name: hp, device: gpu, inputs: [raw], args: {add: 3}, outputs: [x]}\n"
      "  - {op: testing.augment, name: a1, device: gpu, inputs: [x], outputs: [y1]}\n"
      "  - {op: testing.augment, name: a2, device: gpu, inputs: [y1], outputs: [y2]}\n",
      "y2, x", kBatch, 2, kPrefetch));
  ByteBatches batches(kBatch, kMaxSize, kPrefetch);
  std::deque<TensorListCPU> fed;
  for (int i = 0; i < kPrefetch; ++i) FeedOne(p, batches, fed);
  p.Build();
  for (int64_t k = 0; k < kIterations; ++k) {
    PipelineOutputs out = p.Outputs();
    ASSERT_EQ(out.iteration(), k);
    const TensorListCPU y2 = ToHost(out.Gpu(0));
    const TensorListCPU x = ToHost(out.Gpu(1));
    const TensorListCPU& in = fed.front();
    ASSERT_EQ(x.shapes(), in.shapes()) << "iteration " << k;
    ASSERT_EQ(y2.shapes(), in.shapes()) << "iteration " << k;
    for (int s = 0; s < in.num_samples(); ++s) {
      const auto* pin = static_cast<const uint8_t*>(in.raw_sample(s));
      const auto* px = static_cast<const float*>(x.raw_sample(s));
      const auto* py = static_cast<const float*>(y2.raw_sample(s));
      const auto p1 = DrawAugment(kSeed, NodeId("a1"), k, s);
      const auto p2 = DrawAugment(kSeed, NodeId("a2"), k, s);
      for (int64_t i = 0; i < in.shape(s).num_elements(); ++i) {
        const float want_x = HostPhaseValue(pin[i], 3.0);
        ASSERT_EQ(px[i], want_x) << "iteration " << k << " sample " << s << " i " << i;
        ASSERT_EQ(py[i], std::fmaf(std::fmaf(want_x, p1.scale, p1.bias), p2.scale, p2.bias))
            << "iteration " << k << " sample " << s << " i " << i;
      }
    }
    fed.pop_front();
    out.Release();
    if (k + kPrefetch < kIterations) {
      FeedOne(p, batches, fed);
      p.Run();
    }
  }
  // hp is not capturable, so it ends a segment; a1 + a2 form the next one, captured once per slot
  // in warm-up (full-size batches) and only replayed after: sizes vary within capacity.
  const ExecutorCounters c = p.counters();
  EXPECT_EQ(c.iterations, kIterations);
  EXPECT_EQ(c.captures, kPrefetch);
  EXPECT_EQ(c.replays, kIterations);
}

// ExecutorCounters::gpu_issue_parts says where the GPU stage's issue time goes: the host phase's
// node (5 ms of sleeps per iteration on the pool) takes nearly all of it, named and in GPU order
// beside the captured segment after it; the parts add up to no more than the whole. With
// CONVEYOR_ISSUE_DETAIL=1 each segment is split into setup + place, prepare and run, and hp's
// sleeps land in its run.
ExecutorCounters RunHostPhaseThenCaptured(int iterations) {
  constexpr int kBatch = 4;
  Pipeline p = Pipeline::FromYaml(Yaml(
      "  - {op: external_source, name: src, device: cpu, args: {dtype: uint8, ndim: 1}, outputs: [raw]}\n"
      "  - {op: testing.host_phase, name: hp, device: gpu, inputs: [raw], args: {sleep_ms: 5}, outputs: [x]}\n"
      "  - {op: testing.augment, name: a1, device: gpu, inputs: [x], outputs: [y1]}\n"
      "  - {op: testing.augment, name: a2, device: gpu, inputs: [y1], outputs: [y2]}\n",
      "y2", kBatch, 4, 2));
  RunFedTwoAhead(p, kBatch, 500, iterations);
  return p.counters();
}

// The parts' names in order, checking each is >= 0 and that they add up to at most the whole;
// `hp_ns` gets the part named `hp_part`.
std::vector<std::string> CheckIssueParts(const ExecutorCounters& c, const std::string& hp_part, int64_t& hp_ns) {
  std::vector<std::string> names;
  int64_t sum = 0;
  for (const auto& part : c.gpu_issue_parts) {
    names.push_back(part.name);
    EXPECT_GE(part.ns, 0) << part.name;
    sum += part.ns;
    if (part.name == hp_part) hp_ns = part.ns;
  }
  EXPECT_LE(sum, c.stage_issue_ns);
  return names;
}

TEST(ExecutorHostPhase, IssueTimeIsSplitByGpuSegment) {
  CONVEYOR_REQUIRE_GPU();
  const ExecutorCounters c = RunHostPhaseThenCaptured(12);
  int64_t hp = 0;
  EXPECT_THAT(CheckIssueParts(c, "hp", hp),
              ::testing::ElementsAre("consumer waits + staging", "hp", "a1 + a2 (captured)", "ready record"));
  // Each finished iteration slept 5 ms in hp's RunGpu (4 samples of 5 ms on 4 threads).
  EXPECT_GE(hp, c.iterations * 5'000'000) << c.iterations << " iterations";
  EXPECT_GE(static_cast<double>(hp), 0.8 * static_cast<double>(c.stage_issue_ns));
}

TEST(ExecutorHostPhase, IssueDetailSplitsEachSegmentIntoSetupPrepareAndRun) {
  CONVEYOR_REQUIRE_GPU();
  ::setenv("CONVEYOR_ISSUE_DETAIL", "1", 1);
  const ExecutorCounters c = RunHostPhaseThenCaptured(12);
  ::unsetenv("CONVEYOR_ISSUE_DETAIL");
  int64_t hp_run = 0;
  EXPECT_THAT(CheckIssueParts(c, "hp: run", hp_run),
              ::testing::ElementsAre("consumer waits + staging", "hp: setup + place", "hp: prepare", "hp: run",
                                     "a1 + a2 (captured): setup + place", "a1 + a2 (captured): prepare",
                                     "a1 + a2 (captured): run", "ready record"));
  EXPECT_GE(hp_run, c.iterations * 5'000'000) << c.iterations << " iterations";
}

TEST(ExecutorHostPhase, RunsOnThePoolWhileTheGpuRunsThePreviousIteration) {
  CONVEYOR_REQUIRE_GPU();
  testing::ClearTimeline();
  testing::ResetHostPhaseMaxThreads();
  constexpr int kBatch = 4;
  // Host phase: 4 samples of 10 ms on a pool of 4; GPU work: 60 ms per iteration.
  Pipeline p = Pipeline::FromYaml(Yaml(
      "  - {op: external_source, name: src, device: cpu, args: {dtype: uint8, ndim: 1}, outputs: [raw]}\n"
      "  - {op: testing.host_phase, name: hp, device: gpu, inputs: [raw], "
      "args: {sleep_ms: 10, spin_ms: 60, record: true}, outputs: [x]}\n",
      "x", kBatch, 4, 2));
  RunFedTwoAhead(p, kBatch, 1000, 6);
  EXPECT_GE(testing::HostPhaseMaxThreads(), 2) << "the host phase ran on one thread: not on the executor's pool";
  std::map<std::pair<std::string, int64_t>, std::pair<Clock::time_point, Clock::time_point>> spans;
  for (const auto& e : testing::Timeline()) {
    auto& span = spans[{e.node, e.iteration}];
    (e.start ? span.first : span.second) = e.time;
  }
  int overlapping = 0;
  for (int64_t k = 1; k <= 3; ++k) {
    ASSERT_TRUE(spans.count({"hp:host", k + 1}) && spans.count({"hp:gpu", k})) << "iteration " << k;
    const auto host = spans[{"hp:host", k + 1}];
    const auto gpu = spans[{"hp:gpu", k}];
    if (host.first < gpu.second && gpu.first < host.second) ++overlapping;
  }
  EXPECT_EQ(overlapping, 3) << "the host phase of k + 1 must run while the GPU works on k";
}

// Operator::LookAhead: each iteration's host input is shown to the node once its CPU stage has run
// and before that iteration's RunGpu, byte for byte what RunGpu then reads (every ring slot, random
// sizes). With the CPU stage on its own thread the look at k + 1 comes while RunGpu(k) is still in
// its host phase (what lets the JPEG decoder start k + 1's costliest photos early). With one stage
// thread, where the GPU stage follows the CPU stage at once, there is no look.
TEST(ExecutorHostPhase, LookAheadShowsEachIterationsInputBeforeItsGpuStage) {
  CONVEYOR_REQUIRE_GPU();
  constexpr int kBatch = 4, kIterations = 10;
  for (const bool stage_thread : {true, false}) {
    SCOPED_TRACE(stage_thread ? "CPU stage on its own thread" : "one stage thread");
    testing::ClearTimeline();
    testing::ClearHostPhaseLooks();
    std::string yaml = Yaml(
        "  - {op: external_source, name: src, device: cpu, args: {dtype: uint8, ndim: 1}, outputs: [raw]}\n"
        "  - {op: testing.host_phase, name: hp, device: gpu, inputs: [raw], "
        "args: {sleep_ms: 10, record: true}, outputs: [x]}\n",
        "x", kBatch, 4, 2);
    const std::string flag = std::string("graph_capture: true, cpu_stage_thread: ") + (stage_thread ? "true" : "false");
    yaml.replace(yaml.find("graph_capture: true"), std::string("graph_capture: true").size(), flag);
    Pipeline p = Pipeline::FromYaml(yaml);
    RunFedTwoAhead(p, kBatch, 1000, kIterations);
    const std::vector<testing::HostPhaseLook> looks = testing::HostPhaseLooks();
    if (!stage_thread) {
      for (const auto& l : looks) EXPECT_FALSE(l.ahead) << "a look at iteration " << l.iteration << " with one stage thread";
      continue;
    }
    std::map<int64_t, Clock::time_point> host_end;
    for (const auto& e : testing::Timeline()) {
      if (e.node == "hp:host" && !e.start) host_end[e.iteration] = e.time;
    }
    int overlapping = 0;
    for (int64_t k = 0; k < kIterations; ++k) {
      int run = -1, look = -1;
      for (size_t j = 0; j < looks.size(); ++j) {
        if (looks[j].iteration != k) continue;
        if (!looks[j].ahead && run < 0) run = static_cast<int>(j);
        if (looks[j].ahead && run < 0) look = static_cast<int>(j);
      }
      ASSERT_GE(run, 0) << "iteration " << k << " never ran";
      ASSERT_GE(look, 0) << "iteration " << k << " was not shown ahead before its RunGpu";
      EXPECT_EQ(looks[look].checksum, looks[run].checksum) << "iteration " << k << ": shown other bytes than it ran on";
      if (k > 0 && host_end.count(k - 1) && looks[look].time < host_end[k - 1]) ++overlapping;
    }
    EXPECT_GE(overlapping, kIterations / 2) << "the look at k + 1 should come during RunGpu(k)'s 10 ms host phase";
  }
}

// A CPU output a GPU node reads on the host is allocated pinned (what nvJPEG's engines copy by
// DMA instead of through a pageable bounce on the calling thread), in every slot of the ring.
TEST(ExecutorHostPhase, HostInputOfAGpuNodeIsPinned) {
  CONVEYOR_REQUIRE_GPU();
  constexpr int kBatch = 4, kPrefetch = 3;
  Pipeline p = Pipeline::FromYaml(Yaml(
      "  - {op: external_source, name: src, device: cpu, args: {dtype: uint8, ndim: 1}, outputs: [raw]}\n"
      "  - {op: testing.host_phase, name: hp, device: gpu, inputs: [raw], outputs: [x]}\n",
      "x", kBatch, 2, kPrefetch));
  ByteBatches batches(kBatch, 3000, 1 << 20);  // every sample 3,000 bytes
  std::deque<TensorListCPU> fed;
  for (int i = 0; i < kPrefetch; ++i) FeedOne(p, batches, fed);
  testing::ResetHostPhaseInputKinds();
  p.Build();
  for (int k = 0; k < 2 * kPrefetch; ++k) {
    PipelineOutputs out = p.Outputs();
    const TensorListCPU x = ToHost(out.Gpu(0));
    const TensorListCPU& in = fed.front();
    ASSERT_EQ(x.shapes(), in.shapes()) << "iteration " << k;
    for (int s = 0; s < kBatch; ++s) {
      const auto* got = static_cast<const float*>(x.raw_sample(s));
      const auto* want = static_cast<const uint8_t*>(in.raw_sample(s));
      for (int64_t i = 0; i < in.shape(s).num_elements(); ++i) {
        ASSERT_EQ(got[i], HostPhaseValue(want[i], 0)) << "iteration " << k << " sample " << s << " i " << i;
      }
    }
    fed.pop_front();
    out.Release();
    FeedOne(p, batches, fed);
    p.Run();
  }
  EXPECT_EQ(testing::HostPhaseInputKinds(), std::vector<MemoryKind>{MemoryKind::kPinned});
}

TEST(ExecutorHostPhase, BadHostInputNamesTheNodeAndSample) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline p = Pipeline::FromYaml(Yaml(
      "  - {op: external_source, name: src, device: cpu, args: {dtype: uint8}, outputs: [raw]}\n"
      "  - {op: testing.host_phase, name: hp, device: gpu, inputs: [raw], outputs: [x]}\n",
      "x", 2, 2, 1));
  TensorListCPU bad;
  bad.Resize({Shape{4}, Shape{2, 3}}, DType::kUInt8);
  p.Feed("src", std::move(bad));
  p.Build();
  try {
    p.Outputs();
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("iteration 0: node \"hp\" (op \"testing.host_phase\")"));
    EXPECT_THAT(e.what(), HasSubstr("sample 1 has shape"));
    EXPECT_THAT(e.what(), HasSubstr("expected 1-D bytes"));
  }
}

}  // namespace
}  // namespace conveyor
