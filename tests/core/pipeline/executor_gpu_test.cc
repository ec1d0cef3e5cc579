// Executor tests on a real GPU (tag gpu; they skip without one): streams, overlap, staging,
// steady state, errors and shutdown. Captured segments: executor_capture_gpu_test.cc.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <thread>
#include <string>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/stats.h"
#include "core/op/philox.h"
#include "core/pipeline/captured_segment.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/core/pipeline/executor_testing/executor_test_ops.h"
#include "tests/core/pipeline/executor_gpu_testing.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using namespace executor_gpu_testing;  // NOLINT: the shared helpers
using Clock = std::chrono::steady_clock;

TEST(ExecutorGpu, NeverUsesTheLegacyDefaultStream) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline p = Pipeline::FromYaml(GpuYaml(
      "  - {op: testing.pattern, name: src, args: {max_size: 256}, outputs: [x]}\n"
      "  - {op: testing.gpu_spin, name: spin, device: gpu, inputs: [x], args: {add: 1}, outputs: [y]}\n"
      "  - {op: testing.augment, name: aug, device: gpu, inputs: [y], outputs: [z]}\n",
      "z", 2, true));
  p.Build();
  for (int i = 0; i < 4; ++i) SyncStep(p);  // warm-up: allocations and captures happen here
  testing::SpinGpu(200, cuda::StreamView::Legacy());
  const auto start = Clock::now();
  for (int i = 0; i < 5; ++i) SyncStep(p);
  const bool legacy_still_busy = !cuda::StreamView::Legacy().Query();
  const auto elapsed = Clock::now() - start;
  cuda::StreamView::Legacy().Synchronize();
  EXPECT_TRUE(legacy_still_busy) << "iterations took "
                                 << std::chrono::duration<double, std::milli>(elapsed).count() << " ms";
}

TEST(ExecutorGpu, CpuStageOfNextIterationOverlapsGpuStage) {
  CONVEYOR_REQUIRE_GPU();
  testing::ClearTimeline();
  Pipeline p = Pipeline::FromYaml(GpuYaml(
      "  - {op: testing.pattern, name: cpu, args: {sleep_ms: 50, record: true}, outputs: [x]}\n"
      "  - {op: testing.gpu_spin, name: gpu, device: gpu, inputs: [x], args: {spin_ms: 50, record: true}, "
      "outputs: [y]}\n",
      "y", 2, false));
  p.Build();
  for (int i = 0; i < 6; ++i) SyncStep(p);
  std::map<std::pair<std::string, int64_t>, std::pair<Clock::time_point, Clock::time_point>> spans;
  for (const auto& e : testing::Timeline()) {
    auto& span = spans[{e.node, e.iteration}];
    (e.start ? span.first : span.second) = e.time;
  }
  int overlapping = 0;
  for (int64_t k = 1; k <= 3; ++k) {
    ASSERT_TRUE(spans.count({"cpu", k + 1}) && spans.count({"gpu", k}));
    const auto cpu = spans[{"cpu", k + 1}];
    const auto gpu = spans[{"gpu", k}];
    if (cpu.first < gpu.second && gpu.first < cpu.second) ++overlapping;
  }
  EXPECT_EQ(overlapping, 3);
}

// cpu_stage_thread: auto (the default) runs a pipeline with both stages on two stage threads, the
// CPU stage's smaller arena while it is ahead of a slow consumer; `false` keeps one thread.
TEST(ExecutorGpu, TheCpuStageHasItsOwnThreadByDefault) {
  CONVEYOR_REQUIRE_GPU();
  const std::string ops =
      "  - {op: testing.pattern, name: src, args: {max_size: 256}, outputs: [x]}\n"
      "  - {op: testing.gpu_spin, name: spin, device: gpu, inputs: [x], args: {add: 1}, outputs: [y]}\n";
  Pipeline p = Pipeline::FromYaml(GpuYaml(ops, "y", 2, true));
  p.Build();
  for (int i = 0; i < 8; ++i) {
    PipelineOutputs out = p.Outputs();
    out.Sync();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    out.Release();
    p.Run();
  }
  EXPECT_TRUE(p.counters().cpu_stage_thread);
  EXPECT_GE(p.counters().cpu_stage_ahead_iterations, 5);
  std::string off = GpuYaml(ops, "y", 2, true);
  off.insert(off.find('}'), ", cpu_stage_thread: false");
  Pipeline one = Pipeline::FromYaml(off);
  one.Build();
  SyncStep(one);
  EXPECT_FALSE(one.counters().cpu_stage_thread);
  EXPECT_EQ(one.counters().cpu_stage_ahead_iterations, 0);
}

TEST(ExecutorGpu, StagingBuffersAreNeverOverwrittenEarly) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline p = Pipeline::FromYaml(GpuYaml(
      "  - {op: testing.pattern, name: src, args: {min_size: 100, max_size: 5000}, outputs: [x]}\n"
      "  - {op: testing.gpu_spin, name: slow, device: gpu, inputs: [x], args: {spin_ms: 2, add: 0.5}, "
      "outputs: [y]}\n",
      "y, x", 3, false));
  p.Build();
  for (int64_t k = 0; k < 200; ++k) {
    PipelineOutputs out = p.Outputs();
    ASSERT_EQ(out.iteration(), k);
    const TensorListCPU y = ToHost(out.Gpu(0));
    const TensorListCPU& x = out.Cpu(1);
    for (int s = 0; s < y.num_samples(); ++s) {
      const int64_t n = PatternSize(k, s, 100, 5000, -1);
      ASSERT_EQ(y.shape(s), Shape{n});
      const float* py = static_cast<const float*>(y.raw_sample(s));
      const float* px = static_cast<const float*>(x.raw_sample(s));
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(py[i], PatternValue(k, s, i) + 0.5f) << "iteration " << k << " sample " << s << " i " << i;
        ASSERT_EQ(px[i], PatternValue(k, s, i)) << "iteration " << k << " sample " << s << " i " << i;
      }
    }
    out.Release();
    p.Run();
  }
}

TEST(ExecutorGpu, SteadyStateAllocatesNothing) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline p = Pipeline::FromYaml(GpuYaml(
      "  - {op: testing.pattern, name: src, args: {min_size: 10, max_size: 4000}, outputs: [x]}\n"
      "  - {op: testing.gpu_spin, name: spin, device: gpu, inputs: [x], args: {add: 2}, outputs: [y]}\n"
      "  - {op: testing.augment, name: aug, device: gpu, inputs: [y], outputs: [z]}\n",
      "z, x", 2, true));
  p.Build();
  for (int i = 0; i < testing::kPatternWarmup + 2; ++i) SyncStep(p);
  std::map<MemoryKind, MemoryStatsSnapshot> before;
  for (MemoryKind kind : {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice}) before[kind] = MemoryStats::Get(kind);
  const int64_t captures = p.counters().captures;
  for (int i = 0; i < 50; ++i) SyncStep(p);
  for (MemoryKind kind : {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice}) {
    EXPECT_EQ(MemoryStats::Get(kind).allocations, before[kind].allocations) << MemoryKindName(kind);
    EXPECT_EQ(MemoryStats::Get(kind).upstream_allocations, before[kind].upstream_allocations) << MemoryKindName(kind);
  }
  EXPECT_EQ(p.counters().captures, captures);
}

TEST(ExecutorGpu, GpuOperatorErrorSurfacesFromOutputs) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline p = Pipeline::FromYaml(GpuYaml(
      "  - {op: testing.pattern, name: src, outputs: [x]}\n"
      "  - {op: testing.gpu_spin, name: bad, device: gpu, inputs: [x], args: {fail_at: 2}, outputs: [y]}\n",
      "y", 2, false));
  p.Build();
  for (int k = 0; k < 2; ++k) SyncStep(p);
  try {
    p.Outputs();
    FAIL() << "expected the error of iteration 2";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("iteration 2"));
    EXPECT_THAT(e.what(), HasSubstr("node \"bad\""));
    EXPECT_THAT(e.what(), HasSubstr("op \"testing.gpu_spin\""));
  }
}

TEST(ExecutorGpu, DestroyedMidPrefetchReturnsAllMemory) {
  CONVEYOR_REQUIRE_GPU();
  std::map<MemoryKind, int64_t> before;
  for (MemoryKind kind : {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice}) {
    before[kind] = MemoryStats::Get(kind).current_bytes;
  }
  const auto start = Clock::now();
  {
    Pipeline p = Pipeline::FromYaml(GpuYaml(
        "  - {op: testing.pattern, name: src, args: {max_size: 100000}, outputs: [x]}\n"
        "  - {op: testing.gpu_spin, name: spin, device: gpu, inputs: [x], args: {spin_ms: 100}, outputs: [y]}\n"
        "  - {op: testing.augment, name: aug, device: gpu, inputs: [y], outputs: [z]}\n",
        "z", 3, true));
    p.Build();
    for (int i = 0; i < 3; ++i) p.Run();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  for (MemoryKind kind : {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice}) {
    EXPECT_EQ(MemoryStats::Get(kind).current_bytes, before[kind]) << MemoryKindName(kind);
  }
}

// Outputs ordered on a consumer stream (WaitOn) that is destroyed before they are released — a
// Python conveyor.Stream going out of scope before the batch, as in a training script's last
// iteration: the release skips the dead stream (its work has finished) instead of recording an
// event on it (which crashed, H100 2026-11-25), whether the pipeline is still running (the slot
// is reused and later batches are right) or was destroyed first.
TEST(ExecutorGpu, OutputsReleasedAfterTheirConsumerStreamWasDestroyed) {
  CONVEYOR_REQUIRE_GPU();
  for (const bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "captured" : "eager");
    auto pipeline = std::make_unique<Pipeline>(Pipeline::FromYaml(GpuYaml(AugmentChain(1000), "y3", 2, capture)));
    pipeline->Build();
    for (int64_t k = 0; k < 8; ++k) {
      PipelineOutputs out = pipeline->Outputs();
      {
        cuda::Stream consumer = cuda::Stream::Create();
        out.WaitOn(consumer.view());
        TensorListCPU host;
        CopyAsync(host, out.Gpu(0), consumer.view());
        consumer.Synchronize();
        for (int s = 0; s < host.num_samples(); ++s) {
          ASSERT_EQ(host.shape(s).num_elements(), PatternSize(k, s, 50, 3000, 1000));
          ASSERT_EQ(static_cast<const float*>(host.raw_sample(s))[0], AugmentChainValue(k, s, 0))
              << "iteration " << k << " sample " << s;
        }
      }  // the consumer stream is gone; the outputs are not
      if (k == 7) pipeline.reset();  // the last batch outlives its pipeline too
      out.Release();
      if (pipeline) pipeline->Run();
    }
  }
}

TEST(ExecutorGpu, FedDeviceBatchesAreUsedAfterTheirReadyEvent) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline p = Pipeline::FromYaml(GpuYaml(
      "  - {op: external_source, name: in, device: gpu, args: {dtype: float32}, outputs: [x]}\n"
      "  - {op: testing.augment, name: a1, device: gpu, inputs: [x], outputs: [y]}\n",
      "y", 2, true, 2));
  cuda::Stream producer = cuda::Stream::Create();
  std::vector<TensorListCPU> hosts;
  for (int k = 0; k < 6; ++k) {
    TensorListCPU host;
    host.Resize({Shape{1000}, Shape{77}}, DType::kFloat32);
    for (int s = 0; s < 2; ++s) {
      float* d = static_cast<float*>(host.raw_sample(s));
      for (int64_t i = 0; i < host.shape(s).num_elements(); ++i) d[i] = static_cast<float>(k * 1000 + s * 10 + i);
    }
    testing::SpinGpu(5, producer.view());  // the batch is ready only after this
    TensorListGPU batch;
    CopyAsync(batch, host, producer.view());
    p.Feed("in", std::move(batch));
    hosts.push_back(std::move(host));
  }
  p.Build();
  for (int k = 0; k < 6; ++k) {
    if (k >= 2) p.Run();
    PipelineOutputs out = p.Outputs();
    const TensorListCPU y = ToHost(out.Gpu(0));
    for (int s = 0; s < 2; ++s) {
      const auto prm = DrawAugment(77, NodeId("a1"), k, s);
      const float* py = static_cast<const float*>(y.raw_sample(s));
      const float* px = static_cast<const float*>(hosts[k].raw_sample(s));
      for (int64_t i = 0; i < y.shape(s).num_elements(); ++i) {
        ASSERT_EQ(py[i], std::fmaf(px[i], prm.scale, prm.bias)) << k << " " << s << " " << i;
      }
    }
  }
}

}  // namespace
}  // namespace conveyor
