// `conveyor bench`: warm-up iterations, then `repeats` timed runs of `iterations` each. Reports
// samples/s (min, median, max over repeats) and per-stage time per iteration from the executor's
// counters over the timed part, as a table or JSON, with where the GPU memory goes: the device's
// memory in use (the driver's figure) once the pipeline is built and at its highest after an
// iteration, what our pools hold (MemoryStats: the peak in use and what was taken from the driver),
// and nvJPEG's (through our allocators, and the engines' own, taken while their handles were made
// and their states preallocated). The rest is the CUDA context, libraries' modules and nvJPEG's
// memory inside its calls; set it beside the process's GPU memory seen from outside
// (bench/e2e/measure.py). CPU cores busy: the process's user + system CPU time over the timed
// part's wall time (every thread: the CPU stage's, the decoders' workers, nvJPEG's, the driver's).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/decoder_times.h"
#include "cli/session.h"
#include "core/cuda/check.h"
#include "core/error.h"
#include "core/memory/stats.h"
#include "core/op/thread_affinity.h"
#include "operators/decoders/gpu_decoder.h"

namespace conveyor::cli {
namespace {
double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// The device's memory in use as the driver sees it (total - free: every process on the device),
// sampled; all 0 on a pipeline without a GPU.
struct DriverMemory {
  bool gpu = false;
  int64_t after_open = 0, peak = 0;
  void Sample() {
    if (!gpu) return;
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return;
    const auto used = static_cast<int64_t>(total - free_bytes);
    if (after_open == 0) after_open = used;
    peak = std::max(peak, used);
  }
};

// User + system CPU seconds of the whole process so far.
double ProcessCpuSeconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0.0;
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}
// CONVEYOR_CUDA_SCHEDULE (measuring switch): how this process's host threads wait for the GPU —
// ours, nvJPEG's and the driver's (cudaSetDeviceFlags before the CUDA context exists). By default
// (auto) a machine with more cores than active contexts spins; `blocking` puts waiting threads to
// sleep, which shows how much of the CPU cores busy is spinning. No GPU: nothing to set.
void ApplyCudaScheduleEnv() {
  const char* v = std::getenv("CONVEYOR_CUDA_SCHEDULE");
  if (v == nullptr) return;
  unsigned flag = 0;
  if (std::strcmp(v, "auto") == 0) {
    flag = cudaDeviceScheduleAuto;
  } else if (std::strcmp(v, "spin") == 0) {
    flag = cudaDeviceScheduleSpin;
  } else if (std::strcmp(v, "yield") == 0) {
    flag = cudaDeviceScheduleYield;
  } else if (std::strcmp(v, "blocking") == 0) {
    flag = cudaDeviceScheduleBlockingSync;
  } else {
    throw Error(std::string("CONVEYOR_CUDA_SCHEDULE: expected auto, spin, yield or blocking (how host threads wait "
                            "for the GPU), got \"") + v + "\"");
  }
  const cudaError_t e = cudaSetDeviceFlags(flag);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    cudaGetLastError();  // nothing to wait for without a GPU; leave no error behind
    return;
  }
  if (e != cudaSuccess) {
    throw Error(std::string("CONVEYOR_CUDA_SCHEDULE=") + v + ": cudaSetDeviceFlags failed: " + cudaGetErrorString(e));
  }
}
}  // namespace

int BenchCommand(const PipelineCommand& cmd, const BenchOptions& o, std::ostream& out) {
  ApplyCudaScheduleEnv();
  Session session = Session::Open(cmd);
  const PipelineSpec& spec = session.spec();
  session.SetIterations(o.warmup + o.iterations * o.repeats);
  DriverMemory driver;
  driver.gpu = session.pipeline().graph().device() == Device::kGpu;
  driver.Sample();
  int64_t samples_per_it = 0;
  for (int64_t i = 0; i < o.warmup; ++i) {
    session.Next().Sync();
    driver.Sample();
  }
  const ExecutorCounters before = session.pipeline().counters();
  const ops::GpuDecoderCounters decoders_before = ops::ProcessGpuDecoderCounters();
  std::vector<double> rates, seconds;
  // Per timed iteration: ms since the previous one's outputs were ready, and the decoders' call time
  // that ended in between (to set beside each batch's content: iteration warmup + i of the readers).
  std::vector<double> iteration_ms, decoder_call_ms;
  auto last_ready = std::chrono::steady_clock::now();
  double last_call_s = decoders_before.call_seconds;
  const double cpu0 = ProcessCpuSeconds();
  for (int r = 0; r < o.repeats; ++r) {
    int64_t samples = 0;
    const auto start = std::chrono::steady_clock::now();
    if (r == 0) last_ready = start;
    for (int64_t i = 0; i < o.iterations; ++i) {
      PipelineOutputs outputs = session.Next();
      outputs.Sync();
      const auto ready = std::chrono::steady_clock::now();
      iteration_ms.push_back(std::chrono::duration<double, std::milli>(ready - last_ready).count());
      last_ready = ready;
      const double call_s = ops::ProcessGpuDecoderCounters().call_seconds;
      decoder_call_ms.push_back(1e3 * (call_s - last_call_s));
      last_call_s = call_s;
      driver.Sample();
      if (outputs.size() > 0) {
        samples_per_it = outputs.IsGpu(0) ? outputs.Gpu(0).num_samples() : outputs.Cpu(0).num_samples();
      }
      samples += samples_per_it;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds.push_back(s);
    rates.push_back(static_cast<double>(samples) / std::max(s, 1e-9));
  }
  double timed_s = 0;
  for (double x : seconds) timed_s += x;
  const double cores = (ProcessCpuSeconds() - cpu0) / std::max(timed_s, 1e-9);
  const ExecutorCounters after = session.pipeline().counters();
  const DecoderTimes dec = DecoderTimesBetween(decoders_before, ops::ProcessGpuDecoderCounters());
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                          : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  const double its = std::max<double>(1.0, static_cast<double>(after.iterations - before.iterations));
  auto ms = [&](int64_t a, int64_t b) { return static_cast<double>(a - b) / 1e6 / its; };
  // The GPU stage's issue time by part (segments in GPU order), ms per iteration.
  std::vector<std::pair<std::string, double>> issue_parts;
  for (size_t p = 0; p < after.gpu_issue_parts.size() && p < before.gpu_issue_parts.size(); ++p) {
    issue_parts.emplace_back(after.gpu_issue_parts[p].name,
                             static_cast<double>(after.gpu_issue_parts[p].ns - before.gpu_issue_parts[p].ns) / 1e6 / its);
  }
  const double cpu = ms(after.stage_cpu_ns, before.stage_cpu_ns);
  const double issue = ms(after.stage_issue_ns, before.stage_issue_ns);
  const double wait = ms(after.stage_gpu_wait_ns, before.stage_gpu_wait_ns);
  const double idle = ms(after.stage_idle_ns, before.stage_idle_ns);
  const double cpu_wait = ms(after.stage_cpu_wait_ns, before.stage_cpu_wait_ns);
  const bool cpu_thread = after.cpu_stage_thread;
  const std::string device(DeviceName(session.pipeline().graph().device()));
  const MemoryStatsSnapshot dev = MemoryStats::Get(MemoryKind::kDevice);
  const ops::GpuDecoderCounters decoders_end = ops::ProcessGpuDecoderCounters();
  const nvjpeg::NvjpegMemory& nv_cuda = decoders_end.cuda_memory;
  const nvjpeg::NvjpegMemory& nv_hw = decoders_end.engines_memory;
  char buf[2048];  // the decoder_mix line alone is ~700 characters
  if (o.json) {
    std::ostringstream r;
    for (size_t i = 0; i < rates.size(); ++i) r << (i ? ", " : "") << rates[i];
    std::snprintf(buf, sizeof(buf),
                  "{\"pipeline\": \"%s\", \"device\": \"%s\", \"batch_size\": %d, \"warmup\": %lld, "
                  "\"iterations\": %lld, \"repeats\": %d,\n",
                  spec.name.c_str(), device.c_str(), spec.batch_size, static_cast<long long>(o.warmup),
                  static_cast<long long>(o.iterations), o.repeats);
    out << buf << " \"thread_affinity\": \"" << ProcessThreadCpus().summary << "\",\n";
    out << " \"samples_per_s\": {\"min\": " << sorted.front() << ", \"median\": " << median
        << ", \"max\": " << sorted.back() << ", \"repeats\": [" << r.str() << "]},\n";
    std::snprintf(buf, sizeof(buf), " \"cpu_cores_busy\": %.2f,\n", cores);
    out << buf;
    auto list = [&](const char* name, const std::vector<double>& v, bool skip_zeros) {
      if (skip_zeros && std::all_of(v.begin(), v.end(), [](double x) { return x == 0; })) return;
      out << " \"" << name << "\": [";
      for (size_t i = 0; i < v.size(); ++i) {
        std::snprintf(buf, sizeof(buf), "%s%.2f", i ? ", " : "", v[i]);
        out << buf;
      }
      out << "],\n";
    };
    list("iteration_ms", iteration_ms, false);
    list("decoder_call_ms", decoder_call_ms, true);
    std::snprintf(buf, sizeof(buf),
                  " \"cpu_stage_thread\": %s, \"cpu_stage_ahead_share\": %.3f,\n"
                  " \"ms_per_iteration\": {\"cpu_stage\": %.6f, \"gpu_issue\": %.6f, "
                  "\"gpu_wait\": %.6f, \"idle\": %.6f, \"issue_waits_for_cpu_stage\": %.6f},\n"
                  " \"captures\": %lld, \"replays\": %lld,\n",
                  cpu_thread ? "true" : "false",
                  static_cast<double>(after.cpu_stage_ahead_iterations - before.cpu_stage_ahead_iterations) / its,
                  cpu, issue, wait, idle, cpu_wait,
                  static_cast<long long>(after.captures - before.captures),
                  static_cast<long long>(after.replays - before.replays));
    out << buf;
    if (!issue_parts.empty()) {
      out << " \"gpu_issue_parts_ms\": {";
      for (size_t p = 0; p < issue_parts.size(); ++p) {
        out << (p ? ", " : "") << '"' << issue_parts[p].first << "\": " << issue_parts[p].second;
      }
      out << "},\n";
    }
    if (dec.calls > 0) {
      std::snprintf(buf, sizeof(buf),
                    " \"decoder_ms_per_call\": {\"slot_wait\": %.6f, \"classify\": %.6f, \"decode\": %.6f, "
                    "\"cpu_path\": %.6f, \"call\": %.6f, \"slot_pending\": %.4f},\n",
                    dec.wait, dec.classify, dec.b, dec.c, dec.call, dec.pending);
      out << buf;
      std::snprintf(buf, sizeof(buf),
                    " \"decoder_mix\": {\"engines_images_per_call\": %.2f, \"cuda_images_per_call\": %.2f, "
                    "\"cpu_images_per_call\": %.2f, \"engines_share\": %.4f, \"engines_host_ms_per_batch\": %.6f, "
                    "\"engines_gpu_ms_per_batch\": %.6f, \"cuda_ms_per_call\": %.6f, \"engines_rate\": %.1f, "
                    "\"cuda_rate\": %.1f, \"engines\": %d, \"cores_per_engine\": %d, \"cuda_workers_host_ms\": %.6f, "
                    "\"cuda_workers_pinned_wait_ms\": %.6f, \"cuda_workers_issue_ms\": %.6f, "
                    "\"engines_other_images_per_call\": %.2f, \"fallbacks_per_call\": %.2f, \"cpu_decode_ms\": %.6f, "
                    "\"engine_handles\": %d, \"engine_handles_chosen\": %d, \"engines_only_chosen\": %d, "
                    "\"cuda_shared_images_per_call\": %.2f, \"ahead_images_per_call\": %.2f, "
                    "\"ahead_taken_back_per_call\": %.2f, \"ahead_wait_ms\": %.6f},\n",
                    dec.engines_images, dec.cuda_images, dec.cpu_images, dec.engines_share, dec.engines_host,
                    dec.engines_gpu, dec.cuda, dec.engines_rate, dec.cuda_rate, dec.engines, dec.cores_per_engine,
                    dec.cuda_host, dec.cuda_pinned_wait, dec.cuda_issue, dec.engines_other_images, dec.fallbacks,
                    dec.cpu_decode, dec.handles, dec.handles_chosen, dec.engines_only_chosen, dec.cuda_shared_images,
                    dec.ahead_images, dec.ahead_taken_back, dec.ahead_wait);
      out << buf;
    }
    const MemoryStatsSnapshot pin = MemoryStats::Get(MemoryKind::kPinned);
    std::snprintf(buf, sizeof(buf),
                  " \"memory_mib\": {\"device_peak_in_use\": %.1f, \"device_from_driver\": %.1f, "
                  "\"pinned_peak_in_use\": %.1f, \"pinned_from_driver\": %.1f, \"driver_in_use_after_open\": %.1f, "
                  "\"driver_in_use_peak\": %.1f, \"nvjpeg_cuda_device_peak\": %.1f, \"nvjpeg_engines_device_peak\": %.1f, "
                  "\"nvjpeg_engines_at_create\": %.1f, \"nvjpeg_engines_at_prealloc\": %.1f}}\n",
                  Mib(dev.peak_bytes), Mib(dev.upstream_bytes), Mib(pin.peak_bytes), Mib(pin.upstream_bytes),
                  Mib(driver.after_open), Mib(driver.peak), Mib(nv_cuda.device_peak_bytes), Mib(nv_hw.device_peak_bytes),
                  Mib(nv_hw.driver_bytes_at_create), Mib(nv_hw.driver_bytes_at_prealloc));
    out << buf;
    return 0;
  }
  std::snprintf(buf, sizeof(buf), "bench: %s on %s, batch %d, %lld warm-up + %d x %lld timed iterations\n",
                spec.name.c_str(), device.c_str(), spec.batch_size, static_cast<long long>(o.warmup), o.repeats,
                static_cast<long long>(o.iterations));
  out << buf;
  out << "threads: " << ProcessThreadCpus().summary << "\n";
  out << "| figure | min | median | max |\n| --- | --- | --- | --- |\n";
  std::snprintf(buf, sizeof(buf), "| samples/s | %.1f | %.1f | %.1f |\n", sorted.front(), median, sorted.back());
  out << buf;
  std::snprintf(buf, sizeof(buf), "\nCPU cores busy over the timed part (process CPU time / wall): %.2f\n", cores);
  out << buf << "\n| stage, ms per iteration (timed part" << (cpu_thread ? "; the CPU stage on its own thread" : "")
      << ") | value |\n| --- | --- |\n";
  std::snprintf(buf, sizeof(buf),
                "| CPU stage | %.3f |\n| GPU issue | %.3f |\n| GPU wait | %.3f |\n| idle (waiting for the consumer) | %.3f |\n",
                cpu, issue, wait, idle);
  out << buf;
  if (cpu_thread) {
    std::snprintf(buf, sizeof(buf), "| issue waiting for the CPU stage | %.3f |\n", cpu_wait);
    out << buf;
  }
  if (!issue_parts.empty()) {
    out << "\n| GPU issue by part, ms per iteration | value |\n| --- | --- |\n";
    for (const auto& [name, v] : issue_parts) {
      std::snprintf(buf, sizeof(buf), "| %s | %.3f |\n", name.c_str(), v);
      out << buf;
    }
  }
  if (dec.calls > 0) {
    std::snprintf(buf, sizeof(buf),
                  "\n| GPU decoders, ms per call (timed part) | value |\n| --- | --- |\n| waiting for the slot's "
                  "previous work | %.3f (%.0f%% of calls) |\n| classify (A) | %.3f |\n| engines + CUDA backend (B) | "
                  "%.3f |\n| CPU path (C) | %.3f |\n| whole call | %.3f |\n",
                  dec.wait, 100 * dec.pending, dec.classify, dec.b, dec.c, dec.call);
    out << buf;
    std::snprintf(buf, sizeof(buf),
                  "| B: images per call, engines / CUDA backend / CPU path | %.1f / %.1f / %.1f (engines %.0f%%) |\n"
                  "| B: engines' batch, host / GPU ms | %.3f / %.3f |\n| B: CUDA backend's part, ms | %.3f |\n"
                  "| balancer's rates, engines / CUDA backend, megapixels/s | %.0f / %.0f |\n"
                  "| JPEG engines x cores each (nvJPEG's report) | %d x %d |\n"
                  "| B: CUDA backend's workers, thread ms: host Huffman / pinned buffer wait / issue | %.3f / %.3f / %.3f |\n",
                  dec.engines_images, dec.cuda_images, dec.cpu_images, 100 * dec.engines_share, dec.engines_host,
                  dec.engines_gpu, dec.cuda, dec.engines_rate, dec.cuda_rate, dec.engines, dec.cores_per_engine,
                  dec.cuda_host, dec.cuda_pinned_wait, dec.cuda_issue);
    out << buf;
    std::snprintf(buf, sizeof(buf),
                  "| engines' images in calls of their own (4:4:4, 4:2:2, gray) / refused, per call | %.1f / %.1f |\n"
                  "| CPU path's decodes, thread ms per call | %.3f |\n"
                  "| engines' handles: made / the tuner's choice at the end | %d / %d%s |\n",
                  dec.engines_other_images, dec.fallbacks, dec.cpu_decode, dec.handles, dec.handles_chosen,
                  dec.engines_only_chosen ? ", every 4:2:0 image on the engines" : "");
    out << buf;
  }
  out << "\nCUDA graphs in the timed part: " << (after.captures - before.captures) << " captures, "
      << (after.replays - before.replays) << " replays\n";
  std::snprintf(buf, sizeof(buf), "GPU memory in our pools: peak in use %.1f MiB, taken from the driver %.1f MiB\n",
                Mib(dev.peak_bytes), Mib(dev.upstream_bytes));
  out << buf;
  if (driver.gpu) {
    std::snprintf(buf, sizeof(buf),
                  "GPU memory, the driver's figure for the device: %.1f MiB once the pipeline was built, %.1f MiB at "
                  "the most after an iteration\nnvJPEG: CUDA backend through our pools %.1f MiB at the most; engines "
                  "through ours %.1f MiB, their own %.1f MiB at handle creation + %.1f MiB at preallocation\n",
                  Mib(driver.after_open), Mib(driver.peak), Mib(nv_cuda.device_peak_bytes), Mib(nv_hw.device_peak_bytes),
                  Mib(nv_hw.driver_bytes_at_create), Mib(nv_hw.driver_bytes_at_prealloc));
    out << buf;
  }
  return 0;
}

}  // namespace conveyor::cli
