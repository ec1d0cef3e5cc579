// Shared by the kernel benchmarks (pointwise_bench, geometry_bench, augment_bench, tensor_bench):
// the timing below, and UploadTable for a kernel's per-sample descriptors.
//
// TimeAgainstCopy: one launch between two events per benchmark iteration (median), a
// device-to-device copy of `copy_bytes` 30 times (median), then the back-to-back figures below.
// Counters: kernel_ms, eff_GBps (on the benchmark's minimal bytes: read + written once), copy_ms,
// copy_GBps (2 x copy_bytes), ratio_to_copy = copy_ms / kernel_ms; the device's name as the label.
//
// Back-to-back: K launches
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

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"

namespace conveyor::bench {

// `table` copied into a new device buffer held by `into`, the host waiting for the copy; its address.
template <typename T>
T* UploadTable(Buffer& into, const std::vector<T>& table, cuda::StreamView stream) {
  into = Buffer::Allocate(MemoryKind::kDevice, sizeof(T) * table.size(), stream);
  CONVEYOR_CUDA_CHECK(
      cudaMemcpyAsync(into.device_ptr(), table.data(), sizeof(T) * table.size(), cudaMemcpyHostToDevice, stream.get()));
  stream.Synchronize();
  return static_cast<T*>(into.device_ptr());
}

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

inline double MedianMs(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline void TimeAgainstCopy(benchmark::State& state, cuda::StreamView stream, const std::function<void()>& launch,
                            const std::function<void()>& copy, size_t copy_bytes, double min_bytes) {
  cuda::Event start = cuda::Event::Create(true), stop = cuda::Event::Create(true);
  auto time = [&](const std::function<void()>& f) {
    start.Record(stream);
    f();
    stop.Record(stream);
    stop.Synchronize();
    return cuda::Event::ElapsedMs(start, stop);
  };
  for (int i = 0; i < 3; ++i) time(launch), time(copy);  // warm-up
  std::vector<double> kernel, copies;
  for (auto _ : state) {
    const double ms = time(launch);
    kernel.push_back(ms);
    state.SetIterationTime(ms / 1e3);
  }
  for (int i = 0; i < 30; ++i) copies.push_back(time(copy));
  const double kernel_ms = MedianMs(kernel), copy_ms = MedianMs(copies);
  state.counters["kernel_ms"] = kernel_ms;
  state.counters["eff_GBps"] = min_bytes / (kernel_ms * 1e-3) / 1e9;
  state.counters["copy_ms"] = copy_ms;
  state.counters["copy_GBps"] = 2.0 * static_cast<double>(copy_bytes) / (copy_ms * 1e-3) / 1e9;
  state.counters["ratio_to_copy"] = copy_ms / kernel_ms;
  ReportBackToBack(state, stream, launch, copy, min_bytes);
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}

}  // namespace conveyor::bench
