// Executor benchmarks (run on a GPU machine; they report an error without one).
//
// BM_ExecutorOverhead/captured:{0,1}: a 10-op GPU pipeline (a tiny CPU source staged to the GPU,
//   then 10 chained testing.augment nodes) at batch 1 — host time per iteration, eager vs every
//   GPU node replayed from one captured graph. Target on H100: captured <= 25 us and >= 4x
//   faster than eager.
//   graph_copy:0 forces the staged edge's copy onto the copy stream (CONVEYOR_GRAPH_COPY_MAX_BYTES=0),
//   as before captured segments could hold it: the A/B of that change in one run.
// BM_AugmentChainGraph: the GPU floor of that pipeline (same kernels as one bare graph), with the
//   staged edge's H2D copy as the graph's first node for copy_in_graph:1.
// BM_CudaApiCost: host time of the single CUDA runtime calls an iteration makes, on this machine.
// BM_Staging vs BM_RawPinnedCopy: 64 MiB per iteration through the executor's CPU→GPU staging
//   (pinned slot buffer, one H2D copy on the copy stream) against a plain cudaMemcpyAsync from
//   pinned memory in the same run. Target: staging >= 90% of raw bytes/s.
#include <benchmark/benchmark.h>

#include <cuda_runtime_api.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "core/cuda/check.h"
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
  state.counters["stage_cpu_us"] = static_cast<double>(after.stage_cpu_ns - before.stage_cpu_ns) / n / 1e3;
  state.counters["stage_issue_us"] = static_cast<double>(after.stage_issue_ns - before.stage_issue_ns) / n / 1e3;
  state.counters["graph_copies"] =
      static_cast<double>(after.copies_in_graph - before.copies_in_graph) / n;
  state.counters["captures"] = static_cast<double>(after.captures);
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}

void BM_ExecutorOverhead(benchmark::State& state) {
  if (!RequireGpu(state)) return;
  const bool capture = state.range(0) != 0;
  const bool graph_copy = state.range(1) != 0;
  const int ops = static_cast<int>(state.range(2));
  if (graph_copy) {
    unsetenv("CONVEYOR_GRAPH_COPY_MAX_BYTES");
  } else {
    setenv("CONVEYOR_GRAPH_COPY_MAX_BYTES", "0", 1);
  }
  std::string yaml = std::string("pipeline: {name: overhead, batch_size: 1, device: gpu, num_threads: 1, ") +
                     "prefetch_depth: 2, seed: 1, graph_capture: " + (capture ? "true" : "false") +
                     "}\nops:\n  - {op: testing.pattern, name: src, args: {max_size: 16}, outputs: [t0]}\n";
  for (int i = 1; i <= ops; ++i) {
    yaml += "  - {op: testing.augment, name: a" + std::to_string(i) + ", device: gpu, inputs: [t" +
            std::to_string(i - 1) + "], outputs: [t" + std::to_string(i) + "]}\n";
  }
  yaml += "outputs: [t" + std::to_string(ops) + "]\n";
  Pipeline p = Pipeline::FromYaml(yaml);
  p.Build();
  unsetenv("CONVEYOR_GRAPH_COPY_MAX_BYTES");
  Iterate(state, p);
}
// ops:2 is a host-bound variant (a GPU floor of a few us), where saving host calls pays.
BENCHMARK(BM_ExecutorOverhead)
    ->ArgNames({"captured", "graph_copy", "ops"})
    ->Args({0, 1, 10})
    ->Args({1, 0, 10})
    ->Args({1, 1, 10})
    ->Args({0, 1, 2})
    ->Args({1, 0, 2})
    ->Args({1, 1, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The overhead pipeline's GPU work without the executor: kChainOps augment kernels of kChainFloats floats
// chained through device buffers, their descriptors in pinned mapped memory, plus a pinned staging
// buffer for the optional H2D copy at the head of the chain.
constexpr int kChainOps = 10;
constexpr int64_t kChainFloats = 16;

struct AugmentChain {
  explicit AugmentChain(StreamView stream) {
    for (int i = 0; i <= kChainOps; ++i) data.push_back(Buffer::Allocate(MemoryKind::kDevice, 256, stream));
    auto* d = static_cast<testing::AugmentDesc*>(host_descs.host_ptr());
    for (int i = 0; i < kChainOps; ++i) {
      d[i] = {static_cast<const float*>(data[i].device_ptr()), static_cast<float*>(data[i + 1].device_ptr()),
              kChainFloats, 1.0f, 0.5f};
    }
  }
  // Captures [H2D copy from staging] + the kernels reading descriptors at `descs`.
  cuda::Graph Capture(StreamView stream, const testing::AugmentDesc* descs, bool with_copy) const {
    cuda::Graph::BeginCapture(stream);
    if (with_copy) CopyBytesAsync(data[0].device_ptr(), staging.host_ptr(), kChainFloats * 4, stream);
    for (int i = 0; i < kChainOps; ++i) testing::AugmentGpu(descs + i, 1, kChainFloats, stream);
    return cuda::Graph::EndCapture(stream);
  }

  std::vector<Buffer> data;
  Buffer host_descs = Buffer::Allocate(MemoryKind::kPinned, kChainOps * sizeof(testing::AugmentDesc));
  Buffer staging = Buffer::Allocate(MemoryKind::kPinned, 256);
};

// The GPU floor of the overhead pipeline, without the executor: the same 10 augment kernels (16
// floats, descriptors in pinned mapped memory, or in device memory for desc_in_device:1) captured
// once and replayed back to back; the host blocks when the launch queue is full, so the time per
// iteration is max(GPU time of one replay, host cost of one cudaGraphLaunch).
void BM_AugmentChainGraph(benchmark::State& state) {
  if (!RequireGpu(state)) return;
  const bool desc_in_device = state.range(0) != 0;
  const bool copy_in_graph = state.range(1) != 0;
  cuda::Stream stream = cuda::Stream::Create();
  const AugmentChain chain(stream.view());
  Buffer descs = chain.host_descs;
  if (desc_in_device) {
    descs = Buffer::Allocate(MemoryKind::kDevice, chain.host_descs.size(), stream.view());
    CopyBytesAsync(descs.device_ptr(), chain.host_descs.host_ptr(), chain.host_descs.size(), stream.view());
  }
  stream.Synchronize();
  const cuda::Graph graph =
      chain.Capture(stream.view(), static_cast<const testing::AugmentDesc*>(descs.device_ptr()), copy_in_graph);
  const cuda::GraphExec exec = graph.Instantiate();
  for (int i = 0; i < 100; ++i) exec.Launch(stream.view());
  stream.Synchronize();
  for (auto _ : state) exec.Launch(stream.view());
  stream.Synchronize();
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}
BENCHMARK(BM_AugmentChainGraph)
    ->ArgNames({"desc_in_device", "copy_in_graph"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Host time of one CUDA runtime call (manual timing of the call alone; the GPU queue is drained
// between batches outside the timed region). call: 0 cudaEventQuery (completed event),
// 1 cudaEventRecord, 2 cudaStreamWaitEvent (completed event), 3 cudaMemcpyAsync 64 B H2D from
// pinned memory, 4 cudaGraphLaunch (the 10-kernel overhead graph), 5 cudaLaunchKernelEx (one
// augment kernel, as eager mode issues it), 6 cudaGraphExecMemcpyNodeSetParams1D,
// 7 steady_clock::now(), 8 cudaGraphLaunch (the same graph without the memcpy node).
void BM_CudaApiCost(benchmark::State& state) {
  if (!RequireGpu(state)) return;
  const int call = static_cast<int>(state.range(0));
  cuda::Stream stream = cuda::Stream::Create();
  cuda::Stream other = cuda::Stream::Create();
  cuda::Event event = cuda::Event::Create();
  const AugmentChain chain(stream.view());
  const auto* dev = static_cast<const testing::AugmentDesc*>(chain.host_descs.device_ptr());
  const cuda::Graph graph = chain.Capture(stream.view(), dev, true);
  const cuda::GraphExec exec = graph.Instantiate();
  const cuda::Graph kernels_graph = chain.Capture(stream.view(), dev, false);
  const cuda::GraphExec kernels_exec = kernels_graph.Instantiate();
  size_t num_nodes = 0;
  CONVEYOR_CUDA_CHECK(cudaGraphGetNodes(graph.get(), nullptr, &num_nodes));
  std::vector<cudaGraphNode_t> nodes(num_nodes);
  CONVEYOR_CUDA_CHECK(cudaGraphGetNodes(graph.get(), nodes.data(), &num_nodes));
  cudaGraphNode_t memcpy_node = nullptr;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    CONVEYOR_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeMemcpy) memcpy_node = node;
  }
  event.Record(stream.view());
  stream.Synchronize();
  using Clock = std::chrono::steady_clock;
  int64_t i = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    switch (call) {
      case 0: benchmark::DoNotOptimize(event.Query()); break;
      case 1: event.Record(stream.view()); break;
      case 2: event.Wait(other.view()); break;
      case 3: CopyBytesAsync(chain.data[0].device_ptr(), chain.staging.host_ptr(), kChainFloats * 4, stream.view()); break;
      case 4: exec.Launch(stream.view()); break;
      case 5: testing::AugmentGpu(dev, 1, kChainFloats, stream.view()); break;
      case 6:
        CONVEYOR_CUDA_CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec.get(), memcpy_node, chain.data[0].device_ptr(),
                                                               chain.staging.host_ptr(), (i & 1) ? 64 : 48,
                                                               cudaMemcpyDefault));
        break;
      case 7: benchmark::DoNotOptimize(Clock::now()); break;
      default: kernels_exec.Launch(stream.view()); break;
    }
    const auto t1 = Clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    if ((++i & 15) == 0 && call != 0) {
      stream.Synchronize();
      other.Synchronize();
    }
  }
  stream.Synchronize();
  other.Synchronize();
  static const char* const kNames[] = {"cudaEventQuery(done)",  "cudaEventRecord",   "cudaStreamWaitEvent",
                                       "cudaMemcpyAsync 64 B H2D", "cudaGraphLaunch(11 nodes)", "cudaLaunchKernelEx",
                                       "cudaGraphExecMemcpyNodeSetParams1D", "steady_clock::now",
                                       "cudaGraphLaunch(10 kernels)"};
  state.SetLabel(kNames[std::min(call, 8)]);
}
BENCHMARK(BM_CudaApiCost)->ArgName("call")->DenseRange(0, 8)->UseManualTime()->Unit(benchmark::kMicrosecond);

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
