#include "operators/decoders/gpu_decoder.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <sstream>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/memory/memory_resource.h"
#include "operators/decoders/gpu_decoder_impl.h"

namespace conveyor::ops {

// Moves the engines' share toward the split that makes both paths finish together:
// share = hw_rate / (hw_rate + cuda_rate).
void GpuDecoder::Impl::UpdateBalance(double cuda_seconds, int64_t cuda_images) {
  if (cuda_images > 0 && cuda_seconds > 0) {
    const double r = static_cast<double>(cuda_images) / cuda_seconds;
    cuda_rate = cuda_rate == 0 ? r : (1 - kEma) * cuda_rate + kEma * r;
  }
  const bool automatic = options.hw_load < 0 && options.paths == DecodePaths::kAuto && hw_handle != nullptr;
  if (automatic && hw_rate > 0 && cuda_rate > 0) {
    hw_share = std::clamp(hw_rate / (hw_rate + cuda_rate), kMinShare, 1 - kMinShare);
  }
  std::lock_guard<std::mutex> lock(counters_mu);
  counters.hw_rate = hw_rate;
  counters.cuda_rate = cuda_rate;
  if (automatic) counters.hw_share = hw_share;
}

GpuDecoder::GpuDecoder(const GpuDecoderOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->Init();
}

GpuDecoder::~GpuDecoder() {
  for (auto& slot : impl_->slots) {
    if (slot->done) CONVEYOR_CUDA_CHECK_NOTHROW(cudaEventSynchronize(slot->done.get()));
  }
  impl_->Destroy();
}

namespace {

std::mutex process_counters_mu;
GpuDecoderCounters process_counters;

// One call's counts and phase times (`call`) added to a running total.
void AddCallCounters(GpuDecoderCounters& to, const GpuDecoderCounters& call) {
  to.images_hardware += call.images_hardware;
  to.images_cuda += call.images_cuda;
  to.images_cpu += call.images_cpu;
  to.fallbacks += call.fallbacks;
  to.calls += call.calls;
  to.classify_seconds += call.classify_seconds;
  to.phase_b_seconds += call.phase_b_seconds;
  to.phase_c_seconds += call.phase_c_seconds;
  to.hw_start_seconds += call.hw_start_seconds;
  to.slot_wait_seconds += call.slot_wait_seconds;
  to.slot_query_seconds += call.slot_query_seconds;
  to.slot_pending_calls += call.slot_pending_calls;
  to.call_seconds += call.call_seconds;
  to.hw_preallocations += call.hw_preallocations;
  to.hw_ready_wait_seconds += call.hw_ready_wait_seconds;
  to.hw_end_pending += call.hw_end_pending;
  to.hw_batches += call.hw_batches;
  to.hw_host_seconds += call.hw_host_seconds;
  to.hw_gpu_seconds += call.hw_gpu_seconds;
  to.cuda_seconds += call.cuda_seconds;
  to.cuda_host_seconds += call.cuda_host_seconds;
  to.cuda_pinned_wait_seconds += call.cuda_pinned_wait_seconds;
  to.cuda_issue_seconds += call.cuda_issue_seconds;
  to.cuda_first_start_seconds += call.cuda_first_start_seconds;
  to.cuda_chunks += call.cuda_chunks;
  to.cuda_threads += call.cuda_threads;
  to.cuda_work_seconds += call.cuda_work_seconds;
  to.cuda_prologue_seconds += call.cuda_prologue_seconds;
  to.cuda_epilogue_seconds += call.cuda_epilogue_seconds;
  to.cuda_threads_first_start_seconds += call.cuda_threads_first_start_seconds;
}

// The process's totals: every decoder's counts and phase times (the engines' batch times as read
// at a slot's next call, so a call later), the latest decoder's rates and availability.
void AddToProcessCounters(const GpuDecoderCounters& batch, const GpuDecoderCounters& latest) {
  std::lock_guard<std::mutex> lock(process_counters_mu);
  AddCallCounters(process_counters, batch);
  process_counters.nvjpeg_available = latest.nvjpeg_available;
  process_counters.hardware_available = latest.hardware_available;
  process_counters.hw_share = latest.hw_share;
  process_counters.hw_engines = latest.hw_engines;
  process_counters.hw_cores_per_engine = latest.hw_cores_per_engine;
  process_counters.hw_parts = latest.hw_parts;
  process_counters.hw_no_pipeline = latest.hw_no_pipeline;
  process_counters.hw_rate = latest.hw_rate;
  process_counters.cuda_rate = latest.cuda_rate;
  process_counters.unavailable_reason = latest.unavailable_reason;
}

}  // namespace

GpuDecoderCounters ProcessGpuDecoderCounters() {
  std::lock_guard<std::mutex> lock(process_counters_mu);
  return process_counters;
}

GpuDecoderCounters GpuDecoder::counters() const {
  GpuDecoderCounters c;
  {
    std::lock_guard<std::mutex> lock(impl_->counters_mu);
    c = impl_->counters;
  }
  if (impl_->cuda_alloc != nullptr) c.cuda_memory = impl_->cuda_alloc->memory();
  if (impl_->hw_alloc != nullptr) c.engines_memory = impl_->hw_alloc->memory();
  for (const auto& more : impl_->hw_more_alloc) {  // the other engines' parts' handles
    const NvjpegMemory m = more->memory();
    c.engines_memory.device_allocations += m.device_allocations;
    c.engines_memory.device_bytes += m.device_bytes;
    c.engines_memory.device_slack_bytes += m.device_slack_bytes;
    c.engines_memory.device_peak_bytes += m.device_peak_bytes;
    c.engines_memory.pinned_allocations += m.pinned_allocations;
    c.engines_memory.pinned_bytes += m.pinned_bytes;
  }
  return c;
}

namespace {

// Returns a worker to the free list when a chunk ends, also by exception. Not copyable: a copy
// (e.g. emplace from a temporary) would give the worker back while its chunk still uses it, and
// twice, so two chunks would share one worker's nvJPEG stream, state and buffers.
class WorkerLease {
 public:
  WorkerLease(GpuDecoder::Impl& impl, Worker* w) : impl_(impl), w_(w) {}
  ~WorkerLease() { impl_.GiveWorker(w_); }
  WorkerLease(const WorkerLease&) = delete;
  WorkerLease& operator=(const WorkerLease&) = delete;

 private:
  GpuDecoder::Impl& impl_;
  Worker* w_;
};

bool IsRefusal(nvjpegStatus_t s) {
  return s == NVJPEG_STATUS_JPEG_NOT_SUPPORTED || s == NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED ||
         s == NVJPEG_STATUS_ARCH_MISMATCH;
}

}  // namespace

void GpuDecoder::Decode(const std::vector<GpuDecodeSample>& samples, const Workspace& ws,
                        const CpuDecodeFn& cpu_decode, const DescribeFn& describe, const std::string& where) {
  Impl& d = *impl_;
  const int n = static_cast<int>(samples.size());
  const StreamView stream = ws.stream();
  if (d.options.device < 0) CONVEYOR_CUDA_CHECK(cudaGetDevice(&d.options.device));
  cuda::DeviceGuard guard(d.options.device);
  const auto call_start = Clock::now();
  SlotState& slot = d.Slot(ws.slot());
  // This slot's host buffers (staging, decode parameters) were last read by its previous call;
  // under the executor that work has finished already, so this returns at once.
  const bool slot_pending = !slot.done.Query();
  const auto queried = Clock::now();
  slot.done.Synchronize();
  const auto waited = Clock::now();
  // This call's share of the counters: added to the decoder's and to the process's at the end.
  GpuDecoderCounters batch;
  d.ReadEngineTimes(slot, batch);
  auto sample_where = [&](int i) { return where + ": sample " + std::to_string(i) + " (" + describe(i) + ")"; };
  const int channels = DecodeChannels(d.options.color);
  const bool nv = d.lib != nullptr;
  const bool engines = nv && d.hw_handle != nullptr && d.options.paths != DecodePaths::kCudaOnly &&
                       d.options.paths != DecodePaths::kCpuOnly;
  if (engines) slot.ready.Record(stream);

  // A: classify. First the split: each JPEG nvJPEG may take goes to the engines or the CUDA backend
  // in proportion to the engines' share (Bresenham-style interleaving keeps both paths' shares of
  // big and small images alike). Then the engines' support check, which needs each header parsed
  // by nvJPEG (in parallel), only for the images picked for the engines: one the engines refuse
  // goes to the CUDA backend (the CPU path when only the engines may decode). Checking only those
  // saves the CUDA backend's share of the checks (0.37-0.45 ms per batch of 256 for all of them on
  // the H100's 8 pool threads, 2026-11-26).
  const auto a_start = Clock::now();
  d.hw_list.clear();
  d.cuda_list.clear();
  d.cpu_list.clear();
  // Samples only the CPU path takes: not for nvJPEG, or nothing to decode.
  auto cpu_only = [&](const GpuDecodeSample& s) {
    return !nv || !s.is_jpeg || d.options.paths == DecodePaths::kCpuOnly || s.roi.h == 0 || s.roi.w == 0;
  };
  std::vector<int>& picked = d.engine_candidates;
  picked.clear();
  if (engines) {
    double acc = 0;
    for (int i = 0; i < n; ++i) {
      if (cpu_only(samples[i])) continue;
      acc += d.hw_share;
      if (acc >= 1 - 1e-9) {
        acc -= 1;
        picked.push_back(i);
      }
    }
  }
  d.engine_ok.assign(n, 0);
  d.engine_part.assign(n, 0);
  // The picks in up to hw_parts contiguous parts of at least 16 images, each for a handle of its own.
  const int parts_used =
      picked.empty() ? 0 : std::clamp(static_cast<int>(picked.size()) / 16, 1, std::max(d.hw_parts, 1));
  if (!picked.empty()) {
    const NvjpegApi& a = d.api();
    for (int part = 0; part < parts_used; ++part) {
      auto& streams = slot.hw_streams[static_cast<size_t>(part)];
      auto& params = slot.hw_params[static_cast<size_t>(part)];
      while (static_cast<int>(streams.size()) < n) {
        nvjpegJpegStream_t js = nullptr;
        nvjpegDecodeParams_t p = nullptr;
        CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(d.HwHandle(part), &js), where);
        streams.push_back(js);
        CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsCreate(d.HwHandle(part), &p), where);
        params.push_back(p);
      }
    }
    const nvjpegOutputFormat_t format = FormatOf(d.options.color);
    const int64_t picks = static_cast<int64_t>(picked.size());
    ws.ParallelFor(picks, 8, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const int i = picked[static_cast<size_t>(k)];
        const int part = static_cast<int>(k * parts_used / picks);
        d.engine_part[i] = static_cast<uint8_t>(part);
        const nvjpegHandle_t h = d.HwHandle(part);
        nvjpegJpegStream_t js = slot.hw_streams[static_cast<size_t>(part)][static_cast<size_t>(i)];
        const GpuDecodeSample& s = samples[i];
        // A header the engines cannot parse goes to the CUDA backend, which reports it properly.
        if (a.nvjpegJpegStreamParseHeader(h, s.data, s.size, js) != NVJPEG_STATUS_SUCCESS) continue;
        nvjpegDecodeParams_t p = slot.hw_params[static_cast<size_t>(part)][static_cast<size_t>(i)];
        CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetOutputFormat(p, format), sample_where(i));
        int unsupported = 1;
        if (a.nvjpegDecodeBatchedSupportedEx != nullptr && a.nvjpegDecodeBatchedEx != nullptr) {
          if (IsWhole(s)) {
            CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(p, 0, 0, -1, -1), sample_where(i));
          } else {
            CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(p, static_cast<int>(s.roi.x), static_cast<int>(s.roi.y),
                                                             static_cast<int>(s.roi.w), static_cast<int>(s.roi.h)),
                                  sample_where(i));
          }
          CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedSupportedEx(h, js, p, &unsupported), sample_where(i));
        } else if (IsWhole(s)) {
          CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedSupported(h, js, &unsupported), sample_where(i));
        }
        d.engine_ok[i] = unsupported == 0 ? 1 : 0;  // the documented "0 = supported"
      }
    });
  }
  int64_t refused = 0;
  d.hw_offsets.assign(static_cast<size_t>(parts_used) + 1, 0);
  {
    size_t next_pick = 0;
    for (int i = 0; i < n; ++i) {
      const bool is_pick = next_pick < picked.size() && picked[next_pick] == i;
      if (is_pick) ++next_pick;
      if (cpu_only(samples[i])) {
        d.cpu_list.push_back(i);
      } else if (is_pick && d.engine_ok[i]) {
        d.hw_list.push_back(i);
        ++d.hw_offsets[static_cast<size_t>(d.engine_part[i]) + 1];  // parts are contiguous in pick order
      } else if (d.options.paths == DecodePaths::kHardwareOnly) {
        d.cpu_list.push_back(i);
        ++refused;
      } else {
        d.cuda_list.push_back(i);
      }
    }
  }

  // B: the engines' batch and the CUDA backend's images side by side. The engines' call holds its
  // thread for the whole batch, so it runs as a task of its own (RunBeside) while the CUDA
  // backend's images spread over the pool's other threads. (Until 2026-11-26 both were items of
  // one ParallelFor, whose chunks put a few CUDA images behind the engines' call on its thread: the
  // CUDA part then always ended with the engines, its measured rate fell, and the balancer gave
  // the engines more and more of the batch.)
  std::vector<uint8_t> fallback(n, 0);
  std::mutex used_mu;
  std::vector<Worker*> used;
  // The engines' images: part p is hw_list[hw_offsets[p], hw_offsets[p + 1]).
  for (int part = 0; part < parts_used; ++part) {
    d.hw_offsets[static_cast<size_t>(part) + 1] += d.hw_offsets[static_cast<size_t>(part)];
  }
  const int hw_n = static_cast<int>(d.hw_list.size());
  const int hw_items = hw_n == 0 ? 0 : parts_used;
  const int64_t cuda_n = static_cast<int64_t>(d.cuda_list.size());
  const auto b_start = Clock::now();
  std::atomic<int64_t> cuda_end_ns{0}, hw_start_ns{0};
  CudaPhaseTimes cuda_times;
  // CONVEYOR_JPEG_TRACE: the first that many calls after 20 print each CUDA image's start and end
  // and the engines' call's (for finding where the two paths wait on each other).
  const int64_t call_index = d.calls_made++;
  const bool trace = d.trace_calls > 0 && call_index >= 20 && call_index < 20 + d.trace_calls;
  if (cuda_n > 0) slot.start.Record(stream);
  const int device = d.options.device;
  // One engines' part on this thread. A thread new to CUDA must make the device current itself
  // before nvJPEG's engines backend works on it (else nvjpegDecodeBatchedPreAllocate fails with
  // NVJPEG_STATUS_ALLOCATOR_FAILURE and the decode with EXECUTION_FAILED, H100): DeviceGuard skips
  // cudaSetDevice where cudaGetDevice already answers `device`, which it does on a fresh thread.
  auto engines_part = [&](int p) {
    cuda::DeviceGuard engines_guard(device);
    CONVEYOR_CUDA_CHECK(cudaSetDevice(device));
    const int begin = d.hw_offsets[static_cast<size_t>(p)], end = d.hw_offsets[static_cast<size_t>(p) + 1];
    if (begin < end) {
      d.DecodeHardware(slot, p, begin, end, samples, p == 0 ? stream : slot.hw[static_cast<size_t>(p)].stream.view(),
                       where);
    }
    const int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - b_start).count();
    int64_t prev = cuda_times.engines_end_ns.load();
    while (prev < t && !cuda_times.engines_end_ns.compare_exchange_weak(prev, t)) {
    }
  };
  // Parts first..hw_items-1: the first on this thread, the rest beside it (RunBeside, recursively).
  std::function<void(int)> engines_from = [&](int first) {
    if (first == hw_items - 1) return engines_part(first);
    ws.RunBeside([&] { engines_part(first); }, [&] { engines_from(first + 1); });
  };
  auto run_engines = [&] {
    hw_start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - b_start).count();
    const ThreadAllocTally allocs_before = ThisThreadAllocTally();
    const ThreadUsage usage_before = trace ? ThreadUsage::Now() : ThreadUsage{};
    if (trace) cuda_times.engines_cpu_start = sched_getcpu();
    engines_from(0);
    const ThreadAllocTally allocs = ThisThreadAllocTally();
    cuda_times.engines_alloc_calls =
        allocs.device_calls + allocs.pinned_calls - allocs_before.device_calls - allocs_before.pinned_calls;
    cuda_times.engines_alloc_ns = allocs.device_ns + allocs.pinned_ns - allocs_before.device_ns - allocs_before.pinned_ns;
    if (trace) {
      const ThreadUsage usage = ThreadUsage::Now();
      cuda_times.engines_usage = {usage.cpu_ns - usage_before.cpu_ns, usage.voluntary - usage_before.voluntary,
                                  usage.involuntary - usage_before.involuntary};
      cuda_times.engines_cpu_end = sched_getcpu();
    }
  };
  auto run_cuda = [&] {
    ws.ParallelFor(cuda_n, 1, [&](int64_t begin, int64_t end) {
      const int64_t started = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - b_start).count();
      int64_t none = -1;
      cuda_times.first_start_ns.compare_exchange_strong(none, started);
      ++cuda_times.chunks;
      {
        std::lock_guard<std::mutex> lock(cuda_times.threads_mu);
        const std::thread::id me = std::this_thread::get_id();
        if (std::find(cuda_times.threads.begin(), cuda_times.threads.end(), me) == cuda_times.threads.end()) {
          cuda_times.threads.push_back(me);
          cuda_times.threads_first_start_ns += started;
        }
      }
      const auto prologue = Clock::now();
      cuda::DeviceGuard chunk_guard(device);
      Worker* w = d.TakeWorker();
      WorkerLease lease(d, w);  // exactly one GiveWorker, at the chunk's end
      CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(w->stream.get(), slot.start.get(), 0));
      cuda_times.prologue_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - prologue).count();
      for (int64_t k = begin; k < end; ++k) {
        const int i = d.cuda_list[static_cast<size_t>(k)];
        try {
          const auto image_start = Clock::now();
          CudaImageTrace t;
          d.DecodeCuda(*w, samples[i], sample_where(i), cuda_times, trace ? &t : nullptr);
          if (trace) {
            t.image = i;
            t.start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(image_start - b_start).count();
            t.end_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - b_start).count();
            std::lock_guard<std::mutex> lock(cuda_times.threads_mu);
            t.thread = static_cast<int>(std::find(cuda_times.threads.begin(), cuda_times.threads.end(),
                                                  std::this_thread::get_id()) -
                                        cuda_times.threads.begin());
            cuda_times.trace.push_back(t);
          }
        } catch (const NvjpegError& e) {
          if (!IsRefusal(e.status())) throw;
          fallback[i] = 1;
        }
      }
      // The chunk's images are done on the host here; what follows (the worker's event, the list)
      // is bookkeeping, timed apart (0.06-0.08 ms per call on the H100, 2026-11-26).
      const auto work_done = Clock::now();
      const int64_t work_t = std::chrono::duration_cast<std::chrono::nanoseconds>(work_done - b_start).count();
      int64_t prev_work = cuda_times.work_end_ns.load();
      while (prev_work < work_t && !cuda_times.work_end_ns.compare_exchange_weak(prev_work, work_t)) {
      }
      w->done.Record(w->stream.view());
      std::lock_guard<std::mutex> lock(used_mu);
      used.push_back(w);
      const auto now = Clock::now();
      cuda_times.epilogue_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(now - work_done).count();
      const int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(now - b_start).count();
      int64_t prev = cuda_end_ns.load();
      while (prev < t && !cuda_end_ns.compare_exchange_weak(prev, t)) {
      }
    });
  };
  if (hw_items > 0 && cuda_n > 0) {
    ws.RunBeside(run_engines, run_cuda);
  } else if (hw_items > 0) {
    run_engines();
  } else {
    run_cuda();
  }
  for (Worker* w : used) w->done.Wait(stream);  // a worker used twice: its last record covers both
  for (int p = 1; p < hw_items; ++p) {  // the engines' parts on their own streams
    if (d.hw_offsets[static_cast<size_t>(p)] < d.hw_offsets[static_cast<size_t>(p) + 1]) {
      CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), slot.hw[static_cast<size_t>(p)].end.get(), 0));
    }
  }
  const auto c_start = Clock::now();
  int64_t cuda_refused = 0;
  for (int i : d.cuda_list) {
    if (fallback[i]) {
      d.cpu_list.push_back(i);
      ++cuda_refused;
    }
  }
  refused += cuda_refused;

  // C: the CPU path into pinned staging, then one upload per sample.
  if (!d.cpu_list.empty()) {
    d.staging_offsets.resize(d.cpu_list.size());
    size_t total = 0;
    for (size_t k = 0; k < d.cpu_list.size(); ++k) {
      const GpuDecodeSample& s = samples[d.cpu_list[k]];
      d.staging_offsets[k] = total;
      total += (static_cast<size_t>(s.roi.h * s.roi.w * channels) + 63) / 64 * 64;
    }
    if (slot.staging.size() < total) {
      size_t cap = 1 << 16;
      while (cap < total) cap *= 2;
      slot.staging = Buffer::Allocate(MemoryKind::kPinned, cap);
    }
    uint8_t* base = static_cast<uint8_t*>(slot.staging.host_ptr());
    ws.ParallelFor(static_cast<int64_t>(d.cpu_list.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) cpu_decode(d.cpu_list[k], base + d.staging_offsets[k]);
    });
    for (size_t k = 0; k < d.cpu_list.size(); ++k) {
      const GpuDecodeSample& s = samples[d.cpu_list[k]];
      const size_t bytes = static_cast<size_t>(s.roi.h * s.roi.w * channels);
      if (bytes == 0) continue;
      CONVEYOR_CUDA_CHECK(
          cudaMemcpyAsync(s.out, base + d.staging_offsets[k], bytes, cudaMemcpyHostToDevice, stream.get()));
    }
  }
  slot.done.Record(stream);
  const auto c_end = Clock::now();

  if (trace) {
    std::ostringstream line;
    line << "conveyor: decoder trace: call " << call_index << ": engines " << hw_n << " images "
         << hw_start_ns.load() / 1000 << "-" << cuda_times.engines_end_ns.load() / 1000 << " us, allocations "
         << cuda_times.engines_alloc_calls << " (" << cuda_times.engines_alloc_ns / 1000 << " us), thread CPU "
         << cuda_times.engines_usage.cpu_ns / 1000 << " us, switches " << cuda_times.engines_usage.voluntary << "/"
         << cuda_times.engines_usage.involuntary << ", CPUs " << cuda_times.engines_cpu_start << ">"
         << cuda_times.engines_cpu_end << "; CUDA " << cuda_n
         << " images (thread:start-end us [kind parse/wait/host/issue us, allocations/us; attach us, host CPU us, "
            "switches voluntary/involuntary, CPUs start>end, lane busy]):";
    for (const CudaImageTrace& t : cuda_times.trace) {
      line << " " << t.thread << ":" << t.start_ns / 1000 << "-" << t.end_ns / 1000 << "[" << t.kind << " "
           << t.parse_ns / 1000 << "/" << t.wait_ns / 1000 << "/" << t.host_ns / 1000 << "/" << t.issue_ns / 1000
           << " " << t.alloc_calls << "/" << t.alloc_ns / 1000 << "; " << t.attach_ns / 1000 << " "
           << t.host_cpu_ns / 1000 << " " << t.voluntary << "/" << t.involuntary << " " << t.cpu_start << ">"
           << t.cpu_end << " " << t.lane_busy << "]";
    }
    std::cerr << line.str() << "\n";
  }
  const double cuda_s = cuda_end_ns.load() / 1e9;
  const double cuda_work_s = static_cast<double>(cuda_times.work_end_ns.load()) / 1e9;
  if (nv) d.UpdateBalance(cuda_s, static_cast<int64_t>(d.cuda_list.size()));
  batch.calls = 1;
  batch.cuda_seconds = cuda_s;
  batch.cuda_host_seconds = static_cast<double>(cuda_times.host_ns.load()) / 1e9;
  batch.cuda_pinned_wait_seconds = static_cast<double>(cuda_times.pinned_wait_ns.load()) / 1e9;
  batch.cuda_issue_seconds = static_cast<double>(cuda_times.issue_ns.load()) / 1e9;
  batch.cuda_first_start_seconds = static_cast<double>(std::max<int64_t>(0, cuda_times.first_start_ns.load())) / 1e9;
  batch.cuda_chunks = cuda_times.chunks.load();
  batch.cuda_work_seconds = cuda_work_s;
  batch.cuda_prologue_seconds = static_cast<double>(cuda_times.prologue_ns.load()) / 1e9;
  batch.cuda_epilogue_seconds = static_cast<double>(cuda_times.epilogue_ns.load()) / 1e9;
  batch.cuda_threads = static_cast<int64_t>(cuda_times.threads.size());
  batch.cuda_threads_first_start_seconds = static_cast<double>(cuda_times.threads_first_start_ns) / 1e9;
  batch.classify_seconds = std::chrono::duration<double>(b_start - a_start).count();
  batch.phase_b_seconds = std::chrono::duration<double>(c_start - b_start).count();
  batch.phase_c_seconds = std::chrono::duration<double>(c_end - c_start).count();
  batch.hw_start_seconds = static_cast<double>(hw_start_ns.load()) / 1e9;
  batch.slot_wait_seconds = std::chrono::duration<double>(waited - call_start).count();
  batch.slot_query_seconds = std::chrono::duration<double>(queried - call_start).count();
  batch.slot_pending_calls = slot_pending ? 1 : 0;
  batch.call_seconds = std::chrono::duration<double>(Clock::now() - call_start).count();
  for (int p = 0; p < hw_items; ++p) {
    if (d.hw_offsets[static_cast<size_t>(p)] == d.hw_offsets[static_cast<size_t>(p) + 1]) continue;
    const HwPart& part = slot.hw[static_cast<size_t>(p)];
    batch.hw_preallocations += part.preallocated ? 1 : 0;
    batch.hw_ready_wait_seconds += part.ready_wait_s;
    batch.hw_end_pending += part.end_pending_at_return ? 1 : 0;
  }
  batch.images_hardware = static_cast<int64_t>(d.hw_list.size());
  batch.images_cuda = static_cast<int64_t>(d.cuda_list.size()) - cuda_refused;
  batch.images_cpu = static_cast<int64_t>(d.cpu_list.size());
  batch.fallbacks = refused;
  std::lock_guard<std::mutex> lock(d.counters_mu);
  AddCallCounters(d.counters, batch);
  AddToProcessCounters(batch, d.counters);
}

}  // namespace conveyor::ops
