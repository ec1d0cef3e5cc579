// H2D copy throughput: 64 MiB from the pinned pool vs from pageable memory, timed with CUDA events
// on our own non-blocking stream. Reported as bytes/s (Google Benchmark's bytes_per_second).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/tensor/copy.h"

namespace conveyor {
namespace {

constexpr size_t kBytes = size_t(64) << 20;

void CopyBench(benchmark::State& state, MemoryKind src_kind, bool to_device) {
  if (!cuda::HasCudaDevice()) {
    state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
    return;
  }
  cuda::Stream stream = cuda::Stream::Create();
  Buffer host = Buffer::Allocate(src_kind, kBytes, stream.view());
  Buffer device = Buffer::Allocate(MemoryKind::kDevice, kBytes, stream.view());
  std::memset(host.host_ptr(), 0x5A, kBytes);  // touch every page so pageable memory is resident
  cuda::Event start = cuda::Event::Create(true), stop = cuda::Event::Create(true);
  for (auto _ : state) {
    start.Record(stream.view());
    if (to_device) {
      CopyBytesAsync(device.device_ptr(), host.host_ptr(), kBytes, stream.view());
    } else {
      CopyBytesAsync(host.host_ptr(), device.device_ptr(), kBytes, stream.view());
    }
    stop.Record(stream.view());
    stop.Synchronize();
    state.SetIterationTime(cuda::Event::ElapsedMs(start, stop) / 1e3);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBytes));
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}

void BM_H2D_Pinned(benchmark::State& s) { CopyBench(s, MemoryKind::kPinned, true); }
void BM_H2D_Pageable(benchmark::State& s) { CopyBench(s, MemoryKind::kHost, true); }
void BM_D2H_Pinned(benchmark::State& s) { CopyBench(s, MemoryKind::kPinned, false); }
BENCHMARK(BM_H2D_Pinned)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_H2D_Pageable)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_D2H_Pinned)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
