#include "operators/decoders/engines_path.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <utility>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "operators/decoders/decode_balance.h"
#include "operators/decoders/engines_path_state.h"

namespace conveyor::ops {

namespace {

// The device's memory in use (total - free), for the driver-memory windows (NvjpegMemory); 0 when
// the driver does not answer.
int64_t DeviceBytesInUse() {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return 0;
  return static_cast<int64_t>(total - free_bytes);
}

// The call of an image of the router's kOther group.
int OtherCallOf(ChromaSubsampling s) {
  switch (s) {
    case ChromaSubsampling::k444: return kCall444;
    case ChromaSubsampling::k422: return kCall422;
    case ChromaSubsampling::kGray: return kCallGray;
    default: return kCallOtherCss;
  }
}

const char* CallName(int kind) {
  switch (kind) {
    case kCall444: return " (4:4:4)";
    case kCall422: return " (4:2:2)";
    case kCallGray: return " (gray)";
    case kCallOtherCss: return " (4:4:0, 4:1:1, other)";
    case kCallLarge: return " (large)";
    default: return "";
  }
}

// nvjpegChromaSubsampling_t of a call's images, for its preallocation (the largest for mixed kinds).
int CssOf(int kind) {
  switch (kind) {
    case kCall420: return kCss420;
    case kCall422: return kCss422;
    case kCallGray: return kCssGray;
    default: return kCss444;
  }
}

}  // namespace


EnginesPath::EnginesPath() = default;
EnginesPath::~EnginesPath() { Destroy(); }

std::string EnginesPath::Init(const NvjpegLibrary& lib, const GpuDecoderOptions& options, unsigned flags,
                              GpuDecoderCounters& counters) {
  lib_ = &lib;
  options_ = options;
  const NvjpegApi& a = lib.api();
  const unsigned pipeline = (options.engines_pipeline ? 0u : kFlagsHwDecodeNoPipeline) |
                            (options.engines_memory_pools ? kFlagsEnableMemoryPools : 0u);
  // GPUs without JPEG engines refuse the hardware backend; that is not an error.
  auto make = [&](unsigned f, nvjpegHandle_t* h) {
    auto alloc = std::make_unique<NvjpegAllocators>(true);
    const int64_t before = DeviceBytesInUse();
    const nvjpegStatus_t st = a.nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, alloc->device(), alloc->pinned(), f, h);
    create_bytes_ += std::max<int64_t>(0, DeviceBytesInUse() - before);
    if (st == NVJPEG_STATUS_SUCCESS) alloc_.push_back(std::move(alloc));
    return st;
  };
  nvjpegHandle_t first = nullptr;
  flags_ = flags | pipeline;
  nvjpegStatus_t st = flags == 0 ? NVJPEG_STATUS_INVALID_PARAMETER : make(flags_, &first);
  if (st != NVJPEG_STATUS_SUCCESS) {
    flags_ = pipeline;
    st = make(flags_, &first);
  }
  if (st != NVJPEG_STATUS_SUCCESS) {
    return std::string("no hardware JPEG engines: nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE): ") + StatusName(st);
  }
  handles_.push_back(first);
  counters.hw_no_pipeline = (flags_ & kFlagsHwDecodeNoPipeline) != 0;
  if (a.nvjpegGetHardwareDecoderInfo != nullptr) {
    unsigned engines = 0, cores = 0;
    if (a.nvjpegGetHardwareDecoderInfo(first, &engines, &cores) == NVJPEG_STATUS_SUCCESS) {
      counters.hw_engines = static_cast<int>(engines);
      counters.hw_cores_per_engine = static_cast<int>(cores);
    }
  }
  // A handle that cannot be made leaves fewer parts.
  for (int p = 1; p < options.engine_threads; ++p) {
    nvjpegHandle_t h = nullptr;
    if (make(flags_, &h) != NVJPEG_STATUS_SUCCESS) break;
    handles_.push_back(h);
  }
  counters.hw_parts = parts();
  return "";
}

void EnginesPath::Destroy() noexcept {
  if (lib_ == nullptr) return;
  const NvjpegApi& a = lib_->api();
  for (auto& slot : slots_) {
    for (auto& per_part : slot->params) {
      for (auto p : per_part) a.nvjpegDecodeParamsDestroy(p);
    }
    for (auto& per_part : slot->streams) {
      for (auto js : per_part) a.nvjpegJpegStreamDestroy(js);
    }
    for (Part& part : slot->parts) {
      if (part.stream) CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(part.stream.get()));
      for (Call& call : part.calls) {
        if (call.end) CONVEYOR_CUDA_CHECK_NOTHROW(cudaEventSynchronize(call.end.get()));
        if (call.state != nullptr) a.nvjpegJpegStateDestroy(call.state);
      }
    }
  }
  slots_.clear();
  for (auto h : handles_) a.nvjpegDestroy(h);
  handles_.clear();
  lib_ = nullptr;
}

NvjpegMemory EnginesPath::memory() const {
  NvjpegMemory sum;
  for (const auto& alloc : alloc_) sum += alloc->memory();
  sum.driver_bytes_at_create = create_bytes_.load();
  sum.driver_bytes_at_prealloc = prealloc_bytes_.load();
  return sum;
}

EnginesPath::Slot& EnginesPath::SlotAt(int s) {
  while (static_cast<int>(slots_.size()) <= s) {
    auto slot = std::make_unique<Slot>();
    slot->ready = cuda::Event::Create();
    slot->parts.resize(handles_.size());
    slot->streams.resize(handles_.size());
    slot->params.resize(handles_.size());
    for (int p = 0; p < parts(); ++p) {
      Part& part = slot->parts[static_cast<size_t>(p)];
      if (p > 0) part.stream = cuda::Stream::Create();
      for (Call& call : part.calls) {
        call.start = cuda::Event::Create(/*timing=*/true);
        call.end = cuda::Event::Create(/*timing=*/true);
        CONVEYOR_NVJPEG_CHECK(lib_->api().nvjpegJpegStateCreate(Handle(p), &call.state), "engines");
        call.prealloc_w = static_cast<int>(options_.preallocate_width_hint);
        call.prealloc_h = static_cast<int>(options_.preallocate_height_hint);
      }
    }
    slots_.push_back(std::move(slot));
  }
  return *slots_[static_cast<size_t>(s)];
}

void EnginesPath::Begin(int slot, StreamView stream) { SlotAt(slot).ready.Record(stream); }

int EnginesPath::parts_used(int slot) const { return slots_[static_cast<size_t>(slot)]->parts_used; }

void EnginesPath::Assign(int s, const std::vector<int> (&groups)[kEngineGroups],
                         const std::vector<GpuDecodeSample>& samples, int max_parts) {
  Slot& slot = SlotAt(s);
  for (Part& part : slot.parts) {
    for (Call& call : part.calls) call.images.clear();
  }
  slot.part_of.assign(samples.size(), 0);
  const std::vector<int>& main = groups[static_cast<int>(EngineGroup::k420)];
  bool any = false;
  for (const auto& g : groups) any |= !g.empty();
  // Parts of at least 16 images each.
  const int n = static_cast<int>(main.size());
  slot.parts_used = any ? std::clamp(n / 16, 1, std::clamp(max_parts, 1, std::max(parts(), 1))) : 0;
  if (!any) return;
  const int last = slot.parts_used - 1;
  std::vector<double> load(static_cast<size_t>(slot.parts_used), 0);
  auto pixels = [&](int i) { return static_cast<double>(Pixels(samples[static_cast<size_t>(i)])); };
  // A part's load: its images' pixels, plus a fixed cost per image and per nvJPEG call in pixels'
  // worth (engines_image_cost_px, engines_call_cost_px; 0 by default: pixels alone).
  auto place = [&](int i, int p, int kind) {
    std::vector<int>& images = slot.parts[static_cast<size_t>(p)].calls[kind].images;
    if (images.empty()) load[static_cast<size_t>(p)] += static_cast<double>(options_.engines_call_cost_px);
    images.push_back(i);
    slot.part_of[static_cast<size_t>(i)] = static_cast<uint8_t>(p);
    load[static_cast<size_t>(p)] += pixels(i) + static_cast<double>(options_.engines_image_cost_px);
  };
  // The large images on the first part; each other subsampling's call, largest first, on the part
  // least loaded so far (the last on a tie: it takes the 4:2:0 remainder least often).
  for (int i : groups[static_cast<int>(EngineGroup::kLarge)]) place(i, 0, kCallLarge);
  std::vector<int> other[kCallKinds];
  for (int i : groups[static_cast<int>(EngineGroup::kOther)]) {
    other[OtherCallOf(samples[static_cast<size_t>(i)].subsampling)].push_back(i);
  }
  std::vector<std::pair<double, int>> order;  // (pixels, kind)
  for (int k = 0; k < kCallKinds; ++k) {
    double sum = 0;
    for (int i : other[k]) sum += pixels(i);
    if (!other[k].empty()) order.emplace_back(sum, k);
  }
  std::sort(order.begin(), order.end(), std::greater<>());
  for (const auto& [sum, k] : order) {
    int p = last;
    for (int q = last; q >= 0; --q) {
      if (load[static_cast<size_t>(q)] < load[static_cast<size_t>(p)]) p = q;
    }
    for (int i : other[k]) place(i, p, k);
  }
  // The 4:2:0 images in contiguous runs, part p taking images until its load reaches an even share.
  double total = 0;
  for (double l : load) total += l;
  for (int i : main) total += pixels(i) + static_cast<double>(options_.engines_image_cost_px);
  if (!main.empty()) total += static_cast<double>(options_.engines_call_cost_px) * slot.parts_used;
  const double even = total / slot.parts_used;
  int p = 0;
  for (int i : main) {
    while (p < last && load[static_cast<size_t>(p)] >= even) ++p;
    place(i, p, kCall420);
  }
}

void EnginesPath::Run(Part& part, int p, int group, const std::vector<GpuDecodeSample>& samples, StreamView stream,
                      const std::string& where) {
  const NvjpegApi& a = lib_->api();
  Call& call = part.calls[group];
  const int n = static_cast<int>(call.images.size());
  call.data.resize(n);
  call.lengths.resize(n);
  call.out.resize(n);
  bool any_roi = false;
  int max_h = 0, max_w = 0;
  int64_t max_px = 0;
  call.pixels = 0;
  for (int k = 0; k < n; ++k) {
    const GpuDecodeSample& s = samples[static_cast<size_t>(call.images[static_cast<size_t>(k)])];
    call.data[k] = s.data;
    call.lengths[k] = s.size;
    call.out[k] = ImageOf(s, DecodeChannels(options_.color));
    any_roi |= !IsWhole(s);
    max_h = std::max(max_h, static_cast<int>(s.height));
    max_w = std::max(max_w, static_cast<int>(s.width));
    max_px = std::max(max_px, Pixels(s));
    call.pixels += Pixels(s);
  }
  const std::string what = where + ": engines" + (parts() > 1 ? " part " + std::to_string(p) : std::string()) +
                           CallName(group) +
                           ", " + std::to_string(n) + " images";
  call.preallocated = false;
  // Only the 4:2:0 call preallocates for its batch and largest image: a minority kind's call sized
  // for n times its largest image took ~0.5 GB per state (realistic set, H100); its pool grows to
  // what its calls hold instead.
  const bool grow_prealloc = options_.engines_prealloc_grow && (group == kCall420 || options_.engines_prealloc_all);
  const bool first = call.prealloc_n == 0;
  if (options_.engines_prealloc_typical && n > 0) {  // the median image by pixels
    std::vector<std::pair<int64_t, int>> by_px(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      by_px[static_cast<size_t>(k)] = {Pixels(samples[static_cast<size_t>(call.images[static_cast<size_t>(k)])]), k};
    }
    std::nth_element(by_px.begin(), by_px.begin() + n / 2, by_px.end());
    const GpuDecodeSample& typical =
        samples[static_cast<size_t>(call.images[static_cast<size_t>(by_px[static_cast<size_t>(n / 2)].second)])];
    max_h = static_cast<int>(typical.height);
    max_w = static_cast<int>(typical.width);
    max_px = Pixels(typical);
  }
  if (options_.engines_prealloc_by_area) {  // a square of the (largest or typical) image's pixels
    max_h = max_w = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(max_px))));
  }
  const bool grown = n > call.prealloc_n || max_h > call.prealloc_h || max_w > call.prealloc_w;
  if (a.nvjpegDecodeBatchedPreAllocate != nullptr && !call.prealloc_failed &&
      (first || (grow_prealloc && grown))) {
    if (grow_prealloc) {
      // With headroom, so the balance moving by a few images does not preallocate again.
      call.prealloc_n = std::max(call.prealloc_n, (n * 5 / 4 + 7) / 8 * 8);
      call.prealloc_h = std::max(call.prealloc_h, (max_h + 63) / 64 * 64);
      call.prealloc_w = std::max(call.prealloc_w, (max_w + 63) / 64 * 64);
    } else {  // once: the pool grows on demand from here
      call.prealloc_n = 1;
      call.prealloc_h = std::max(call.prealloc_h, 1);
      call.prealloc_w = std::max(call.prealloc_w, 1);
    }
    call.preallocated = true;
    std::unique_lock<std::mutex> window(prealloc_mu_);
    const int64_t before = DeviceBytesInUse();
    const nvjpegStatus_t st =
        a.nvjpegDecodeBatchedPreAllocate(Handle(p), call.state, call.prealloc_n, call.prealloc_w, call.prealloc_h,
                                         CssOf(group),
                                         FormatOf(options_.color));
    prealloc_bytes_ += std::max<int64_t>(0, DeviceBytesInUse() - before);
    window.unlock();
    if (st != NVJPEG_STATUS_SUCCESS) {
      // Preallocation only saves reallocations: decode without it, and say so once.
      call.prealloc_failed = true;
      std::cerr << "conveyor: " << what << ": nvjpegDecodeBatchedPreAllocate failed (" << StatusName(st)
                << "); the engines' buffers grow on demand\n";
    }
  }
  call.start.Record(stream);
  const auto t0 = Clock::now();
  // A failed call is not an error here: its images go down the chain after phase B (TakeFailed),
  // where each is decoded, or its damage named, on its own.
  call.failed = a.nvjpegDecodeBatchedInitialize(Handle(p), call.state, n, 1, FormatOf(options_.color));
  if (call.failed == NVJPEG_STATUS_SUCCESS) {
    call.failed = any_roi ? a.nvjpegDecodeBatchedEx(Handle(p), call.state, call.data.data(), call.lengths.data(),
                                                    call.out.data(), call.params.data(), stream.get())
                          : a.nvjpegDecodeBatched(Handle(p), call.state, call.data.data(), call.lengths.data(),
                                                  call.out.data(), stream.get());
  }
  call.host_s = SecondsSince(t0);
  call.end.Record(stream);
  call.pending = call.failed == NVJPEG_STATUS_SUCCESS;
  if (!call.pending) call.what = what;
}

void EnginesPath::DecodePart(int s, int p, const std::vector<GpuDecodeSample>& samples, StreamView ws_stream,
                             const std::string& where, Clock::time_point phase_start, DecodeTrace* trace) {
  Slot& slot = SlotAt(s);
  Part& part = slot.parts[static_cast<size_t>(p)];
  const StreamView stream = p == 0 ? ws_stream : part.stream.view();
  part.ready_wait_s = 0;
  part.end_pending_at_return = false;
  if (part.Empty()) return;
  const int64_t start_ns = NsSince(phase_start);
  // A thread new to CUDA must make the device current itself before nvJPEG's engines backend works
  // on it (else nvjpegDecodeBatchedPreAllocate fails with ALLOCATOR_FAILURE and the decode with
  // EXECUTION_FAILED, H100): DeviceGuard skips cudaSetDevice where cudaGetDevice already answers
  // the device, which it does on a fresh thread.
  cuda::DeviceGuard guard(options_.device);
  CONVEYOR_CUDA_CHECK(cudaSetDevice(options_.device));
  for (Call& call : part.calls) {  // each image's parameters, set by Check
    if (options_.engines_sorted) {
      SortLargestFirst(call.images, [&](int i) {
        const GpuDecodeSample& smp = samples[static_cast<size_t>(i)];
        return std::pair{smp.height, smp.width};
      });
    }
    call.params.resize(call.images.size());
    for (size_t k = 0; k < call.images.size(); ++k) {
      call.params[k] = slot.params[static_cast<size_t>(p)][static_cast<size_t>(call.images[k])];
    }
  }
  // The engines are not trusted to wait for work enqueued on `stream` before this call (what last
  // wrote or read the outputs' memory): the host waits for it first (recorded at the call's start,
  // so phase A ran meanwhile). gpu_decoder_gpu_test's EnginesWaitForEarlierWorkOnTheStream makes
  // the race deterministic with a spin kernel (docs/decoding.md).
  const auto w0 = Clock::now();
  if (options_.engines_wait) slot.ready.Synchronize();
  if (p > 0) CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), slot.ready.get(), 0));
  part.ready_wait_s = SecondsSince(w0);
  for (int group = 0; group < kCallKinds; ++group) {
    if (!part.calls[group].images.empty()) Run(part, p, group, samples, stream, where);
  }
  part.end_pending_at_return = !part.Last()->end.Query();
  if (trace != nullptr) {
    std::string calls = "wait " + std::to_string(static_cast<int64_t>(part.ready_wait_s * 1e6)) + " us;";
    for (int group = 0; group < kCallKinds; ++group) {
      const Call& c = part.calls[group];
      if (c.images.empty()) continue;
      calls += std::string(" ") + (group == kCall420 ? "4:2:0" : CallName(group) + 2) + " " +
               std::to_string(c.images.size()) + " images " + std::to_string(c.pixels / 1000) + "k px " +
               std::to_string(static_cast<int64_t>(c.host_s * 1e6)) + " us;";
    }
    trace->AddEngines(p, static_cast<int>(part.Images()), start_ns, NsSince(phase_start), calls);
  }
}

void EnginesPath::TakeFailed(int s, StreamView stream, std::vector<int>* failed, GpuDecoderCounters& counters) {
  Slot& slot = SlotAt(s);
  for (int p = 0; p < slot.parts_used; ++p) {
    Part& part = slot.parts[static_cast<size_t>(p)];
    bool waited = false;
    for (Call& call : part.calls) {
      if (call.images.empty() || call.failed == NVJPEG_STATUS_SUCCESS) continue;
      if (!waited) {  // what the failed call did enqueue must not land after the next path's writes
        CONVEYOR_CUDA_CHECK(cudaStreamSynchronize(p == 0 ? stream.get() : part.stream.get()));
        waited = true;
      }
      if (!check_all_) {
        std::cerr << "conveyor: " << call.what << ": nvJPEG's batched decode failed (" << StatusName(call.failed)
                  << "); its images go to the next path, and every image gets nvJPEG's support check from now on\n";
      }
      check_all_ = true;
      ++counters.hw_failed_calls;
      failed->insert(failed->end(), call.images.begin(), call.images.end());
      call.images.clear();
      call.failed = NVJPEG_STATUS_SUCCESS;
    }
  }
}

void EnginesPath::End(int s, StreamView stream, GpuDecoderCounters& call) {
  Slot& slot = SlotAt(s);
  for (int p = 0; p < slot.parts_used; ++p) {
    const Part& part = slot.parts[static_cast<size_t>(p)];
    if (part.Empty()) continue;
    if (p > 0) CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(stream.get(), part.Last()->end.get(), 0));
    for (const Call& c : part.calls) call.hw_preallocations += c.preallocated ? 1 : 0;
    call.hw_ready_wait_seconds += part.ready_wait_s;
    call.hw_end_pending += part.end_pending_at_return ? 1 : 0;
    call.images_hardware += part.Images();
    call.images_engines_other += part.Images() - static_cast<int64_t>(part.calls[kCall420].images.size());
  }
}

std::pair<double, double> EnginesPath::ReadTimes(int s, GpuDecoderCounters& counters) {
  Slot& slot = SlotAt(s);
  double longest = 0, pixels = 0;
  for (Part& part : slot.parts) {
    const Call* first = part.First();
    const Call* last = part.Last();
    if (first == nullptr || !first->pending || !last->end.Query()) continue;
    double host_s = 0;
    for (Call& call : part.calls) {
      if (!call.pending || call.images.empty()) continue;
      call.pending = false;
      const double gpu_s = cuda::Event::ElapsedMs(call.start, call.end) / 1e3;
      ++counters.hw_batches;
      counters.hw_host_seconds += call.host_s;
      counters.hw_gpu_seconds += gpu_s;
      host_s += call.host_s;
      pixels += static_cast<double>(call.pixels);
    }
    // The parts run side by side: every part's pixels over the longest part, GPU or host time.
    longest = std::max({longest, cuda::Event::ElapsedMs(first->start, last->end) / 1e3, host_s});
  }
  return {pixels, longest};
}

}  // namespace conveyor::ops
