// GpuDecoder's set-up: the environment's switches, the nvJPEG handles (each with its own
// allocators), the per-slot and per-worker nvJPEG states and buffers, and their release.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "operators/decoders/gpu_decoder_impl.h"

namespace conveyor::ops {

void GpuDecoder::Impl::Unavailable(const std::string& why) {
  std::cerr << "conveyor: decoders (device gpu): nvJPEG unavailable, decoding on the CPU and uploading: " << why
            << "\n";
  std::lock_guard<std::mutex> lock(counters_mu);
  counters.nvjpeg_available = false;
  counters.unavailable_reason = why;
}

namespace {

// A "0"/"1" switch from the environment (unset: 1); anything else is refused, naming the variable,
// what each value means and what came.
bool SwitchFromEnv(const char* name, const char* off, const char* on) {
  const char* v = std::getenv(name);
  if (v == nullptr || std::strcmp(v, "1") == 0) return true;
  if (std::strcmp(v, "0") == 0) return false;
  throw Error(std::string(name) + ": expected 0 (" + off + ") or 1 (" + on + "), got \"" + v + "\"");
}

// CONVEYOR_JPEG_ENGINES: "0" turns the hardware JPEG engines off (the CUDA backend takes their
// images), "1" or unset leaves them to the decoder.
bool EnginesAllowedByEnv() { return SwitchFromEnv("CONVEYOR_JPEG_ENGINES", "hardware JPEG engines off", "on"); }

// CONVEYOR_JPEG_ENGINES_WAIT: "0" lets the engines' call go without first waiting on the host for
// the work enqueued on the stream before the call (see DecodeHardware) — for measuring what the
// wait costs and whether this nvJPEG orders the engines on the stream by itself; earlier work may
// then overwrite engine-decoded images. "1" or unset: the wait.
bool EnginesWaitByEnv() {
  return SwitchFromEnv("CONVEYOR_JPEG_ENGINES_WAIT", "engines do not wait for earlier stream work",
                       "they wait");
}

// CONVEYOR_JPEG_HW_PIPELINE: "0" creates the engines' handle with NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE
// (nvJPEG's batched hardware decode then buffers no additional images), for measuring whether that
// buffering is what makes the engines' call hold its thread; "1" or unset: nvJPEG's default.
bool EnginesPipelineByEnv() {
  return SwitchFromEnv("CONVEYOR_JPEG_HW_PIPELINE", "NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE on the engines' handle",
                       "nvJPEG's default");
}

// A whole number from the environment, `fallback` when unset; outside [lo, hi] or not a whole number
// is refused, naming the variable, the range and what came.
int WholeNumberFromEnv(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (end == v || *end != 0 || n < lo || n > hi) {
    throw Error(std::string(name) + ": expected a whole number from " + std::to_string(lo) + " to " +
                std::to_string(hi) + ", got \"" + v + "\"");
  }
  return static_cast<int>(n);
}

// CONVEYOR_JPEG_CUDA_PINNED: pinned buffers per CUDA-backend worker and decoder kind, 2 to 16
// (default 2): how many images' host phases a worker may run ahead of their transfers.
int CudaPinnedBuffersByEnv() { return WholeNumberFromEnv("CONVEYOR_JPEG_CUDA_PINNED", 2, 2, 16); }

// CONVEYOR_JPEG_TRACE: how many calls (after the first 20) print their CUDA images' and engines'
// times on stderr, 0 to 1000 (default 0).
int TraceCallsByEnv() { return WholeNumberFromEnv("CONVEYOR_JPEG_TRACE", 0, 0, 1000); }

// CONVEYOR_JPEG_ENGINE_THREADS: how many nvJPEG hardware handles (and threads during a call) share
// the engines' images, 1 to 4 (default 2: 41-43k images/s where 1 gave 26-28k and 3 gave 37k,
// H100, 2026-11-26).
int EngineThreadsByEnv() { return WholeNumberFromEnv("CONVEYOR_JPEG_ENGINE_THREADS", 2, 1, 4); }

}  // namespace

void GpuDecoder::Impl::Init() {
  counters.hw_share = 0;
  const bool engines_allowed = EnginesAllowedByEnv();
  engines_wait = EnginesWaitByEnv();
  cuda_pinned_buffers = CudaPinnedBuffersByEnv();
  trace_calls = TraceCallsByEnv();
  const int engine_threads = EngineThreadsByEnv();
  const unsigned hw_flags = EnginesPipelineByEnv() ? 0u : kFlagsHwDecodeNoPipeline;
  if (options.paths == DecodePaths::kCpuOnly) return;
  std::string why;
  lib = SharedNvjpeg(&why);
  if (lib == nullptr) return Unavailable(why);
  if (options.device < 0) CONVEYOR_CUDA_CHECK(cudaGetDevice(&options.device));
  cuda::DeviceGuard guard(options.device);
  cuda_alloc = std::make_unique<NvjpegAllocators>(true);
  hw_alloc = std::make_unique<NvjpegAllocators>(true);
  const unsigned flags = options.interpolated_upsampling ? kFlagsUpsamplingWithInterpolation : 0;
  try {
    if (flags == 0 ||
        api().nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, cuda_alloc->device(), cuda_alloc->pinned(), flags, &handle) !=
            NVJPEG_STATUS_SUCCESS) {
      handle = nullptr;
      CONVEYOR_NVJPEG_CHECK(api().nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, cuda_alloc->device(), cuda_alloc->pinned(), 0, &handle),
                            lib->path());
    }
    CONVEYOR_NVJPEG_CHECK(api().nvjpegDecoderCreate(handle, NVJPEG_BACKEND_HYBRID, &decoders[0]), lib->path());
    CONVEYOR_NVJPEG_CHECK(api().nvjpegDecoderCreate(handle, NVJPEG_BACKEND_GPU_HYBRID, &decoders[1]), lib->path());
  } catch (const Error& e) {
    Destroy();
    lib = nullptr;
    return Unavailable(e.what());
  }
  counters.nvjpeg_available = true;
  if (options.paths == DecodePaths::kCudaOnly) return;
  if (!engines_allowed) {
    counters.unavailable_reason = "hardware JPEG engines turned off (CONVEYOR_JPEG_ENGINES=0)";
    return;
  }
  // GPUs without JPEG engines refuse the hardware backend; that is not an error.
  unsigned hw_create_flags = flags | hw_flags;
  nvjpegStatus_t hw = flags == 0 ? NVJPEG_STATUS_INVALID_PARAMETER
                                  : api().nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, hw_alloc->device(),
                                                           hw_alloc->pinned(), hw_create_flags, &hw_handle);
  if (hw != NVJPEG_STATUS_SUCCESS) {
    hw_handle = nullptr;
    hw_create_flags = hw_flags;
    hw = api().nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, hw_alloc->device(), hw_alloc->pinned(), hw_flags,
                                &hw_handle);
  }
  if (hw != NVJPEG_STATUS_SUCCESS) {
    hw_handle = nullptr;
    counters.unavailable_reason = std::string("no hardware JPEG engines: nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE): ") +
                                  StatusName(hw);
    return;
  }
  counters.hardware_available = true;
  counters.hw_no_pipeline = hw_flags != 0;
  if (api().nvjpegGetHardwareDecoderInfo != nullptr) {
    unsigned engines = 0, cores = 0;
    if (api().nvjpegGetHardwareDecoderInfo(hw_handle, &engines, &cores) == NVJPEG_STATUS_SUCCESS) {
      counters.hw_engines = static_cast<int>(engines);
      counters.hw_cores_per_engine = static_cast<int>(cores);
    }
  }
  // More handles for the engines' parts (HwPart): a handle that cannot be made leaves fewer parts.
  for (int p = 1; p < engine_threads; ++p) {
    auto alloc = std::make_unique<NvjpegAllocators>(true);
    nvjpegHandle_t h = nullptr;
    if (api().nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, alloc->device(), alloc->pinned(), hw_create_flags, &h) !=
        NVJPEG_STATUS_SUCCESS) {
      break;
    }
    hw_more_alloc.push_back(std::move(alloc));
    hw_more.push_back(h);
  }
  hw_parts = 1 + static_cast<int>(hw_more.size());
  counters.hw_parts = hw_parts;
  hw_share = options.hw_load >= 0 ? options.hw_load : kInitialHwShare;
  if (options.paths == DecodePaths::kHardwareOnly) hw_share = 1;
  counters.hw_share = hw_share;
}

void GpuDecoder::Impl::Destroy() noexcept {
  if (lib == nullptr) return;
  const NvjpegApi& a = api();
  for (auto& slot : slots) {
    for (auto& per_part : slot->hw_params) {
      for (auto p : per_part) a.nvjpegDecodeParamsDestroy(p);
    }
    for (auto& per_part : slot->hw_streams) {
      for (auto js : per_part) a.nvjpegJpegStreamDestroy(js);
    }
    for (HwPart& part : slot->hw) {
      if (part.stream) CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(part.stream.get()));
      if (part.state != nullptr) a.nvjpegJpegStateDestroy(part.state);
    }
  }
  for (auto& w : workers) {
    if (w->stream) CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(w->stream.get()));
    for (HybridLane& lane : w->lanes) {
      if (lane.state != nullptr) a.nvjpegJpegStateDestroy(lane.state);
      if (lane.device_buffer != nullptr) a.nvjpegBufferDeviceDestroy(lane.device_buffer);
      for (auto p : lane.pinned) {
        if (p != nullptr) a.nvjpegBufferPinnedDestroy(p);
      }
    }
    if (w->params != nullptr) a.nvjpegDecodeParamsDestroy(w->params);
    if (w->jpeg_stream != nullptr) a.nvjpegJpegStreamDestroy(w->jpeg_stream);
  }
  workers.clear();
  for (auto d : decoders) {
    if (d != nullptr) a.nvjpegDecoderDestroy(d);
  }
  for (auto h : hw_more) a.nvjpegDestroy(h);
  hw_more.clear();
  if (hw_handle != nullptr) a.nvjpegDestroy(hw_handle);
  if (handle != nullptr) a.nvjpegDestroy(handle);
  handle = hw_handle = nullptr;
}

SlotState& GpuDecoder::Impl::Slot(int s) {
  while (static_cast<int>(slots.size()) <= s) {
    auto slot = std::make_unique<SlotState>();
    slot->done = cuda::Event::Create();
    slot->start = cuda::Event::Create();
    slot->ready = cuda::Event::Create();
    if (hw_handle != nullptr) {
      slot->hw.resize(static_cast<size_t>(hw_parts));
      slot->hw_streams.resize(static_cast<size_t>(hw_parts));
      slot->hw_params.resize(static_cast<size_t>(hw_parts));
      for (int p = 0; p < hw_parts; ++p) {
        HwPart& part = slot->hw[static_cast<size_t>(p)];
        part.start = cuda::Event::Create(/*timing=*/true);
        part.end = cuda::Event::Create(/*timing=*/true);
        if (p > 0) part.stream = cuda::Stream::Create();
        CONVEYOR_NVJPEG_CHECK(api().nvjpegJpegStateCreate(HwHandle(p), &part.state), "engines");
      }
    }
    slots.push_back(std::move(slot));
  }
  return *slots[s];
}

Worker* GpuDecoder::Impl::TakeWorker() {
  {
    std::lock_guard<std::mutex> lock(workers_mu);
    if (!free_workers.empty()) {
      Worker* w = free_workers.back();
      free_workers.pop_back();
      return w;
    }
  }
  // A new worker: only while the number of concurrent chunks grows (warm-up).
  auto w = std::make_unique<Worker>();
  w->stream = cuda::Stream::Create();
  w->done = cuda::Event::Create();
  const NvjpegApi& a = api();
  CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(handle, &w->jpeg_stream), "CUDA backend worker");
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsCreate(handle, &w->params), "CUDA backend worker");
  for (int k = 0; k < 2; ++k) {
    HybridLane& lane = w->lanes[k];
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecoderStateCreate(handle, decoders[k], &lane.state), "CUDA backend worker");
    CONVEYOR_NVJPEG_CHECK(a.nvjpegBufferDeviceCreateV2(handle, cuda_alloc->device(), &lane.device_buffer), "CUDA backend worker");
    lane.pinned.assign(static_cast<size_t>(cuda_pinned_buffers), nullptr);
    lane.pinned_done.resize(static_cast<size_t>(cuda_pinned_buffers));
    for (int b = 0; b < cuda_pinned_buffers; ++b) {
      CONVEYOR_NVJPEG_CHECK(a.nvjpegBufferPinnedCreateV2(handle, cuda_alloc->pinned(), &lane.pinned[b]), "CUDA backend worker");
      lane.pinned_done[b] = cuda::Event::Create();
    }
    lane.device_done = cuda::Event::Create();
    CONVEYOR_NVJPEG_CHECK(a.nvjpegStateAttachDeviceBuffer(lane.state, lane.device_buffer), "CUDA backend worker");
  }
  std::lock_guard<std::mutex> lock(workers_mu);
  workers.push_back(std::move(w));
  return workers.back().get();
}

void GpuDecoder::Impl::GiveWorker(Worker* w) {
  std::lock_guard<std::mutex> lock(workers_mu);
  free_workers.push_back(w);
}

}  // namespace conveyor::ops
