// Helpers shared by the executor's GPU tests (executor_gpu_test.cc, executor_capture_gpu_test.cc):
// a GPU pipeline's YAML, a list brought to the host, the capture tests' augment chain and its
// expected values, one steady-state step.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/cuda/stream.h"
#include "core/op/philox.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/core/pipeline/executor_testing/executor_test_ops.h"

namespace conveyor::executor_gpu_testing {

using testing::DrawAugment;
using testing::PatternSize;
using testing::PatternValue;

inline std::string GpuYaml(const std::string& ops, const std::string& outputs, int prefetch, bool capture,
                           int batch = 4) {
  return "pipeline: {name: gpu_test, batch_size: " + std::to_string(batch) +
         ", device: gpu, num_threads: 2, prefetch_depth: " + std::to_string(prefetch) +
         ", seed: 77, graph_capture: " + (capture ? "true" : "false") + "}\nops:\n" + ops + "outputs: [" + outputs +
         "]\n";
}

inline TensorListCPU ToHost(const TensorListGPU& list) {
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, list, stream.view());  // waits on the list's ready event on `stream`
  stream.Synchronize();
  return host;
}

// Three chained augments after a varying-size pattern: the capture tests' pipeline.
inline std::string AugmentChain(int64_t grow_at) {
  return "  - {op: testing.pattern, name: src, args: {min_size: 50, max_size: 3000, grow_at: " +
         std::to_string(grow_at) +
         "}, outputs: [x]}\n"
         "  - {op: testing.augment, name: a1, device: gpu, inputs: [x], outputs: [y1]}\n"
         "  - {op: testing.augment, name: a2, device: gpu, inputs: [y1], outputs: [y2]}\n"
         "  - {op: testing.augment, name: a3, device: gpu, inputs: [y2], outputs: [y3]}\n";
}

// What the augment chain must produce for (iteration, sample, i), computed on the host.
inline float AugmentChainValue(int64_t k, int s, int64_t i) {
  float v = PatternValue(k, s, i);
  for (const char* node : {"a1", "a2", "a3"}) {
    const auto p = DrawAugment(77, NodeId(node), k, s);
    v = std::fmaf(v, p.scale, p.bias);
  }
  return v;
}

// One steady-state iteration: take the outputs, wait for them on the host, give the slot back,
// schedule the next.
inline void SyncStep(Pipeline& p) {
  PipelineOutputs out = p.Outputs();
  out.Sync();
  out.Release();
  p.Run();
}

}  // namespace conveyor::executor_gpu_testing
