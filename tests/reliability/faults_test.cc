// Injected faults on CPU pipelines (run in CI): a plugin operator that throws on iteration k, a
// consumer that holds more outputs than the prefetch ring has slots, a pipeline destroyed from
// another thread while an operator runs, and an operator constructor that fails. Each must end in
// a clear error (or a clean shutdown) within a bounded time — never a hang — and leave the
// process able to build and run the next pipeline. GPU variants: faults_gpu_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "core/memory/stats.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/yaml_loader.h"
#include "tests/reliability/fault_pipelines.h"

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

Pipeline Build(const FaultPipeline& config) {
  Pipeline p = Pipeline::FromYaml(FaultYaml(config), kReliabilityDir, {.has_gpu = false});
  p.Build();
  return p;
}

TEST(PluginFault, ThrowOnIterationKIsReportedWithNodeAndIterationThenThePipelineStaysStopped) {
  WithinSeconds(20, [] {
    Pipeline p = Build({.faulty_args = "fail_at: 3", .prefetch = 2});
    for (int64_t k = 0; k < 3; ++k) {
      PipelineOutputs out = p.Outputs();
      EXPECT_EQ(out.iteration(), k);
      ExpectPattern(out.Cpu(0), k);
      out.Release();
      p.Run();
    }
    EXPECT_THAT([&] { p.Outputs(); },
                ::testing::ThrowsMessage<InvalidArgument>(AllOf(
                    HasSubstr("pipeline \"faults\": iteration 3: node \"faulty\" (op \"reliability.faulty\")"),
                    HasSubstr("injected fault at iteration 3"))));
    // No recovery inside a pipeline: an iteration's outputs are gone with its error, and later
    // iterations (the RNG and reader positions after it) would silently differ. Every later call
    // says so, at once.
    for (int i = 0; i < 3; ++i) {
      p.Run();
      EXPECT_THAT([&] { p.Outputs(); },
                  ::testing::ThrowsMessage<Error>(AllOf(HasSubstr("stopped after the error in iteration 3"),
                                                        HasSubstr("injected fault at iteration 3"))));
    }
  });
}

TEST(PluginFault, IterationsBeforeTheFaultAreStillDelivered) {
  WithinSeconds(20, [] {
    // Prefetch 3, fault at 1: iteration 0 was ready before the fault and is handed out intact.
    Pipeline p = Build({.faulty_args = "fail_at: 1", .prefetch = 3});
    PipelineOutputs first = p.Outputs();
    ExpectPattern(first.Cpu(0), 0);
    EXPECT_THAT([&] { p.Outputs(); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("iteration 1: node \"faulty\"")));
    ExpectPattern(first.Cpu(0), 0);  // outputs held across the fault stay valid
  });
}

TEST(PluginFault, AFreshPipelineRunsAfterAFault) {
  const MemoryStatsSnapshot before = MemoryStats::Get(MemoryKind::kHost);
  WithinSeconds(20, [] {
    {
      Pipeline p = Build({.faulty_args = "fail_from: 0"});
      EXPECT_THROW(p.Outputs(), InvalidArgument);
    }
    Pipeline p = Build({.faulty_args = "fail_at: -1"});
    for (int64_t k = 0; k < 6; ++k) {
      PipelineOutputs out = p.Outputs();
      ExpectPattern(out.Cpu(0), k);
      out.Release();
      p.Run();
    }
  });
  EXPECT_EQ(MemoryStats::Get(MemoryKind::kHost).current_bytes, before.current_bytes) << "host memory leaked";
}

TEST(PluginFault, ConstructorFaultNamingNoArgumentGetsTheNodePosition) {
  FaultPipeline config{.faulty_args = "fail_in_constructor: true"};
  Pipeline p(ParsePipelineYaml(FaultYaml(config), "faults.yaml", kReliabilityDir), {.has_gpu = false});
  EXPECT_THAT([&] { p.Build(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("faults.yaml:5:5: op \"reliability.faulty\" (faulty): injected fault while constructing")));
}

TEST(HeldOutputs, MoreHeldThanThePrefetchDepthIsAClearErrorNotADeadlock) {
  WithinSeconds(20, [] {
    Pipeline p = Build({.faulty_args = "sleep_ms: 5", .prefetch = 2});
    PipelineOutputs o0 = p.Outputs();
    PipelineOutputs o1 = p.Outputs();
    p.Run();
    p.Run();
    // Iteration 2 needs slot 0, which o0 holds: waiting would never end.
    const auto start = Clock::now();
    EXPECT_THAT([&] { p.Outputs(); },
                ::testing::ThrowsMessage<InvalidArgument>(AllOf(
                    HasSubstr("iteration 2 needs prefetch slot 0, still held by the outputs of iteration 0"),
                    HasSubstr("release them first (prefetch_depth 2)"))));
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(1)) << "the error must not wait for anything";
    // The held outputs are intact, and releasing them lets the pipeline go on: no state was lost.
    ExpectPattern(o0.Cpu(0), 0);
    ExpectPattern(o1.Cpu(0), 1);
    o0.Release();
    PipelineOutputs o2 = p.Outputs();
    EXPECT_EQ(o2.iteration(), 2);
    ExpectPattern(o2.Cpu(0), 2);
    o1.Release();
    o2.Release();
    PipelineOutputs o3 = p.Outputs();
    ExpectPattern(o3.Cpu(0), 3);
  });
}

TEST(HeldOutputs, AConsumerThreadHoldingEverySlotGetsTheErrorToo) {
  WithinSeconds(20, [] {
    Pipeline p = Build({.prefetch = 3});
    std::vector<PipelineOutputs> held;
    std::string error;
    std::thread consumer([&] {
      for (int i = 0; i < 3; ++i) held.push_back(p.Outputs());
      for (int i = 0; i < 3; ++i) p.Run();
      try {
        p.Outputs();
      } catch (const InvalidArgument& e) {
        error = e.what();
      }
    });
    consumer.join();
    EXPECT_THAT(error, HasSubstr("still held by the outputs of iteration 0"));
    for (int k = 0; k < 3; ++k) ExpectPattern(held[static_cast<size_t>(k)].Cpu(0), k);
  });
}

TEST(Shutdown, DestroyedFromAnotherThreadWhileThePluginRuns) {
  const MemoryStatsSnapshot before = MemoryStats::Get(MemoryKind::kHost);
  WithinSeconds(20, [] {
    std::optional<PipelineOutputs> held;
    auto p = std::make_unique<Pipeline>(Build({.faulty_args = "sleep_ms: 300", .prefetch = 2}));
    held = p->Outputs();  // iteration 0; the stage thread now sleeps inside iteration 1 or 2
    p->Run();
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (testing::FaultyRunning() == 0 && Clock::now() < deadline) std::this_thread::yield();
    ASSERT_GT(testing::FaultyRunning(), 0) << "the stage thread never entered the plugin";
    const auto start = Clock::now();
    std::thread destroyer([&p] { p.reset(); });
    destroyer.join();
    // It waited for the operator in progress (at most one sleep), not for the queued iterations.
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500));
    EXPECT_EQ(testing::FaultyRunning(), 0);
    ExpectPattern(held->Cpu(0), 0);  // held outputs outlive the pipeline
  });
  EXPECT_EQ(MemoryStats::Get(MemoryKind::kHost).current_bytes, before.current_bytes) << "host memory leaked";
}

TEST(Shutdown, DestroyedRightAfterBuildAndAfterAFault) {
  WithinSeconds(20, [] {
    for (int i = 0; i < 10; ++i) {
      // Build schedules prefetch iterations at once; destruction races them at every stage.
      std::thread([] { Build({.faulty_args = "sleep_ms: 1", .prefetch = 3}); }).join();
      Pipeline faulted = Build({.faulty_args = "fail_at: 0", .prefetch = 3});
      std::thread([p = std::move(faulted)]() mutable { Pipeline gone = std::move(p); }).join();
    }
  });
}

}  // namespace
}  // namespace conveyor
