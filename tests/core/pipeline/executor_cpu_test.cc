// Executor tests that need no GPU: CPU-only pipelines (they run in CI).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "core/memory/stats.h"
#include "core/pipeline/pipeline.h"
#include "tests/core/pipeline/executor_testing/executor_test_ops.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using testing::PatternSize;
using testing::PatternValue;

// Every test runs twice: with one stage thread, and with the CPU stage on a thread of its own
// handing each iteration to the issuing thread (cpu_stage_thread: true).
class ExecutorCpu : public ::testing::TestWithParam<bool> {};

std::string CpuYaml(const std::string& ops, const std::string& outputs, int prefetch = 2, int threads = 2,
                    int batch = 4) {
  const bool ahead = ::testing::UnitTest::GetInstance()->current_test_info()->value_param() != nullptr &&
                     ExecutorCpu::GetParam();
  return "pipeline: {name: cpu_test, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: " + std::to_string(threads) + ", prefetch_depth: " + std::to_string(prefetch) +
         ", seed: 5, cpu_stage_thread: " + (ahead ? "true" : "false") + "}\nops:\n" + ops + "outputs: [" + outputs +
         "]\n";
}

void ExpectPattern(const TensorListCPU& list, int64_t iteration, int64_t min_size, int64_t max_size) {
  ASSERT_EQ(list.dtype(), DType::kFloat32);
  for (int s = 0; s < list.num_samples(); ++s) {
    const int64_t n = PatternSize(iteration, s, min_size, max_size, -1);
    ASSERT_EQ(list.shape(s), Shape{n}) << "iteration " << iteration << " sample " << s;
    const float* p = static_cast<const float*>(list.raw_sample(s));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(p[i], PatternValue(iteration, s, i)) << "iteration " << iteration << " sample " << s << " i " << i;
    }
  }
}

TEST_P(ExecutorCpu, RunsIterationsInOrderWithCorrectOutputs) {
  Pipeline p = Pipeline::FromYaml(CpuYaml(
      "  - {op: testing.pattern, name: src, args: {min_size: 3, max_size: 40}, outputs: [x]}\n", "x", 3));
  p.Build();
  for (int64_t k = 0; k < 20; ++k) {
    PipelineOutputs out = p.Outputs();
    EXPECT_EQ(out.iteration(), k);
    ASSERT_EQ(out.size(), 1);
    EXPECT_FALSE(out.IsGpu(0));
    EXPECT_EQ(out.ready_event(), nullptr);
    ExpectPattern(out.Cpu(out.Index("x")), k, 3, 40);
    out.Release();
    p.Run();
  }
  EXPECT_GE(p.counters().iterations, 20);
  EXPECT_EQ(p.counters().captures, 0);
}

// CONVEYOR_COUNTERS_AT_EXIT=1: a built pipeline says where its stage thread's time went on stderr
// when destroyed (front ends without counters: Python, the C API); nothing without it.
TEST_P(ExecutorCpu, CountersAtExitArePrintedOnlyWhenAsked) {
  const std::string yaml =
      CpuYaml("  - {op: testing.pattern, name: src, args: {min_size: 3, max_size: 40, sleep_ms: 2}, outputs: [x]}\n", "x");
  auto run = [&] {
    Pipeline p = Pipeline::FromYaml(yaml);
    p.Build();
    for (int k = 0; k < 5; ++k) {
      p.Outputs().Release();
      p.Run();
    }
  };
  ::testing::internal::CaptureStderr();
  run();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  ::setenv("CONVEYOR_COUNTERS_AT_EXIT", "1", 1);
  ::testing::internal::CaptureStderr();
  run();
  const std::string said = ::testing::internal::GetCapturedStderr();
  ::unsetenv("CONVEYOR_COUNTERS_AT_EXIT");
  EXPECT_THAT(said, ::testing::HasSubstr("conveyor: pipeline \"cpu_test\": "));
  EXPECT_THAT(said, ::testing::HasSubstr("iterations; ms per iteration: CPU stage "));
  // Each iteration's source slept 2 ms in the CPU stage.
  const size_t at = said.find("CPU stage ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stod(said.substr(at + 10)), 1.9) << said;
}

TEST_P(ExecutorCpu, IndependentNodesRunConcurrently) {
  testing::ClearTimeline();
  Pipeline p = Pipeline::FromYaml(CpuYaml(
      "  - {op: testing.pattern, name: a, args: {sleep_ms: 150, record: true}, outputs: [xa]}\n"
      "  - {op: testing.pattern, name: b, args: {sleep_ms: 150, record: true}, outputs: [xb]}\n",
      "xa, xb", 1, 2));
  p.Build();
  PipelineOutputs out = p.Outputs();
  std::optional<std::chrono::steady_clock::time_point> a0, a1, b0, b1;
  for (const auto& e : testing::Timeline()) {
    if (e.iteration != 0) continue;
    auto& slot = e.node == "a" ? (e.start ? a0 : a1) : (e.start ? b0 : b1);
    slot = e.time;
  }
  ASSERT_TRUE(a0 && a1 && b0 && b1);
  // Overlapping intervals: each started before the other ended.
  EXPECT_LT(*a0, *b1);
  EXPECT_LT(*b0, *a1);
}

TEST_P(ExecutorCpu, OperatorErrorSurfacesFromOutputsWithNodeOpAndIteration) {
  Pipeline p = Pipeline::FromYaml(CpuYaml(
      "  - {op: testing.pattern, name: src, args: {fail_at: 3}, outputs: [x]}\n", "x", 2));
  p.Build();
  for (int k = 0; k < 3; ++k) {
    PipelineOutputs out = p.Outputs();
    ExpectPattern(out.Cpu(0), k, 16, 16);
    out.Release();
    p.Run();
  }
  try {
    p.Outputs();
    FAIL() << "expected the error of iteration 3";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("iteration 3"));
    EXPECT_THAT(e.what(), HasSubstr("node \"src\""));
    EXPECT_THAT(e.what(), HasSubstr("op \"testing.pattern\""));
    EXPECT_THAT(e.what(), HasSubstr("failing on purpose"));
  }
  p.Run();
  try {
    p.Outputs();
    FAIL() << "expected the pipeline to stay stopped";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("stopped after the error in iteration 3"));
  }
}

TEST_P(ExecutorCpu, DestroyedMidPrefetchWithoutHanging) {
  const MemoryStatsSnapshot before = MemoryStats::Get(MemoryKind::kHost);
  const auto start = std::chrono::steady_clock::now();
  {
    Pipeline p = Pipeline::FromYaml(CpuYaml(
        "  - {op: testing.pattern, name: src, args: {sleep_ms: 30, max_size: 1000}, outputs: [x]}\n", "x", 3));
    p.Build();
    for (int i = 0; i < 5; ++i) p.Run();
  }
  {
    // Outputs held past the pipeline stay valid and are freed when released.
    std::optional<PipelineOutputs> held;
    {
      Pipeline p = Pipeline::FromYaml(CpuYaml(
          "  - {op: testing.pattern, name: src, args: {sleep_ms: 5, max_size: 1000}, outputs: [x]}\n", "x", 3));
      p.Build();
      held = p.Outputs();
    }
    ExpectPattern(held->Cpu(0), 0, 16, 1000);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(MemoryStats::Get(MemoryKind::kHost).current_bytes, before.current_bytes);
}

TEST_P(ExecutorCpu, MisuseIsReportedInsteadOfBlocking) {
  Pipeline p = Pipeline::FromYaml(CpuYaml("  - {op: testing.pattern, name: src, outputs: [x]}\n", "x", 2));
  EXPECT_THROW(p.Run(), InvalidArgument);
  EXPECT_THROW(p.Outputs(), InvalidArgument);
  p.Build();
  EXPECT_THROW(p.Build(), InvalidArgument);
  PipelineOutputs o0 = p.Outputs();
  PipelineOutputs o1 = p.Outputs();
  try {
    p.Outputs();
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("no iteration is scheduled"));
  }
  p.Run();
  try {
    p.Outputs();
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("still held by the outputs of iteration 0"));
  }
  o0.Release();
  EXPECT_EQ(p.Outputs().iteration(), 2);
  EXPECT_THROW(o0.Cpu(0), InvalidArgument);  // released
}

TEST_P(ExecutorCpu, FeedsExternalSourceInOrder) {
  Pipeline p = Pipeline::FromYaml(CpuYaml(
      "  - {op: external_source, name: in, args: {dtype: float32, ndim: 1}, outputs: [x]}\n", "x", 2, 2, 2));
  auto batch = [](float v) {
    TensorListCPU list;
    list.Resize({Shape{3}, Shape{5}}, DType::kFloat32);
    for (int s = 0; s < 2; ++s) {
      float* d = static_cast<float*>(list.raw_sample(s));
      for (int64_t i = 0; i < list.shape(s).num_elements(); ++i) d[i] = v + static_cast<float>(s * 100 + i);
    }
    return list;
  };
  TensorListCPU wrong;
  wrong.Resize({Shape{3}}, DType::kUInt8);
  p.Feed("in", wrong);                    // before Build: kept, checked when Build hands it over
  EXPECT_THROW(p.Build(), InvalidArgument);
  p = Pipeline::FromYaml(CpuYaml(
      "  - {op: external_source, name: in, args: {dtype: float32, ndim: 1}, outputs: [x]}\n", "x", 2, 2, 2));
  p.Feed("in", batch(1000));
  p.Build();  // one fed batch: one iteration primed
  p.Feed("in", batch(2000));
  p.Run();
  EXPECT_THROW(p.Run(), InvalidArgument);  // nothing fed for iteration 2
  EXPECT_THROW(p.Feed("in", wrong), InvalidArgument);
  for (int k = 0; k < 2; ++k) {
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& x = out.Cpu(0);
    ASSERT_EQ(x.num_samples(), 2);
    EXPECT_EQ(x.shape(1), Shape{5});
    EXPECT_EQ(static_cast<const float*>(x.raw_sample(1))[4], 1000.0f * (k + 1) + 104.0f);
  }
}

TEST_P(ExecutorCpu, SteadyStateAllocatesNoHostMemory) {
  Pipeline p = Pipeline::FromYaml(CpuYaml(
      "  - {op: testing.pattern, name: a, args: {min_size: 10, max_size: 3000}, outputs: [xa]}\n"
      "  - {op: testing.pattern, name: b, args: {min_size: 1, max_size: 50}, outputs: [xb]}\n",
      "xa, xb", 2));
  p.Build();
  auto step = [&] {
    PipelineOutputs out = p.Outputs();
    out.Release();
    p.Run();
  };
  for (int i = 0; i < testing::kPatternWarmup; ++i) step();
  const int64_t allocations = MemoryStats::Get(MemoryKind::kHost).allocations;
  for (int i = 0; i < 50; ++i) step();
  EXPECT_EQ(MemoryStats::Get(MemoryKind::kHost).allocations, allocations);
}

TEST_P(ExecutorCpu, CountersSayWhetherTheCpuStageHasItsOwnThread) {
  Pipeline p = Pipeline::FromYaml(CpuYaml("  - {op: testing.pattern, name: src, outputs: [x]}\n", "x", 2));
  p.Build();
  p.Outputs().Release();
  EXPECT_EQ(p.counters().cpu_stage_thread, GetParam());
  // Off for a CPU-only pipeline unless asked for (auto: on when there is a GPU stage).
  Pipeline plain = Pipeline::FromYaml(
      "pipeline: {name: a, batch_size: 2, device: cpu}\nops:\n"
      "  - {op: testing.pattern, name: src, outputs: [x]}\noutputs: [x]\n");
  plain.Build();
  plain.Outputs().Release();
  EXPECT_FALSE(plain.counters().cpu_stage_thread);
}

// CONVEYOR_CPU_STAGE_THREADS sizes the CPU stage's own arena (cpu_stage_thread): 1 runs the
// CPU stage on its thread alone, with the same batches; anything but 1-1024 fails the build naming it.
TEST(ExecutorCpuStageThreads, SizeFromTheEnvironment) {
  const std::string yaml =
      "pipeline: {name: t, batch_size: 4, device: cpu, num_threads: 3, seed: 5, cpu_stage_thread: true}\nops:\n"
      "  - {op: testing.pattern, name: a, args: {min_size: 3, max_size: 40}, outputs: [xa]}\n"
      "  - {op: testing.pattern, name: b, args: {min_size: 1, max_size: 9}, outputs: [xb]}\noutputs: [xa, xb]\n";
  ASSERT_EQ(::setenv("CONVEYOR_CPU_STAGE_THREADS", "1", 1), 0);
  {
    Pipeline p = Pipeline::FromYaml(yaml);
    p.Build();
    for (int64_t k = 0; k < 6; ++k) {
      PipelineOutputs out = p.Outputs();
      ExpectPattern(out.Cpu(out.Index("xa")), k, 3, 40);
      out.Release();
      p.Run();
    }
  }
  for (const char* bad : {"0", "many", "2000", ""}) {
    ASSERT_EQ(::setenv("CONVEYOR_CPU_STAGE_THREADS", bad, 1), 0);
    if (*bad == '\0') continue;  // empty: the default
    Pipeline p = Pipeline::FromYaml(yaml);
    EXPECT_THAT([&] { p.Build(); },
                ::testing::ThrowsMessage<ConfigError>(
                    HasSubstr(std::string("CONVEYOR_CPU_STAGE_THREADS: expected a whole number from 1 to 1024, got \"") +
                              bad + "\"")))
        << bad;
  }
  ::unsetenv("CONVEYOR_CPU_STAGE_THREADS");
}

// The CPU stage's smaller arena (num_threads / 4) only for a CPU stage taken up after its thread
// waited for a slot: behind a slow consumer nearly every one; ahead of a fast consumer with a slow
// CPU stage (20 ms an iteration) almost none. CONVEYOR_CPU_STAGE_THREADS: one arena.
TEST(ExecutorCpuStageThreads, TheSmallerArenaOnlyWhenTheCpuStageRunsAhead) {
  auto yaml = [](int stage_ms) {
    return "pipeline: {name: t, batch_size: 4, device: cpu, num_threads: 8, seed: 5, cpu_stage_thread: true}\n"
           "ops:\n  - {op: testing.pattern, name: a, args: {max_size: 16, sleep_ms: " +
           std::to_string(stage_ms) + "}, outputs: [xa]}\noutputs: [xa]\n";
  };
  auto run = [](Pipeline& p, int iterations, int consumer_ms) {
    p.Build();
    for (int64_t k = 0; k < iterations; ++k) {
      PipelineOutputs out = p.Outputs();
      std::this_thread::sleep_for(std::chrono::milliseconds(consumer_ms));
      out.Release();
      p.Run();
    }
    return p.counters().cpu_stage_ahead_iterations;
  };
  constexpr int kIterations = 12;
  {
    Pipeline slow_consumer = Pipeline::FromYaml(yaml(0));
    EXPECT_GE(run(slow_consumer, kIterations, 20), kIterations - 3);
  }
  {
    Pipeline slow_stage = Pipeline::FromYaml(yaml(20));
    EXPECT_LE(run(slow_stage, kIterations, 0), 4);  // the first, and any the consumer was descheduled for
  }
  ASSERT_EQ(::setenv("CONVEYOR_CPU_STAGE_THREADS", "2", 1), 0);
  {
    Pipeline one_arena = Pipeline::FromYaml(yaml(0));
    EXPECT_EQ(run(one_arena, 6, 20), 0);
  }
  ::unsetenv("CONVEYOR_CPU_STAGE_THREADS");
}

INSTANTIATE_TEST_SUITE_P(StageThreads, ExecutorCpu, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "CpuStageThread" : "OneStageThread";
                         });

}  // namespace
}  // namespace conveyor
