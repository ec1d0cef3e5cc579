// Back-to-back timing for the kernel benchmarks (pointwise_bench, geometry_bench): K launches
// enqueued one after another between two events, as a captured graph replays them, so the time
// per launch is the GPU's (kernel + the gap between consecutive kernels), without the host's
// launch latency that a single launch timed between two events also counts (the start event
// fires as soon as it is enqueued on an idle GPU; the kernel arrives a few microseconds later).
// Counters: b2b_ms (median of 7 timings of K launches, per launch), b2b_copy_ms (the same for the
// benchmark's device-to-device copy), b2b_eff_GBps on the benchmark's minimal bytes and
// b2b_ratio_to_copy = b2b_copy_ms / b2b_ms.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"

namespace conveyor::bench {

inline double BackToBackMs(cuda::StreamView stream, const std::function<void()>& launch, int k = 20, int timings = 7) {
  cuda::Event start = cuda::Event::Create(true), stop = cuda::Event::Create(true);
  std::vector<double> per_launch;
  for (int t = 0; t < timings; ++t) {
    start.Record(stream);
    for (int i = 0; i < k; ++i) launch();
    stop.Record(stream);
    stop.Synchronize();
    per_launch.push_back(cuda::Event::ElapsedMs(start, stop) / k);
  }
  std::sort(per_launch.begin(), per_launch.end());
  return per_launch[per_launch.size() / 2];
}

inline void ReportBackToBack(benchmark::State& state, cuda::StreamView stream, const std::function<void()>& launch,
                             const std::function<void()>& copy, double min_bytes) {
  const double kernel_ms = BackToBackMs(stream, launch), copy_ms = BackToBackMs(stream, copy);
  state.counters["b2b_ms"] = kernel_ms;
  state.counters["b2b_eff_GBps"] = min_bytes / (kernel_ms * 1e-3) / 1e9;
  state.counters["b2b_copy_ms"] = copy_ms;
  state.counters["b2b_ratio_to_copy"] = copy_ms / kernel_ms;
}

}  // namespace conveyor::bench
