#include "operators/decoders/gpu_decoder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/memory/memory_resource.h"
#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"
#include "operators/decoders/nvjpeg/nvjpeg_loader.h"

namespace conveyor::ops {

using namespace nvjpeg;  // NOLINT: the nvJPEG names read best unqualified here
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kEma = 0.3;           // weight of the newest rate measurement
constexpr double kMinShare = 0.05;     // each path keeps this share so its rate stays measured
constexpr double kInitialHwShare = 0.9;  // engines first
constexpr unsigned kFlagsUpsamplingWithInterpolation = 32;  // NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION
// nvjpegChromaSubsampling_t values (a C enum): the subsampling the engines' buffers are
// preallocated for, from the widest of the batch.
constexpr int kCss444 = 0, kCss422 = 1, kCss420 = 2, kCssGray = 6;
int CssForBytes(int chroma_bytes_x2) {
  if (chroma_bytes_x2 <= 0 || chroma_bytes_x2 > 4) return kCss444;
  if (chroma_bytes_x2 == 4) return kCss422;
  if (chroma_bytes_x2 == 3) return kCss420;
  return kCssGray;
}


nvjpegOutputFormat_t FormatOf(DecodeColor c) {
  switch (c) {
    case DecodeColor::kRgb: return NVJPEG_OUTPUT_RGBI;
    case DecodeColor::kBgr: return NVJPEG_OUTPUT_BGRI;
    case DecodeColor::kGray: return NVJPEG_OUTPUT_Y;
  }
  return NVJPEG_OUTPUT_RGBI;
}

bool IsWhole(const GpuDecodeSample& s) {
  return s.roi.y == 0 && s.roi.x == 0 && s.roi.h == s.height && s.roi.w == s.width;
}

nvjpegImage_t ImageOf(const GpuDecodeSample& s, int channels) {
  nvjpegImage_t img{};
  img.channel[0] = s.out;
  img.pitch[0] = static_cast<size_t>(s.roi.w) * channels;
  return img;
}

}  // namespace

// One decoder kind (host Huffman or GPU Huffman) of a worker: its state and buffers. Two pinned
// buffers alternate so the host phase of the next image can run while the previous image's
// transfer still reads the other.
struct HybridLane {
  nvjpegJpegState_t state = nullptr;
  nvjpegBufferDevice_t device_buffer = nullptr;
  nvjpegBufferPinned_t pinned[2] = {nullptr, nullptr};
  cuda::Event pinned_done[2];
  int next = 0;
};

// Host-phase resources of one CUDA-backend worker. Workers are taken from a free list by each
// ParallelFor chunk (so no thread ids are needed) and own a stream for their device phases.
struct Worker {
  cuda::Stream stream;
  cuda::Event done;
  nvjpegJpegStream_t jpeg_stream = nullptr;
  nvjpegDecodeParams_t params = nullptr;
  HybridLane lanes[2];  // 0: NVJPEG_BACKEND_HYBRID (host Huffman), 1: GPU_HYBRID
  bool used = false;
};

// A sub-batch of the engines' images with its own nvJPEG state (hw_parts of them; one today, see
// Init). Its internal buffers are preallocated for the largest batch and image seen, so a batch
// that grows (the balance moved) does not make nvJPEG reallocate inside the decode, which
// synchronises the device: without it the engines gave 11.3k images/s on the H100, with it 25.4k.
struct HwPart {
  nvjpegJpegState_t state = nullptr;
  cuda::Event start, end;  // timing on the stream
  bool pending = false;
  int64_t images = 0;
  double host_s = 0;
  int prealloc_n = 0, prealloc_h = 0, prealloc_w = 0, prealloc_bytes_x2 = 0;
  bool prealloc_failed = false;
  // This call's share of the counters, added by Decode under its one lock at the end.
  bool preallocated = false;
  double ready_wait_s = 0;
  std::vector<const unsigned char*> data;
  std::vector<size_t> lengths;
  std::vector<nvjpegImage_t> images_out;
  std::vector<nvjpegDecodeParams_t> params;
};

struct SlotState {
  std::vector<HwPart> hw;                       // sub-batches of the engines' images
  std::vector<nvjpegJpegStream_t> hw_streams;  // per sample: headers for the support check
  std::vector<nvjpegDecodeParams_t> hw_params;
  cuda::Event done;             // end of this slot's last Decode on ws.stream()
  cuda::Event start;            // outputs allocated: the workers' streams wait for it
  cuda::Event ready;            // ws.stream()'s work before the call: the engines' host waits for it
  Buffer staging;               // pinned, CPU-path outputs
};

struct GpuDecoder::Impl {
  GpuDecoderOptions options;
  const NvjpegLibrary* lib = nullptr;
  // Each handle's allocators (declared before the handles: they outlive them); made in Init.
  std::unique_ptr<NvjpegAllocators> cuda_alloc, hw_alloc;
  nvjpegHandle_t handle = nullptr;     // CUDA backend
  nvjpegHandle_t hw_handle = nullptr;  // engines
  nvjpegJpegDecoder_t decoders[2] = {nullptr, nullptr};
  std::vector<std::unique_ptr<SlotState>> slots;
  std::mutex workers_mu;
  std::vector<std::unique_ptr<Worker>> workers;  // all
  std::vector<Worker*> free_workers;
  double hw_rate = 0, cuda_rate = 0;  // images/s, EMA
  double hw_share = kInitialHwShare;
  mutable std::mutex counters_mu;
  GpuDecoderCounters counters;
  // Per-call scratch, reused.
  std::vector<uint8_t> engine_ok;
  std::vector<int> hw_list, cuda_list, cpu_list;
  std::vector<size_t> staging_offsets;
  int hw_parts = 0;  // sub-batches of the engines' images (see HwPart); 0 until Init
  bool engines_wait = true;  // CONVEYOR_JPEG_ENGINES_WAIT

  const NvjpegApi& api() const { return lib->api(); }
  void Init();
  void Destroy() noexcept;
  SlotState& Slot(int s);
  Worker* TakeWorker();
  void GiveWorker(Worker* w);
  void DecodeCuda(Worker& w, const GpuDecodeSample& s, int i, const Workspace& ws, const std::string& where);
  void DecodeHardware(SlotState& slot, int part, int begin, int end, const std::vector<GpuDecodeSample>& samples,
                      StreamView stream, const std::string& where);
  void ReadEngineTimes(SlotState& slot);
  void UpdateBalance(double cuda_seconds, int64_t cuda_images);
  void Unavailable(const std::string& why);
};

void GpuDecoder::Impl::Unavailable(const std::string& why) {
  std::cerr << "conveyor: decoders (device gpu): nvJPEG unavailable, decoding on the CPU and uploading: " << why
            << "\n";
  std::lock_guard<std::mutex> lock(counters_mu);
  counters.nvjpeg_available = false;
  counters.unavailable_reason = why;
}

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

// CONVEYOR_NVJPEG_ENGINES_SLACK: "0" gives the engines' handle exactly the device memory nvJPEG
// asks for, without the slack of nvjpeg_allocators.h (the CUDA backend's handle keeps it): to
// measure what the slack costs there (64 KiB on each of the engines' buffers) and to check with
// memcheck whether the engines' colour conversion needs it. "1" or unset: slack on both.
bool EnginesSlackByEnv() {
  return SwitchFromEnv("CONVEYOR_NVJPEG_ENGINES_SLACK", "no device slack on the engines' allocations",
                       "64 KiB of slack on every nvJPEG device allocation");
}

void GpuDecoder::Impl::Init() {
  counters.hw_share = 0;
  const bool engines_allowed = EnginesAllowedByEnv();
  engines_wait = EnginesWaitByEnv();
  const bool engines_slack = EnginesSlackByEnv();
  if (options.paths == DecodePaths::kCpuOnly) return;
  std::string why;
  lib = SharedNvjpeg(&why);
  if (lib == nullptr) return Unavailable(why);
  if (options.device < 0) CONVEYOR_CUDA_CHECK(cudaGetDevice(&options.device));
  cuda::DeviceGuard guard(options.device);
  cuda_alloc = std::make_unique<NvjpegAllocators>(true);
  hw_alloc = std::make_unique<NvjpegAllocators>(engines_slack);
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
  nvjpegStatus_t hw = flags == 0 ? NVJPEG_STATUS_INVALID_PARAMETER
                                  : api().nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, hw_alloc->device(),
                                                           hw_alloc->pinned(), flags, &hw_handle);
  if (hw != NVJPEG_STATUS_SUCCESS) {
    hw_handle = nullptr;
    hw = api().nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, hw_alloc->device(), hw_alloc->pinned(), 0, &hw_handle);
  }
  if (hw != NVJPEG_STATUS_SUCCESS) {
    hw_handle = nullptr;
    counters.unavailable_reason = std::string("no hardware JPEG engines: nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE): ") +
                                  StatusName(hw);
    return;
  }
  counters.hardware_available = true;
  // One sub-batch: on the H100 (nvJPEG 13) 2, 4 or 8 sub-batches decoded from several threads at
  // once crashed or hung, while one batch with preallocated buffers reached 25.4k images/s.
  hw_parts = 1;
  hw_share = options.hw_load >= 0 ? options.hw_load : kInitialHwShare;
  if (options.paths == DecodePaths::kHardwareOnly) hw_share = 1;
  counters.hw_share = hw_share;
}

void GpuDecoder::Impl::Destroy() noexcept {
  if (lib == nullptr) return;
  const NvjpegApi& a = api();
  for (auto& slot : slots) {
    for (auto p : slot->hw_params) a.nvjpegDecodeParamsDestroy(p);
    for (auto js : slot->hw_streams) a.nvjpegJpegStreamDestroy(js);
    for (HwPart& part : slot->hw) {
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
      for (HwPart& part : slot->hw) {
        part.start = cuda::Event::Create(/*timing=*/true);
        part.end = cuda::Event::Create(/*timing=*/true);
        CONVEYOR_NVJPEG_CHECK(api().nvjpegJpegStateCreate(hw_handle, &part.state), "engines");
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
    for (int b = 0; b < 2; ++b) {
      CONVEYOR_NVJPEG_CHECK(a.nvjpegBufferPinnedCreateV2(handle, cuda_alloc->pinned(), &lane.pinned[b]), "CUDA backend worker");
      lane.pinned_done[b] = cuda::Event::Create();
    }
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

// One image through the decoupled API: host phase on this thread, device phases on the worker's
// stream (which already waits for ws.stream(), where the outputs were allocated).
void GpuDecoder::Impl::DecodeCuda(Worker& w, const GpuDecodeSample& s, int i, const Workspace& ws,
                                  const std::string& where) {
  (void)ws;
  const NvjpegApi& a = api();
  const int kind = s.height * s.width > options.hybrid_huffman_threshold ? 1 : 0;
  HybridLane& lane = w.lanes[kind];
  CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamParse(handle, s.data, s.size, 0, 0, w.jpeg_stream), where);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetOutputFormat(w.params, FormatOf(options.color)), where);
  if (IsWhole(s)) {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(w.params, 0, 0, -1, -1), where);
  } else {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(w.params, static_cast<int>(s.roi.x), static_cast<int>(s.roi.y),
                                                     static_cast<int>(s.roi.w), static_cast<int>(s.roi.h)),
                          where);
  }
  // The pinned buffer we are about to refill may still feed the transfer of an earlier image.
  const int b = lane.next;
  lane.next ^= 1;
  lane.pinned_done[b].Synchronize();
  CONVEYOR_NVJPEG_CHECK(a.nvjpegStateAttachPinnedBuffer(lane.state, lane.pinned[b]), where);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeJpegHost(handle, decoders[kind], lane.state, w.params, w.jpeg_stream), where);
  CONVEYOR_NVJPEG_CHECK(
      a.nvjpegDecodeJpegTransferToDevice(handle, decoders[kind], lane.state, w.jpeg_stream, w.stream.get()), where);
  lane.pinned_done[b].Record(w.stream.view());
  nvjpegImage_t img = ImageOf(s, DecodeChannels(options.color));
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeJpegDevice(handle, decoders[kind], lane.state, &img, w.stream.get()), where);
  (void)i;
}

void GpuDecoder::Impl::DecodeHardware(SlotState& slot, int p, int begin, int end,
                                      const std::vector<GpuDecodeSample>& samples, StreamView stream,
                                      const std::string& where) {
  const NvjpegApi& a = api();
  HwPart& part = slot.hw[static_cast<size_t>(p)];
  part.preallocated = false;
  part.ready_wait_s = 0;
  const int n = end - begin;
  part.data.resize(n);
  part.lengths.resize(n);
  part.images_out.resize(n);
  part.params.resize(n);
  bool any_roi = false;
  int max_h = 0, max_w = 0, max_bytes_x2 = 0;
  for (int k = 0; k < n; ++k) {
    const GpuDecodeSample& s = samples[hw_list[begin + k]];
    part.data[k] = s.data;
    part.lengths[k] = s.size;
    part.images_out[k] = ImageOf(s, DecodeChannels(options.color));
    part.params[k] = slot.hw_params[hw_list[begin + k]];
    any_roi |= !IsWhole(s);
    max_h = std::max(max_h, static_cast<int>(s.height));
    max_w = std::max(max_w, static_cast<int>(s.width));
    max_bytes_x2 = std::max(max_bytes_x2, s.chroma_bytes_x2 > 0 ? s.chroma_bytes_x2 : 6);
  }
  const std::string what = where + ": engines, " + std::to_string(n) + " images";
  if (a.nvjpegDecodeBatchedPreAllocate != nullptr && !part.prealloc_failed &&
      (n > part.prealloc_n || max_h > part.prealloc_h || max_w > part.prealloc_w ||
       max_bytes_x2 > part.prealloc_bytes_x2)) {
    // Grow with headroom so the balance moving by a few images does not reallocate again; chroma
    // planes for the widest subsampling seen (4:2:0 photos need half of 4:4:4's).
    part.prealloc_n = std::max(part.prealloc_n, (n * 5 / 4 + 7) / 8 * 8);
    part.prealloc_h = std::max(part.prealloc_h, (max_h + 63) / 64 * 64);
    part.prealloc_w = std::max(part.prealloc_w, (max_w + 63) / 64 * 64);
    part.prealloc_bytes_x2 = std::max(part.prealloc_bytes_x2, max_bytes_x2);
    part.preallocated = true;
    const nvjpegStatus_t st =
        a.nvjpegDecodeBatchedPreAllocate(hw_handle, part.state, part.prealloc_n, part.prealloc_w, part.prealloc_h,
                                         CssForBytes(part.prealloc_bytes_x2), FormatOf(options.color));
    if (st != NVJPEG_STATUS_SUCCESS) {
      // Preallocation only saves reallocations: decode without it (slower when batches grow),
      // and say so once.
      part.prealloc_failed = true;
      std::cerr << "conveyor: " << what << ": nvjpegDecodeBatchedPreAllocate failed (" << StatusName(st)
                << "); the engines' buffers grow on demand\n";
    }
  }
  // The engines are not trusted to wait for work enqueued on `stream` before this call (what last
  // wrote or read the outputs' memory: a previous kernel, an allocation's reuse, a fill): the host
  // waits for it first (recorded at the call's start, so phase A ran meanwhile). Under the H100's
  // sanitizer sweep (2026-11-25), with the GPU loaded by other processes, engine-decoded images
  // came back as the test's 0xA5 fill enqueued before the call; CUDA-backend images never did
  // (their streams wait for an event). gpu_decoder_gpu_test's EnginesWaitForEarlierWorkOnTheStream
  // makes that deterministic with a spin kernel.
  const auto w0 = Clock::now();
  if (engines_wait) slot.ready.Synchronize();
  const auto t0 = Clock::now();
  part.ready_wait_s = std::chrono::duration<double>(t0 - w0).count();
  part.start.Record(stream);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedInitialize(hw_handle, part.state, n, 1, FormatOf(options.color)), what);
  if (any_roi) {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedEx(hw_handle, part.state, part.data.data(), part.lengths.data(),
                                                  part.images_out.data(), part.params.data(), stream.get()),
                          what);
  } else {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatched(hw_handle, part.state, part.data.data(), part.lengths.data(),
                                                part.images_out.data(), stream.get()),
                          what);
  }
  part.end.Record(stream);
  part.host_s = std::chrono::duration<double>(Clock::now() - t0).count();
  part.images = n;
  part.pending = true;
}

// The engines' time of a slot's previous batch, read at the slot's next use (its events have
// completed by then: Decode waits for slot.done first), never waited for. The sub-batches run side
// by side: the engines' rate is their images over the longest one.
void GpuDecoder::Impl::ReadEngineTimes(SlotState& slot) {
  double longest = 0;
  int64_t images = 0;
  for (HwPart& part : slot.hw) {
    if (!part.pending || !part.end.Query()) continue;
    const double gpu_s = cuda::Event::ElapsedMs(part.start, part.end) / 1e3;
    longest = std::max({longest, gpu_s, part.host_s});
    images += part.images;
    part.pending = false;
    std::lock_guard<std::mutex> lock(counters_mu);
    ++counters.hw_batches;
    counters.hw_host_seconds += part.host_s;
    counters.hw_gpu_seconds += gpu_s;
  }
  if (longest > 0 && images > 0) {
    const double r = static_cast<double>(images) / longest;
    hw_rate = hw_rate == 0 ? r : (1 - kEma) * hw_rate + kEma * r;
  }
}

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
  counters.cuda_seconds += cuda_seconds;
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

void AddToProcessCounters(const GpuDecoderCounters& batch, const GpuDecoderCounters& latest) {
  std::lock_guard<std::mutex> lock(process_counters_mu);
  process_counters.images_hardware += batch.images_hardware;
  process_counters.images_cuda += batch.images_cuda;
  process_counters.images_cpu += batch.images_cpu;
  process_counters.fallbacks += batch.fallbacks;
  process_counters.nvjpeg_available = latest.nvjpeg_available;
  process_counters.hardware_available = latest.hardware_available;
  process_counters.hw_share = latest.hw_share;
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
  if (impl_->hw_alloc != nullptr) {
    c.engines_memory = impl_->hw_alloc->memory();
    c.engines_slack = impl_->hw_alloc->slack() > 0;
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
  slot.done.Synchronize();
  const auto waited = Clock::now();
  d.ReadEngineTimes(slot);
  auto sample_where = [&](int i) { return where + ": sample " + std::to_string(i) + " (" + describe(i) + ")"; };
  const int channels = DecodeChannels(d.options.color);
  const bool nv = d.lib != nullptr;
  const bool engines = nv && d.hw_handle != nullptr && d.options.paths != DecodePaths::kCudaOnly &&
                       d.options.paths != DecodePaths::kCpuOnly;
  if (engines && d.engines_wait) slot.ready.Record(stream);

  // A: classify. The engines' support check needs each header parsed (cheap, in parallel).
  const auto a_start = Clock::now();
  d.engine_ok.assign(n, 0);
  if (engines) {
    const NvjpegApi& a = d.api();
    while (static_cast<int>(slot.hw_streams.size()) < n) {
      nvjpegJpegStream_t js = nullptr;
      nvjpegDecodeParams_t p = nullptr;
      CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(d.hw_handle, &js), where);
      slot.hw_streams.push_back(js);
      CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsCreate(d.hw_handle, &p), where);
      slot.hw_params.push_back(p);
    }
    const nvjpegOutputFormat_t format = FormatOf(d.options.color);
    ws.ParallelFor(n, 8, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const int i = static_cast<int>(k);
        const GpuDecodeSample& s = samples[i];
        if (!s.is_jpeg) continue;
        // A header the engines cannot parse goes to the CUDA backend, which reports it properly.
        if (a.nvjpegJpegStreamParseHeader(d.hw_handle, s.data, s.size, slot.hw_streams[i]) != NVJPEG_STATUS_SUCCESS) {
          continue;
        }
        nvjpegDecodeParams_t p = slot.hw_params[i];
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
          CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedSupportedEx(d.hw_handle, slot.hw_streams[i], p, &unsupported),
                                sample_where(i));
        } else if (IsWhole(s)) {
          CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeBatchedSupported(d.hw_handle, slot.hw_streams[i], &unsupported),
                                sample_where(i));
        }
        d.engine_ok[i] = unsupported == 0 ? 1 : 0;  // the documented "0 = supported"
      }
    });
  }
  d.hw_list.clear();
  d.cuda_list.clear();
  d.cpu_list.clear();
  int64_t refused = 0;
  double acc = 0;
  for (int i = 0; i < n; ++i) {
    const GpuDecodeSample& s = samples[i];
    if (!nv || !s.is_jpeg || d.options.paths == DecodePaths::kCpuOnly || s.roi.h == 0 || s.roi.w == 0) {
      d.cpu_list.push_back(i);
    } else if (d.engine_ok[i]) {
      // Bresenham-style interleaving keeps both paths' shares of big and small images alike.
      acc += d.hw_share;
      if (acc >= 1 - 1e-9) {
        acc -= 1;
        d.hw_list.push_back(i);
      } else {
        d.cuda_list.push_back(i);
      }
    } else if (d.options.paths == DecodePaths::kHardwareOnly) {
      d.cpu_list.push_back(i);
      ++refused;
    } else {
      d.cuda_list.push_back(i);
    }
  }

  // B: engines (item 0) and CUDA backend (one item per image), in parallel.
  std::vector<uint8_t> fallback(n, 0);
  std::mutex used_mu;
  std::vector<Worker*> used;
  // The engines' images in up to hw_parts contiguous sub-batches of at least 16 images.
  const int hw_n = static_cast<int>(d.hw_list.size());
  const int hw_items = hw_n == 0 ? 0 : std::clamp(hw_n / 16, 1, std::max(d.hw_parts, 1));
  const int64_t items = hw_items + static_cast<int64_t>(d.cuda_list.size());
  const auto b_start = Clock::now();
  std::atomic<int64_t> cuda_end_ns{0}, hw_start_ns{0};
  if (!d.cuda_list.empty()) slot.start.Record(stream);
  if (items > 0) {
    const int device = d.options.device;
    ws.ParallelFor(items, 1, [&](int64_t begin, int64_t end) {
      cuda::DeviceGuard chunk_guard(device);
      Worker* w = nullptr;
      std::optional<WorkerLease> lease;
      for (int64_t item = begin; item < end; ++item) {
        if (item < hw_items) {
          const int p = static_cast<int>(item);
          hw_start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - b_start).count();
          d.DecodeHardware(slot, p, hw_n * p / hw_items, hw_n * (p + 1) / hw_items, samples, stream, where);
          continue;
        }
        const int i = d.cuda_list[item - hw_items];
        if (w == nullptr) {
          w = d.TakeWorker();
          lease.emplace(d, w);  // built in place: exactly one GiveWorker, at the chunk's end
          CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(w->stream.get(), slot.start.get(), 0));
        }
        try {
          d.DecodeCuda(*w, samples[i], i, ws, sample_where(i));
        } catch (const NvjpegError& e) {
          if (!IsRefusal(e.status())) throw;
          fallback[i] = 1;
        }
      }
      if (w != nullptr) {
        w->done.Record(w->stream.view());
        std::lock_guard<std::mutex> lock(used_mu);
        used.push_back(w);
        const int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - b_start).count();
        int64_t prev = cuda_end_ns.load();
        while (prev < t && !cuda_end_ns.compare_exchange_weak(prev, t)) {
        }
      }
    });
  }
  for (Worker* w : used) w->done.Wait(stream);  // a worker used twice: its last record covers both
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

  const double cuda_s = cuda_end_ns.load() / 1e9;
  if (nv) d.UpdateBalance(cuda_s, static_cast<int64_t>(d.cuda_list.size()));
  std::lock_guard<std::mutex> lock(d.counters_mu);
  ++d.counters.calls;
  d.counters.classify_seconds += std::chrono::duration<double>(b_start - a_start).count();
  d.counters.phase_b_seconds += std::chrono::duration<double>(c_start - b_start).count();
  d.counters.phase_c_seconds += std::chrono::duration<double>(c_end - c_start).count();
  d.counters.hw_start_seconds += static_cast<double>(hw_start_ns.load()) / 1e9;
  d.counters.slot_wait_seconds += std::chrono::duration<double>(waited - call_start).count();
  d.counters.call_seconds += std::chrono::duration<double>(Clock::now() - call_start).count();
  for (int p = 0; p < hw_items; ++p) {
    const HwPart& part = slot.hw[static_cast<size_t>(p)];
    d.counters.hw_preallocations += part.preallocated ? 1 : 0;
    d.counters.hw_ready_wait_seconds += part.ready_wait_s;
  }
  GpuDecoderCounters batch;
  batch.images_hardware = static_cast<int64_t>(d.hw_list.size());
  batch.images_cuda = static_cast<int64_t>(d.cuda_list.size()) - cuda_refused;
  batch.images_cpu = static_cast<int64_t>(d.cpu_list.size());
  batch.fallbacks = refused;
  d.counters.images_hardware += batch.images_hardware;
  d.counters.images_cuda += batch.images_cuda;
  d.counters.images_cpu += batch.images_cpu;
  d.counters.fallbacks += batch.fallbacks;
  AddToProcessCounters(batch, d.counters);
}

}  // namespace conveyor::ops
