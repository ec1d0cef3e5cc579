// One pipeline YAML run three ways — on the CPU, on the GPU eagerly, on the GPU with graph capture —
// over the same fed batches: every output of every iteration equal byte for byte, the captures
// fixed while the inputs stay within capacity and growing past it. For the image operators'
// pipeline tests (geometry, clips).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/pipeline/pipeline.h"
#include "tests/operators/resize/image_test_util.h"  // CompareExact
#include "tests/util/pipeline_outputs.h"

namespace conveyor::testing {

struct CaptureCompareCase {
  // The YAML for a device ("cpu" / "gpu") and graph_capture; its external_source is named `input`.
  std::function<std::string(const std::string& device, bool capture)> yaml;
  std::function<TensorListCPU(int iteration)> batch;  // fed each iteration
  std::string input = "in";
  int iterations = 0, outputs = 0, batch_size = 0;
  int grow_at = 0;  // the first iteration whose inputs exceed the capacity the earlier ones set
};

inline void ExpectCapturedEqualsEagerEqualsCpu(const CaptureCompareCase& c) {
  Pipeline cpu = Pipeline::FromYaml(c.yaml("cpu", false));
  Pipeline eager = Pipeline::FromYaml(c.yaml("gpu", false));
  Pipeline captured = Pipeline::FromYaml(c.yaml("gpu", true));
  for (int k = 0; k < c.iterations; ++k) {
    const TensorListCPU fed = c.batch(k);
    cpu.Feed(c.input, fed);
    eager.Feed(c.input, fed);
    captured.Feed(c.input, fed);
  }
  cpu.Build();
  eager.Build();
  captured.Build();
  int64_t captures_after_warmup = -1;
  for (int k = 0; k < c.iterations; ++k) {
    if (k >= 2) {
      cpu.Run();
      eager.Run();
      captured.Run();
    }
    PipelineOutputs a = cpu.Outputs(), b = eager.Outputs(), d = captured.Outputs();
    for (int i = 0; i < c.outputs; ++i) {
      const TensorListCPU want = OutputOnHost(a, i);
      ASSERT_EQ(want.num_samples(), c.batch_size);
      EXPECT_EQ(CompareExact(OutputOnHost(b, i), want), "") << "eager, iteration " << k << " output " << i;
      EXPECT_EQ(CompareExact(OutputOnHost(d, i), want), "") << "captured, iteration " << k << " output " << i;
    }
    a.Release();
    b.Release();
    d.Release();
    // Iterations up to k + 1 are scheduled here: read the count before the growth iteration can start.
    if (k == 4) captures_after_warmup = captured.counters().captures;
    if (k == c.grow_at - 3) {
      EXPECT_EQ(captured.counters().captures, captures_after_warmup) << "inputs within capacity re-captured";
    }
  }
  EXPECT_GT(captures_after_warmup, 0);
  EXPECT_GT(captured.counters().captures, captures_after_warmup) << "inputs beyond capacity must re-capture";
  EXPECT_GE(captured.counters().replays, c.iterations);
  EXPECT_EQ(eager.counters().captures, 0);
}

}  // namespace conveyor::testing
