// Executor benchmarks (run on a GPU machine; they report an error without one).
//
// BM_ExecutorOverhead/captured:{0,1}: a 10-op GPU pipeline (a tiny CPU source staged to the GPU,
//   then 10 chained testing.augment nodes) at batch 1 — host time per iteration, eager vs every
//   GPU node replayed from one captured graph. Target on H100: captured <= 25 us and >= 4x
//   faster than eager.
// BM_Staging vs BM_RawPinnedCopy: 64 MiB per iteration through the executor's CPU→GPU staging
//   (pinned slot buffer, one H2D copy on the copy stream) against a plain cudaMemcpyAsync from
//   pinned memory in the same run. Target: staging >= 90% of raw bytes/s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/graph.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/core/pipeline/executor_testing/executor_test_kernels.h"

namespace conveyor {
namespace {

constexpr int64_t kStagingFloats = (int64_t(64) << 20) / 4;

bool RequireGpu(benchmark::State& state) {
  if (cuda::HasCudaDevice()) return true;
  state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  return false;
}

// Steady-state loop: hand out, release, schedule; the ring keeps prefetch_depth in flight. The
// time per iteration is the wall clock of that loop. Counters (per iteration, us) say where the
// stage thread's time went: host work, host-waiting for the GPU (GPU-bound), idle (consumer-bound).
void Iterate(benchmark::State& state, Pipeline& p) {
  for (int i = 0; i < 20; ++i) {  // warm-up: capacities and captures
    p.Outputs().Release();
    p.Run();
  }
  const ExecutorCounters before = p.counters();
  for (auto _ : state) {
    PipelineOutputs out = p.Outputs();
    out.Release();
    p.Run();
  }
  const ExecutorCounters after = p.counters();
  p.Outputs().Sync();
  const double n = static_cast<double>(std::max<int64_t>(1, after.iterations - before.iterations));
  const double gpu_wait = static_cast<double>(after.stage_gpu_wait_ns - before.stage_gpu_wait_ns);
  state.counters["stage_host_us"] = (static_cast<double>(after.stage_work_ns - before.stage_work_ns) - gpu_wait) / n / 1e3;
  state.counters["stage_gpu_wait_us"] = gpu_wait / n / 1e3;
  state.counters["stage_idle_us"] = static_cast<double>(after.stage_idle_ns - before.stage_idle_ns) / n / 1e3;
  state.counters["captures"] = static_cast<double>(after.captures);
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}

void BM_ExecutorOverhead(benchmark::State& state) {
  if (!RequireGpu(state)) return;
  const bool capture = state.range(0) != 0;
  std::string yaml = std::string("pipeline: {name: overhead, batch_size: 1, device: gpu, num_threads: 1, ") +
                     "prefetch_depth: 2, seed: 1, graph_capture: " + (capture ? "true" : "false") +
                     "}\nops:\n  - {op: testing.pattern, name: src, args: {max_size: 16}, outputs: [t0]}\n";
  for (int i = 1; i <= 10; ++i) {
    yaml += "  - {op: testing.augment, name: a" + std::to_string(i) + ", device: gpu, inputs: [t" +
            std::to_string(i - 1) + "], outputs: [t" + std::to_string(i) + "]}\n";
  }
  yaml += "outputs: [t10]\n";
  Pipeline p = Pipeline::FromYaml(yaml);
  p.Build();
  Iterate(state, p);
}
BENCHMARK(BM_ExecutorOverhead)->ArgName("captured")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The GPU floor of the overhead pipeline, without the executor: the same 10 augment kernels (16
// floats, descriptors in pinned mapped memory, or in device memory for desc_in_device:1) captured
// once and replayed back to back; the host blocks when the launch queue is full, so the time per
// iteration is max(GPU time of one replay, host cost of one cudaGraphLaunch).
void BM_AugmentChainGraph(benchmark::State& state) {
  if (!RequireGpu(state)) return;
  const bool desc_in_device = state.range(0) != 0;
  constexpr int kOps = 10;
  constexpr int64_t kFloats = 16;
  cuda::Stream stream = cuda::Stream::Create();
  std::vector<Buffer> data;
  for (int i = 0; i <= kOps; ++i) data.push_back(Buffer::Allocate(MemoryKind::kDevice, 256, stream.view()));
  Buffer host_descs = Buffer::Allocate(MemoryKind::kPinned, kOps * sizeof(testing::AugmentDesc));
  auto* d = static_cast<testing::AugmentDesc*>(host_descs.host_ptr());
  for (int i = 0; i < kOps; ++i) {
    d[i] = {static_cast<const float*>(data[i].device_ptr()), static_cast<float*>(data[i + 1].device_ptr()), kFloats,
            1.0f, 0.5f};
  }
  Buffer descs = host_descs;
  if (desc_in_device) {
    descs = Buffer::Allocate(MemoryKind::kDevice, kOps * sizeof(testing::AugmentDesc), stream.view());
    CopyBytesAsync(descs.device_ptr(), host_descs.host_ptr(), host_descs.size(), stream.view());
  }
  stream.Synchronize();
  const auto* dev = static_cast<const testing::AugmentDesc*>(descs.device_ptr());
  cuda::Graph::BeginCapture(stream.view());
  for (int i = 0; i < kOps; ++i) testing::AugmentGpu(dev + i, 1, kFloats, stream.view());
  const cuda::Graph graph = cuda::Graph::EndCapture(stream.view());
  const cuda::GraphExec exec = graph.Instantiate();
  for (int i = 0; i < 100; ++i) exec.Launch(stream.view());
  stream.Synchronize();
  for (auto _ : state) exec.Launch(stream.view());
  stream.Synchronize();
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}
BENCHMARK(BM_AugmentChainGraph)->ArgName("desc_in_device")->Arg(0)->Arg(1)->UseRealTime()->Unit(
    benchmark::kMicrosecond);

void BM_Staging(benchmark::State& state) {
  if (!RequireGpu(state)) return;
  // The source writes nothing: the figure is the staging path, not the CPU fill.
  Pipeline p = Pipeline::FromYaml(
      "pipeline: {name: staging, batch_size: 1, device: gpu, num_threads: 1, prefetch_depth: 2}\nops:\n"
      "  - {op: testing.pattern, name: src, args: {max_size: " + std::to_string(kStagingFloats) +
      ", min_size: " + std::to_string(kStagingFloats) + ", write: false}, outputs: [x]}\n"
      "  - {op: testing.augment, name: use, device: gpu, inputs: [x], outputs: [y]}\n"
      "outputs: [y]\n");
  p.Build();
  Iterate(state, p);
  state.SetBytesProcessed(state.iterations() * kStagingFloats * 4);
}
BENCHMARK(BM_Staging)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_RawPinnedCopy(benchmark::State& state) {
  if (!RequireGpu(state)) return;
  const size_t bytes = static_cast<size_t>(kStagingFloats) * 4;
  cuda::Stream stream = cuda::Stream::Create();
  Buffer host = Buffer::Allocate(MemoryKind::kPinned, bytes, stream.view());
  Buffer device = Buffer::Allocate(MemoryKind::kDevice, bytes, stream.view());
  for (auto _ : state) {
    CopyBytesAsync(device.device_ptr(), host.host_ptr(), bytes, stream.view());
    stream.Synchronize();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}
BENCHMARK(BM_RawPinnedCopy)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
