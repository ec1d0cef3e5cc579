// Executor tests on a real GPU (tag gpu; they skip without one): captured segments (CUDA graphs)
// against eager runs bit for bit, when captures happen, staged edges inside and outside a graph,
// the buffers a graph keeps alive.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <chrono>
#include <cmath>
#include <cstring>
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

using namespace executor_gpu_testing;  // NOLINT: the shared helpers

TEST(ExecutorGpu, CapturedIterationsMatchEagerBitForBit) {
  CONVEYOR_REQUIRE_GPU();
  constexpr int64_t kGrowAt = 60;
  Pipeline eager = Pipeline::FromYaml(GpuYaml(AugmentChain(kGrowAt), "y3", 2, false));
  Pipeline captured = Pipeline::FromYaml(GpuYaml(AugmentChain(kGrowAt), "y3", 2, true));
  eager.Build();
  captured.Build();
  int64_t captures_before_growth = -1;
  for (int64_t k = 0; k < 100; ++k) {
    PipelineOutputs a = eager.Outputs();
    PipelineOutputs b = captured.Outputs();
    const TensorListCPU ha = ToHost(a.Gpu(0));
    const TensorListCPU hb = ToHost(b.Gpu(0));
    ASSERT_EQ(ha.shapes(), hb.shapes()) << "iteration " << k;
    for (int s = 0; s < ha.num_samples(); ++s) {
      const int64_t n = ha.shape(s).num_elements();
      ASSERT_EQ(n, PatternSize(k, s, 50, 3000, kGrowAt));
      ASSERT_EQ(std::memcmp(ha.raw_sample(s), hb.raw_sample(s), static_cast<size_t>(n) * sizeof(float)), 0)
          << "iteration " << k << " sample " << s;
      const float* pb = static_cast<const float*>(hb.raw_sample(s));
      for (int64_t i = 0; i < n; i += 97) {
        ASSERT_EQ(pb[i], AugmentChainValue(k, s, i)) << "iteration " << k << " sample " << s << " i " << i;
      }
    }
    a.Release();
    b.Release();
    // Read before Run(): iterations up to k + 1 are scheduled, so the stage thread cannot be in
    // the growth iteration yet when k + 1 < kGrowAt (after Run() it may be, however fast or slow
    // the GPU: that race, not the executor, made this count look GPU-speed dependent).
    if (k == testing::kPatternWarmup) captures_before_growth = captured.counters().captures;
    if (k == kGrowAt - 2) {
      // One segment, two slots: captured once per slot, then only replayed while shapes vary.
      EXPECT_EQ(captured.counters().captures, 2);
      EXPECT_EQ(captured.counters().captures, captures_before_growth);
    }
    eager.Run();
    captured.Run();
  }
  EXPECT_GT(captured.counters().captures, 2);  // growth beyond capacity re-captured
  EXPECT_GE(captured.counters().replays, 100);
  EXPECT_EQ(eager.counters().captures, 0);
  // The staged edge x feeds only the captured segment: its copy is a node of the graph (with the
  // varying batch size set before each replay), never a copy-stream copy; eager keeps the stream.
  EXPECT_GE(captured.counters().copies_in_graph, 100);
  EXPECT_EQ(captured.counters().copies_on_copy_stream, 0);
  EXPECT_EQ(eager.counters().copies_in_graph, 0);
  EXPECT_GE(eager.counters().copies_on_copy_stream, 100);
}

// The number of captures is a function of shapes and capacities: the same pipeline with a GPU
// slowed on purpose (a 2 ms spin before the captured chain, on the compute stream) and a consumer
// that dawdles captures exactly as often as an unhurried run, at the same iterations.
TEST(ExecutorGpu, CaptureCountDoesNotDependOnGpuOrConsumerSpeed) {
  CONVEYOR_REQUIRE_GPU();
  constexpr int64_t kGrowAt = 20;
  const auto ops = [](double spin_ms) {
    return "  - {op: testing.pattern, name: src, args: {min_size: 50, max_size: 3000, grow_at: " +
           std::to_string(kGrowAt) +
           "}, outputs: [x]}\n"
           "  - {op: testing.gpu_spin, name: slow, device: gpu, inputs: [x], args: {spin_ms: " +
           std::to_string(spin_ms) +
           "}, outputs: [x2]}\n"
           "  - {op: testing.augment, name: a1, device: gpu, inputs: [x2], outputs: [y1]}\n"
           "  - {op: testing.augment, name: a2, device: gpu, inputs: [y1], outputs: [y2]}\n";
  };
  int64_t before_growth[2] = {-1, -1}, total[2] = {-1, -1};
  for (int slow = 0; slow < 2; ++slow) {
    Pipeline p = Pipeline::FromYaml(GpuYaml(ops(slow ? 2.0 : 0.0), "y2", 3, true));
    p.Build();  // schedules 0, 1, 2: at step k, iterations up to k + 2 are scheduled
    for (int64_t k = 0; k < 40; ++k) {
      PipelineOutputs out = p.Outputs();
      if (slow) std::this_thread::sleep_for(std::chrono::microseconds(500 + 300 * (k % 5)));
      out.Sync();
      out.Release();
      // Nothing at or after the growth is scheduled yet: the count cannot depend on timing.
      if (k + 2 == kGrowAt - 1) before_growth[slow] = p.counters().captures;
      if (k < 37) p.Run();  // 3 primed + 37 = 40 iterations, all consumed by the loop
    }
    total[slow] = p.counters().captures;
  }
  EXPECT_EQ(before_growth[0], 3) << "one capture per slot before the growth";
  EXPECT_EQ(before_growth[1], 3) << "a slowed GPU and consumer must not re-capture";
  EXPECT_EQ(total[0], total[1]) << "captures over 40 iterations differ between a fast and a slowed run";
  EXPECT_GT(total[1], 3) << "the growth re-captured";
}

// Runs `yaml` eagerly and captured side by side for `iterations`; every output bit-identical and
// equal to `expected(k, s, i)` (every 13th element). Returns the captured pipeline's counters.
template <typename Expected>
ExecutorCounters CompareEagerAndCaptured(const std::string& ops, int prefetch, int64_t iterations, Expected expected,
                                         int64_t size_min, int64_t size_max, int64_t grow_at,
                                         ExecutorCounters* at_grow = nullptr) {
  Pipeline eager = Pipeline::FromYaml(GpuYaml(ops, "y", prefetch, false));
  Pipeline captured = Pipeline::FromYaml(GpuYaml(ops, "y", prefetch, true));
  eager.Build();
  captured.Build();
  for (int64_t k = 0; k < iterations; ++k) {
    PipelineOutputs a = eager.Outputs();
    PipelineOutputs b = captured.Outputs();
    const TensorListCPU ha = ToHost(a.Gpu(0));
    const TensorListCPU hb = ToHost(b.Gpu(0));
    EXPECT_EQ(ha.shapes(), hb.shapes()) << "iteration " << k;
    if (ha.shapes() != hb.shapes()) break;
    for (int s = 0; s < ha.num_samples(); ++s) {
      const int64_t n = ha.shape(s).num_elements();
      EXPECT_EQ(n, PatternSize(k, s, size_min, size_max, grow_at));
      EXPECT_EQ(std::memcmp(ha.raw_sample(s), hb.raw_sample(s), static_cast<size_t>(n) * sizeof(float)), 0)
          << "iteration " << k << " sample " << s;
      const float* pb = static_cast<const float*>(hb.raw_sample(s));
      for (int64_t i = 0; i < n; i += 13) {
        if (pb[i] != expected(k, s, i)) {
          ADD_FAILURE() << "iteration " << k << " sample " << s << " i " << i << ": " << pb[i] << " vs "
                        << expected(k, s, i);
          return captured.counters();
        }
      }
    }
    a.Release();
    b.Release();
    // No iteration from grow_at on has started yet: at most k + prefetch - 1 are scheduled.
    if (at_grow != nullptr && k == grow_at - prefetch) *at_grow = captured.counters();
    eager.Run();
    captured.Run();
  }
  EXPECT_EQ(eager.counters().copies_in_graph, 0);
  return captured.counters();
}

float Augmented(int64_t k, int s, float v, const char* node) {
  const auto p = DrawAugment(77, NodeId(node), k, s);
  return std::fmaf(v, p.scale, p.bias);
}

TEST(ExecutorGpu, StagedEdgeReadTwiceInOneSegmentIsCopiedInsideItsGraph) {
  CONVEYOR_REQUIRE_GPU();
  // x is read by the first and the third node of one captured segment; prefetch 3.
  const std::string ops =
      "  - {op: testing.pattern, name: src, args: {min_size: 1, max_size: 700}, outputs: [x]}\n"
      "  - {op: testing.augment, name: a1, device: gpu, inputs: [x], outputs: [y1]}\n"
      "  - {op: testing.augment, name: a2, device: gpu, inputs: [y1], outputs: [y2]}\n"
      "  - {op: testing.augment, name: a3, device: gpu, inputs: [x], outputs: [y]}\n"
      "  - {op: testing.augment, name: a4, device: gpu, inputs: [y2], outputs: [unused]}\n";
  const ExecutorCounters c = CompareEagerAndCaptured(
      ops, 3, 60, [](int64_t k, int s, int64_t i) { return Augmented(k, s, PatternValue(k, s, i), "a3"); }, 1, 700,
      -1);
  EXPECT_EQ(c.captures, 3);  // once per slot: sizes vary, the copy node's size follows
  EXPECT_GE(c.copies_in_graph, 60);
  EXPECT_EQ(c.copies_on_copy_stream, 0);
}

TEST(ExecutorGpu, StagedEdgeWithAnEagerReaderUsesTheCopyStream) {
  CONVEYOR_REQUIRE_GPU();
  // x is read by a captured augment and by gpu_spin (not capturable): one copy on the copy stream.
  const std::string ops =
      "  - {op: testing.pattern, name: src, args: {min_size: 20, max_size: 900}, outputs: [x]}\n"
      "  - {op: testing.augment, name: a1, device: gpu, inputs: [x], outputs: [y1]}\n"
      "  - {op: testing.gpu_spin, name: spin, device: gpu, inputs: [x], args: {add: 3}, outputs: [z]}\n"
      "  - {op: testing.augment, name: a2, device: gpu, inputs: [z], outputs: [y]}\n";
  const ExecutorCounters c = CompareEagerAndCaptured(
      ops, 2, 40,
      [](int64_t k, int s, int64_t i) { return Augmented(k, s, PatternValue(k, s, i) + 3.0f, "a2"); }, 20, 900, -1);
  EXPECT_EQ(c.copies_in_graph, 0);
  EXPECT_GE(c.copies_on_copy_stream, 40);
  EXPECT_GT(c.replays, 0);
}

TEST(ExecutorGpu, StagedEdgeLeavesTheGraphWhenItOutgrowsTheGraphCopyLimit) {
  CONVEYOR_REQUIRE_GPU();
  // 4 samples of up to 12000 floats: 192 KB, capacity 216 KB (under the 256 KiB limit: copied in
  // the graph); from iteration 30 on 4x that: capacity 864 KB, over the limit, so the copy stream
  // takes over.
  constexpr int64_t kGrowAt = 30;
  const std::string ops =
      "  - {op: testing.pattern, name: src, args: {min_size: 1000, max_size: 12000, grow_at: 30}, outputs: [x]}\n"
      "  - {op: testing.augment, name: a1, device: gpu, inputs: [x], outputs: [y]}\n";
  ExecutorCounters before_growth;
  const ExecutorCounters c = CompareEagerAndCaptured(
      ops, 2, 60, [](int64_t k, int s, int64_t i) { return Augmented(k, s, PatternValue(k, s, i), "a1"); }, 1000,
      12000, kGrowAt, &before_growth);
  EXPECT_GE(before_growth.copies_in_graph, kGrowAt - 2);
  EXPECT_EQ(before_growth.copies_on_copy_stream, 0);
  EXPECT_LE(c.copies_in_graph, kGrowAt);  // iterations 0 .. kGrowAt - 1 only
  EXPECT_GE(c.copies_on_copy_stream, 60 - kGrowAt - 2);
  EXPECT_GT(c.captures, before_growth.captures);
}

TEST(ExecutorGpu, CapturedGraphKeepsItsBuffersAlive) {
  CONVEYOR_REQUIRE_GPU();
  using pipeline_internal::CapturedSegment;
  using pipeline_internal::CaptureSignature;
  constexpr int64_t n = 1 << 16;
  cuda::Stream stream = cuda::Stream::Create();
  const std::vector<float> values = testing::RandomVector<float>(n, -100.0f, 100.0f);
  CapturedSegment segment;
  {
    TensorListCPU host;
    host.Resize({Shape{n}}, DType::kFloat32);
    std::memcpy(host.raw_sample(0), values.data(), n * sizeof(float));
    TensorListGPU in, out;
    CopyAsync(in, host, stream.view());
    out.Resize({Shape{n}}, DType::kFloat32, stream.view());
    CaptureSignature signature;
    signature.Add(in);
    signature.Add(out);
    float* out_ptr = static_cast<float*>(out.raw_sample(0));
    const float* in_ptr = static_cast<const float*>(in.raw_sample(0));
    segment = CapturedSegment::Capture(stream.view(), signature, [&] {
      testing::ScaleAddGpu(out_ptr, in_ptr, 2.0f, 1.0f, n, stream.view());
    });
    stream.Synchronize();
  }
  // Every other reference is gone; memory freed now would be handed to these and poisoned.
  std::vector<Buffer> junk;
  for (int i = 0; i < 4; ++i) {
    junk.push_back(Buffer::Allocate(MemoryKind::kDevice, n * sizeof(float), stream.view()));
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(junk.back().device_ptr(), 0xA5, n * sizeof(float), stream.get()));
  }
  ASSERT_EQ(segment.signature().buffers().size(), 2u);
  for (int replay = 0; replay < 3; ++replay) segment.Launch(stream.view());
  std::vector<float> result(n);
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(result.data(), segment.signature().buffers()[1].device_ptr(), n * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream.get()));
  stream.Synchronize();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(result[i], 2.0f * values[i] + 1.0f) << i;

  // A capture whose work throws leaves the stream out of capture mode.
  EXPECT_THROW(CapturedSegment::Capture(stream.view(), CaptureSignature(), [] { throw InvalidArgument("boom"); }),
               InvalidArgument);
  cudaStreamCaptureStatus status;
  CONVEYOR_CUDA_CHECK(cudaStreamIsCapturing(stream.get(), &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
}

}  // namespace
}  // namespace conveyor
