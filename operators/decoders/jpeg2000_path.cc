#include "operators/decoders/jpeg2000_path.h"

#include <algorithm>

#include "core/cuda/check.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "operators/decoders/jpeg2000_convert.h"
#include "operators/decoders/jpeg2000_obstacle.h"

namespace conveyor::ops {

using namespace nvjpeg2k;  // NOLINT: the library's names read best unqualified here

// One decode state: its previous image's end and the scratch planes it decodes into.
struct Jpeg2000Path::State {
  nvjpeg2kDecodeState_t state = nullptr;
  cuda::Event done;
  Buffer scratch;  // device, on the worker's stream
};

struct Jpeg2000Path::Worker {
  cuda::Stream stream;
  cuda::Event done;
  nvjpeg2kStream_t parsed = nullptr;
  nvjpeg2kDecodeParams_t params = nullptr;
  State states[kStates];
  int next = 0;
};

namespace {

// What nvJPEG2000 says of an image it declines, or of data it finds damaged (the CPU path then
// decodes it or names the damage).
bool Declined(nvjpeg2kStatus_t s) {
  return s == NVJPEG2K_STATUS_JPEG_NOT_SUPPORTED || s == NVJPEG2K_STATUS_IMPLEMENTATION_NOT_SUPPORTED ||
         s == NVJPEG2K_STATUS_ARCH_MISMATCH || s == NVJPEG2K_STATUS_BAD_JPEG;
}

}  // namespace

Jpeg2000Path::Jpeg2000Path() = default;
Jpeg2000Path::~Jpeg2000Path() { Destroy(); }

void Jpeg2000Path::Init(const Nvjpeg2kLibrary& lib, DecodeColor color) {
  lib_ = &lib;
  color_ = color;
  const Nvjpeg2kApi& a = lib.api();
  if (a.nvjpeg2kCreateV2 != nullptr) {  // the same stream-ordered pools nvJPEG gets
    alloc_ = std::make_unique<NvjpegAllocators>(false);
    const nvjpegDevAllocatorV2_t& d = *alloc_->device();
    const nvjpegPinnedAllocatorV2_t& p = *alloc_->pinned();
    nvjpeg2kDeviceAllocatorV2_t device{d.dev_malloc, d.dev_free, d.dev_ctx};
    nvjpeg2kPinnedAllocatorV2_t pinned{p.pinned_malloc, p.pinned_free, p.pinned_ctx};
    CONVEYOR_NVJPEG2K_CHECK(a.nvjpeg2kCreateV2(NVJPEG2K_BACKEND_DEFAULT, &device, &pinned, &handle_), lib.path());
  } else {
    CONVEYOR_NVJPEG2K_CHECK(a.nvjpeg2kCreateSimple(&handle_), lib.path());
  }
}

void Jpeg2000Path::Destroy() noexcept {
  if (lib_ == nullptr) return;
  const Nvjpeg2kApi& a = lib_->api();
  for (auto& w : workers_) {
    if (w->stream) CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(w->stream.get()));
    for (State& st : w->states) {
      if (st.state != nullptr) a.nvjpeg2kDecodeStateDestroy(st.state);
    }
    if (w->params != nullptr) a.nvjpeg2kDecodeParamsDestroy(w->params);
    if (w->parsed != nullptr) a.nvjpeg2kStreamDestroy(w->parsed);
  }
  workers_.clear();
  free_.clear();
  if (handle_ != nullptr) a.nvjpeg2kDestroy(handle_);
  handle_ = nullptr;
  lib_ = nullptr;
}

Jpeg2000Path::Worker* Jpeg2000Path::Take(cudaEvent_t start) {
  Worker* w = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      w = free_.back();
      free_.pop_back();
    }
  }
  if (w == nullptr) {  // a new worker: only while the number of concurrent chunks grows
    auto made = std::make_unique<Worker>();
    made->stream = cuda::Stream::Create();
    made->done = cuda::Event::Create();
    const Nvjpeg2kApi& a = lib_->api();
    const char* what = "nvJPEG2000 worker";
    CONVEYOR_NVJPEG2K_CHECK(a.nvjpeg2kStreamCreate(&made->parsed), what);
    CONVEYOR_NVJPEG2K_CHECK(a.nvjpeg2kDecodeParamsCreate(&made->params), what);
    for (State& st : made->states) {
      CONVEYOR_NVJPEG2K_CHECK(a.nvjpeg2kDecodeStateCreate(handle_, &st.state), what);
      st.done = cuda::Event::Create();
    }
    std::lock_guard<std::mutex> lock(mu_);
    workers_.push_back(std::move(made));
    w = workers_.back().get();
  }
  CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(w->stream.get(), start, 0));
  return w;
}

void Jpeg2000Path::Done(Worker* w) {
  w->done.Record(w->stream.view());
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(w);
}

cudaEvent_t Jpeg2000Path::EndEvent(const Worker* w) { return w->done.get(); }

Jpeg2000Path::State& Jpeg2000Path::NextState(Worker& w) {
  State& st = w.states[w.next];
  w.next = (w.next + 1) % kStates;
  st.done.Synchronize();  // nvJPEG2000 reuses a state only after its previous decode finished
  return st;
}

bool Jpeg2000Path::Decode(Worker& w, const GpuDecodeSample& s, const std::string& where) {
  const Nvjpeg2kApi& a = lib_->api();
  if (!Jpeg2000GpuObstacle(s.data, s.size).empty()) return false;
  const nvjpeg2kStatus_t parsed = a.nvjpeg2kStreamParse(handle_, s.data, s.size, 0, 0, w.parsed);
  if (Declined(parsed)) return false;
  CONVEYOR_NVJPEG2K_CHECK(parsed, where);
  nvjpeg2kImageInfo_t info{};
  CONVEYOR_NVJPEG2K_CHECK(a.nvjpeg2kStreamGetImageInfo(w.parsed, &info), where);
  // Sizes from the header were held to max_pixels before the outputs were made; the stream must
  // declare the same, or nothing below is sized from it.
  if (info.image_width != s.width || info.image_height != s.height) return false;
  if (info.num_components != 1 && info.num_components != 3) return false;
  for (uint32_t c = 0; c < info.num_components; ++c) {
    nvjpeg2kImageComponentInfo_t comp{};
    CONVEYOR_NVJPEG2K_CHECK(a.nvjpeg2kStreamGetImageComponentInfo(w.parsed, &comp, c), where);
    if (comp.precision != 8 || comp.sgn != 0 || comp.component_width != info.image_width ||
        comp.component_height != info.image_height) {
      return false;
    }
  }
  const int components = static_cast<int>(info.num_components);
  const int channels = DecodeChannels(color_);
  const bool whole = IsWhole(s);
  CONVEYOR_NVJPEG2K_CHECK(
      whole ? a.nvjpeg2kDecodeParamsSetDecodeArea(w.params, 0, 0, 0, 0)
            : a.nvjpeg2kDecodeParamsSetDecodeArea(w.params, static_cast<uint32_t>(s.roi.x),
                                                  static_cast<uint32_t>(s.roi.x + s.roi.w),
                                                  static_cast<uint32_t>(s.roi.y),
                                                  static_cast<uint32_t>(s.roi.y + s.roi.h)),
      where);
  State& st = NextState(w);
  // Gray to GRAY: straight into the output; else window-sized planes in the state's scratch.
  const bool direct = components == 1 && channels == 1;
  const size_t pitch = static_cast<size_t>(s.roi.w);
  const size_t plane_bytes = pitch * static_cast<size_t>(s.roi.h);
  if (!direct && st.scratch.size() < plane_bytes * components) {
    st.scratch = Buffer::Allocate(MemoryKind::kDevice, std::max(plane_bytes * components, st.scratch.size() * 5 / 4),
                                  w.stream.view());
  }
  uint8_t* planes = direct ? s.out : static_cast<uint8_t*>(st.scratch.device_ptr());
  void* plane_ptrs[3] = {};
  size_t pitches[3] = {};
  for (int c = 0; c < components; ++c) {
    plane_ptrs[c] = planes + plane_bytes * static_cast<size_t>(c);
    pitches[c] = pitch;
  }
  nvjpeg2kImage_t image{plane_ptrs, pitches, NVJPEG2K_UINT8, static_cast<uint32_t>(components)};
  const nvjpeg2kStatus_t decoded =
      a.nvjpeg2kDecodeImage(handle_, st.state, w.parsed, w.params, &image, w.stream.get());
  st.done.Record(w.stream.view());
  if (Declined(decoded)) return false;
  CONVEYOR_NVJPEG2K_CHECK(decoded, where);
  if (!direct) {
    Jpeg2000Planes src;
    for (int c = 0; c < components; ++c) src.plane[c] = static_cast<const uint8_t*>(plane_ptrs[c]);
    src.pitch = static_cast<int64_t>(pitch);
    src.components = components;
    Jpeg2000PlanesToHwc(src, 0, 0, s.roi.h, s.roi.w, channels, color_ == DecodeColor::kBgr, s.out, w.stream.view());
    st.done.Record(w.stream.view());
  }
  return true;
}

}  // namespace conveyor::ops
