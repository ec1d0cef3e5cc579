// conveyor_pipeline_stage_times: where the stage thread's time went, through the C API, on a CPU
// pipeline (random draws cast to int32): iterations counted, the CPU stage's time growing with
// them, and the errors (before build, null arguments).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/capi/conveyor.h"
#include "tests/capi/capi_handles.h"

namespace conveyor::capi::testing {
namespace {

constexpr char kYaml[] =
    "pipeline: {name: times, batch_size: 4, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 5}\nops:\n"
    "  - {op: random.uniform, name: noise, args: {range: [0.0, 1.0], shape: [64, 64]}, outputs: [noise]}\n"
    "  - {op: cast, name: quantize, inputs: [noise], args: {dtype: int32}, outputs: [q]}\n"
    "outputs: [q]\n";

void Take(conveyor_pipeline_t p, int n) {
  for (int i = 0; i < n; ++i) {
    OutputsHandle o;
    ASSERT_EQ(conveyor_pipeline_outputs(p, &o.h), CONVEYOR_OK) << conveyor_last_error();
    o = {};
    ASSERT_EQ(conveyor_pipeline_run(p), CONVEYOR_OK) << conveyor_last_error();
  }
}

TEST(CApiStageTimes, CountIterationsAndGrowWithThem) {
  PipelineHandle p;
  ASSERT_EQ(conveyor_pipeline_create_from_string(kYaml, nullptr, &p.h), CONVEYOR_OK) << conveyor_last_error();
  int64_t iterations = -1, ns[4] = {-1, -1, -1, -1};
  EXPECT_EQ(conveyor_pipeline_stage_times(p.h, &iterations, ns), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(conveyor_last_error()).find("before Build()"), std::string::npos) << conveyor_last_error();
  ASSERT_EQ(conveyor_pipeline_build(p.h), CONVEYOR_OK) << conveyor_last_error();
  Take(p.h, 3);
  ASSERT_EQ(conveyor_pipeline_stage_times(p.h, &iterations, ns), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_GE(iterations, 3);  // the 3 taken, and up to prefetch_depth ahead
  EXPECT_LE(iterations, 3 + 2);
  EXPECT_GT(ns[0], 0);  // a CPU pipeline works in its CPU stage
  for (int k = 1; k < 4; ++k) EXPECT_GE(ns[k], 0) << k;
  const int64_t first_iterations = iterations, first_cpu = ns[0];
  Take(p.h, 6);
  ASSERT_EQ(conveyor_pipeline_stage_times(p.h, &iterations, ns), CONVEYOR_OK) << conveyor_last_error();
  EXPECT_GE(iterations - first_iterations, 6 - 2);
  EXPECT_GT(ns[0], first_cpu);
  EXPECT_EQ(conveyor_pipeline_stage_times(p.h, nullptr, ns), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(conveyor_last_error()).find("iterations"), std::string::npos) << conveyor_last_error();
  EXPECT_EQ(conveyor_pipeline_stage_times(p.h, &iterations, nullptr), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(conveyor_pipeline_stage_times(nullptr, &iterations, ns), CONVEYOR_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace conveyor::capi::testing
