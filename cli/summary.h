// The summary `conveyor run` prints at the end, from the run's measurements, the executor's
// counters (ExecutorCounters) and the memory statistics (MemoryStats):
//
//   summary: random_augment on cpu, batch 16, 100 iterations (1600 samples) in 0.21 s
//     throughput      7619.0 samples/s, 0.49 MB/s of outputs
//     stage time      CPU stage 0.110 ms/it, GPU issue 0.000 ms/it, GPU wait 0.000 ms/it, idle ...
//     CUDA graphs     0 captures, 0 replays (graph_capture off)
//     staged copies   0 on the copy stream, 0 in captured graphs
//     peak memory     host 1.2 MB, pinned 0 B, device 0 B, managed 0 B
//     decoders        decode (gpu, nvJPEG): 512 images: hardware engines 300 (58.6%), CUDA ...
//     functions       augment (python_function): user code on the CPU stage, one call at a time ...
//     outputs         quantized: int32 (16, 4, 4) ...; flips: ...
// The decoders line appears when the pipeline has decoders.* nodes: on the CPU it names the
// libraries; on the GPU it splits the images between nvJPEG's paths (ProcessGpuDecoderCounters).
// A "functions" line names the python_function nodes (user code: CPU stage, not capturable).
// With on_error: skip, a "skipped" line counts the samples dropped and lists their files (node,
// path, reason; the first kMaxSkippedListed) from ExecutorCounters::skipped_files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/pipeline/executor.h"
#include "operators/decoders/gpu_decoder.h"

namespace conveyor::cli {

struct RunMeasurements {
  std::string pipeline;
  std::string device;  // where it ran: "cpu" or "gpu"
  int batch_size = 0;
  bool graph_capture = false;
  int64_t iterations = 0;
  int64_t samples = 0;
  int64_t output_bytes = 0;
  double seconds = 0;
  int64_t epochs_started = 0;  // 0: no reader
  std::vector<std::string> outputs;  // "name: dtype shape layout"
  // decoders.* nodes by where they ran, and the process's GPU decoder counters.
  std::vector<std::string> cpu_decoders, gpu_decoders;
  ops::GpuDecoderCounters gpu_decode;
  std::vector<std::string> function_nodes;  // python_function nodes: user code on the CPU stage
};

std::string FormatSummary(const RunMeasurements& m, const ExecutorCounters& c);
inline constexpr int kMaxSkippedListed = 10;

// The skipped lines ("" when nothing was skipped).
std::string FormatSkipped(const ExecutorCounters& c);

// The decoders line(s) alone ("" without decoder nodes).
std::string FormatDecoders(const RunMeasurements& m);

// The python_function line ("" without such nodes): user code, on the CPU stage, never captured.
std::string FormatFunctions(const RunMeasurements& m);

// "512 B", "1.5 KB", "3.2 MB", "1.1 GB" (decimal units).
std::string FormatBytes(double bytes);

}  // namespace conveyor::cli
