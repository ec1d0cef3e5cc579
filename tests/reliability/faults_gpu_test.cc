// Injected faults on GPU pipelines (tag gpu): the plugin operator failing in its GPU or CPU
// stage, outputs held on the device past the prefetch depth, destruction from another thread while
// GPU work is queued, and running out of device memory (OutOfMemory naming the node; the next
// pipeline runs). CPU variants: faults_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <thread>

#include "core/cuda/stream.h"
#include "core/memory/stats.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/reliability/fault_pipelines.h"
#include "tests/util/gpu_test.h"

namespace conveyor {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::ExpectPattern;
using testing::FaultPipeline;
using testing::FaultYaml;
using testing::kReliabilityDir;
using testing::WithinSeconds;

using Clock = std::chrono::steady_clock;

const MemoryKind kKinds[] = {MemoryKind::kHost, MemoryKind::kPinned, MemoryKind::kDevice};

TensorListCPU ToHost(const TensorListGPU& list) {
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, list, stream.view());  // waits on the list's ready event on `stream`
  stream.Synchronize();
  return host;
}

Pipeline BuildGpu(FaultPipeline config) {
  config.device = "gpu";
  Pipeline p = Pipeline::FromYaml(FaultYaml(config), kReliabilityDir);
  p.Build();
  return p;
}

std::map<MemoryKind, int64_t> CurrentBytes() {
  std::map<MemoryKind, int64_t> bytes;
  for (MemoryKind kind : kKinds) bytes[kind] = MemoryStats::Get(kind).current_bytes;
  return bytes;
}

// A capturable copy after the plugin, so captured segments run after (and around) the fault.
const std::string kCopyAfter = "  - {op: copy, name: again, device: gpu, inputs: [copied], outputs: [again]}\n";

void ExpectFaultAt(Pipeline& p, int64_t fault, const std::string& node_and_op) {
  for (int64_t k = 0; k < fault; ++k) {
    PipelineOutputs out = p.Outputs();
    ASSERT_EQ(out.iteration(), k);
    ASSERT_TRUE(out.IsGpu(0));
    ExpectPattern(ToHost(out.Gpu(0)), k);
    out.Release();
    p.Run();
  }
  EXPECT_THAT([&] { p.Outputs(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  AllOf(HasSubstr("iteration " + std::to_string(fault) + ": " + node_and_op),
                        HasSubstr("injected fault at iteration " + std::to_string(fault)))));
  p.Run();
  EXPECT_THAT([&] { p.Outputs(); }, ::testing::ThrowsMessage<Error>(HasSubstr(
                                        "stopped after the error in iteration " + std::to_string(fault))));
}

TEST(GpuPluginFault, ThrowInRunGpuOnIterationK) {
  CONVEYOR_REQUIRE_GPU();
  for (bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "graph_capture" : "eager");
    WithinSeconds(60, [&] {
      Pipeline p = BuildGpu({.faulty_device = "gpu", .faulty_args = "fail_at: 5", .capture = capture,
                             .more_ops = kCopyAfter, .outputs = "again"});
      ExpectFaultAt(p, 5, "node \"faulty\" (op \"reliability.faulty\")");
    });
  }
}

TEST(GpuPluginFault, ThrowInTheCpuStageOfAGpuPipeline) {
  CONVEYOR_REQUIRE_GPU();
  for (bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "graph_capture" : "eager");
    WithinSeconds(60, [&] {
      Pipeline p = BuildGpu({.faulty_device = "cpu", .faulty_args = "fail_at: 3", .prefetch = 3, .capture = capture,
                             .more_ops = kCopyAfter, .outputs = "again"});
      ExpectFaultAt(p, 3, "node \"faulty\" (op \"reliability.faulty\")");
    });
  }
}

void RunClean(Pipeline& p, int iterations) {
  for (int64_t k = 0; k < iterations; ++k) {
    PipelineOutputs out = p.Outputs();
    ASSERT_EQ(out.iteration(), k);
    ExpectPattern(ToHost(out.Gpu(0)), k);
    out.Release();
    p.Run();
  }
}

TEST(GpuPluginFault, AFreshPipelineRunsAfterAFaultAndMemoryIsReturned) {
  CONVEYOR_REQUIRE_GPU();
  const auto before = CurrentBytes();
  WithinSeconds(60, [] {
    {
      Pipeline p = BuildGpu({.faulty_device = "gpu", .faulty_args = "fail_from: 1", .more_ops = kCopyAfter,
                             .outputs = "again"});
      ExpectFaultAt(p, 1, "node \"faulty\"");
    }
    Pipeline p = BuildGpu({.faulty_device = "gpu", .capture = true, .more_ops = kCopyAfter, .outputs = "again"});
    RunClean(p, 8);
  });
  for (MemoryKind kind : kKinds) EXPECT_EQ(MemoryStats::Get(kind).current_bytes, before.at(kind)) << MemoryKindName(kind);
}

TEST(GpuHeldOutputs, MoreHeldThanThePrefetchDepthIsAClearErrorNotADeadlock) {
  CONVEYOR_REQUIRE_GPU();
  WithinSeconds(60, [] {
    Pipeline p = BuildGpu({.faulty_device = "gpu", .prefetch = 2, .capture = true, .more_ops = kCopyAfter,
                           .outputs = "again"});
    cuda::Stream consumer = cuda::Stream::Create();
    PipelineOutputs o0 = p.Outputs();
    PipelineOutputs o1 = p.Outputs();
    o0.WaitOn(consumer.view());
    o1.WaitOn(consumer.view());
    p.Run();
    p.Run();
    const auto start = Clock::now();
    EXPECT_THAT([&] { p.Outputs(); },
                ::testing::ThrowsMessage<InvalidArgument>(
                    HasSubstr("iteration 2 needs prefetch slot 0, still held by the outputs of iteration 0")));
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(1)) << "the error must not wait for anything";
    ExpectPattern(ToHost(o0.Gpu(0)), 0);
    ExpectPattern(ToHost(o1.Gpu(0)), 1);
    o0.Release();
    o1.Release();
    PipelineOutputs o2 = p.Outputs();
    EXPECT_EQ(o2.iteration(), 2);
    ExpectPattern(ToHost(o2.Gpu(0)), 2);
  });
}

TEST(GpuShutdown, DestroyedFromAnotherThreadWhileThePluginIsInItsGpuStage) {
  CONVEYOR_REQUIRE_GPU();
  const auto before = CurrentBytes();
  WithinSeconds(60, [] {
    std::optional<PipelineOutputs> held;
    auto p = std::make_unique<Pipeline>(BuildGpu({.faulty_device = "gpu", .faulty_args = "sleep_ms: 300",
                                                  .prefetch = 3, .capture = true, .more_ops = kCopyAfter,
                                                  .outputs = "again"}));
    held = p->Outputs();
    p->Run();
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (testing::FaultyRunning() == 0 && Clock::now() < deadline) std::this_thread::yield();
    ASSERT_GT(testing::FaultyRunning(), 0) << "the stage thread never entered the plugin";
    const auto start = Clock::now();
    std::thread destroyer([&p] { p.reset(); });
    destroyer.join();
    // At most the sleep in progress plus the queued GPU work (slow under compute-sanitizer).
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(testing::UnderComputeSanitizer() ? 30000 : 2000));
    EXPECT_EQ(testing::FaultyRunning(), 0);
    ExpectPattern(ToHost(held->Gpu(0)), 0);  // held device outputs outlive the pipeline
  });
  for (MemoryKind kind : kKinds) EXPECT_EQ(MemoryStats::Get(kind).current_bytes, before.at(kind)) << MemoryKindName(kind);
}

// 2 samples of 2^35 float32 (128 GiB each): more than any current GPU holds.
std::string HugeYaml(bool capture) {
  return std::string("pipeline: {name: oom, batch_size: 2, device: gpu, prefetch_depth: 1, seed: 3, graph_capture: ") +
         (capture ? "true" : "false") +
         "}\n"
         "ops:\n"
         "  - {op: random.normal, name: huge, device: gpu, args: {shape: [34359738368]}, outputs: [z]}\n"
         "outputs: [z]\n";
}

std::string UniformYaml(const std::string& device) {
  return "pipeline: {name: small, batch_size: 3, device: " + device +
         ", prefetch_depth: 2, seed: 9}\n"
         "ops:\n"
         "  - {op: random.uniform, name: u, device: " +
         device + ", args: {range: [-1.0, 1.0], shape: [777]}, outputs: [u]}\n"
         "outputs: [u]\n";
}

TEST(GpuOutOfMemory, NamesTheNodeAndTheProcessStaysUsable) {
  CONVEYOR_REQUIRE_GPU();
  if (testing::UnderComputeSanitizer()) {
    GTEST_SKIP() << "compute-sanitizer reports the deliberate cudaErrorMemoryAllocation as an API error";
  }
  for (bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "graph_capture" : "eager");
    const auto before = CurrentBytes();
    WithinSeconds(60, [&] {
      {
        Pipeline p = Pipeline::FromYaml(HugeYaml(capture));
        p.Build();
        EXPECT_THAT([&] { p.Outputs(); },
                    ::testing::ThrowsMessage<OutOfMemory>(
                        HasSubstr("pipeline \"oom\": iteration 0: node \"huge\" (op \"random.normal\")")));
        EXPECT_THAT([&] { p.Outputs(); }, ::testing::ThrowsMessage<Error>(HasSubstr("stopped after the error")));
      }
      // The device, its pool and the streams are fine: a small GPU pipeline gives the CPU's draws.
      Pipeline gpu = Pipeline::FromYaml(UniformYaml("gpu"));
      Pipeline cpu = Pipeline::FromYaml(UniformYaml("cpu"));
      gpu.Build();
      cpu.Build();
      for (int k = 0; k < 4; ++k) {
        PipelineOutputs g = gpu.Outputs();
        PipelineOutputs c = cpu.Outputs();
        const TensorListCPU from_gpu = ToHost(g.Gpu(0));
        const TensorListCPU& from_cpu = c.Cpu(0);
        ASSERT_EQ(from_gpu.shapes(), from_cpu.shapes());
        for (int s = 0; s < from_cpu.num_samples(); ++s) {
          const float* a = static_cast<const float*>(from_gpu.raw_sample(s));
          const float* b = static_cast<const float*>(from_cpu.raw_sample(s));
          for (int64_t i = 0; i < from_cpu.shape(s).num_elements(); ++i) {
            ASSERT_EQ(a[i], b[i]) << "iteration " << k << " sample " << s << " element " << i;
          }
        }
        g.Release();
        c.Release();
        gpu.Run();
        cpu.Run();
      }
    });
    for (MemoryKind kind : kKinds) {
      EXPECT_EQ(MemoryStats::Get(kind).current_bytes, before.at(kind)) << MemoryKindName(kind);
    }
  }
}

}  // namespace
}  // namespace conveyor
