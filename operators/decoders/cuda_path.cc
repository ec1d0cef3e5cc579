#include "operators/decoders/cuda_path.h"

#include <algorithm>

#include "core/cuda/check.h"

namespace conveyor::ops {

// One nvJPEG state of a worker's decoder kind: its device buffer and pinned buffers taking turns.
struct HybridState {
  nvjpegJpegState_t state = nullptr;
  nvjpegBufferDevice_t device_buffer = nullptr;
  std::vector<nvjpegBufferPinned_t> pinned;
  std::vector<cuda::Event> pinned_done;
  int next = 0;
};

// One decoder kind of a worker: its states, taking turns image by image (made on first use).
struct HybridLane {
  std::vector<HybridState> states;
  int next = 0;
};

struct CudaPath::SharedState {
  HybridState state;
  cuda::Event released = cuda::Event::Create();  // after its last user's device work
  bool used = false;
};

struct CudaPath::Worker {
  cuda::Stream stream;
  cuda::Event done;
  nvjpegJpegStream_t jpeg_stream = nullptr;
  nvjpegDecodeParams_t params = nullptr;
  HybridLane lanes[2];  // 0: NVJPEG_BACKEND_HYBRID (host Huffman), 1: GPU_HYBRID
};

namespace {

void DestroyState(const NvjpegApi& a, HybridState& st) {
  if (st.state != nullptr) a.nvjpegJpegStateDestroy(st.state);
  if (st.device_buffer != nullptr) a.nvjpegBufferDeviceDestroy(st.device_buffer);
  for (auto p : st.pinned) {
    if (p != nullptr) a.nvjpegBufferPinnedDestroy(p);
  }
  st = HybridState{};
}

}  // namespace

CudaPath::CudaPath() = default;
CudaPath::~CudaPath() { Destroy(); }

void CudaPath::Init(const NvjpegLibrary& lib, const GpuDecoderOptions& options, unsigned flags) {
  lib_ = &lib;
  options_ = options;
  const NvjpegApi& a = lib.api();
  alloc_ = std::make_unique<NvjpegAllocators>(true);
  alloc_->set_pinned_high_water_cap(static_cast<size_t>(options.cuda_pinned_high_water_mb) << 20);
  if (flags == 0 ||
      a.nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, alloc_->device(), alloc_->pinned(), flags, &handle_) !=
          NVJPEG_STATUS_SUCCESS) {
    handle_ = nullptr;
    CONVEYOR_NVJPEG_CHECK(a.nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, alloc_->device(), alloc_->pinned(), 0, &handle_),
                          lib.path());
  }
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecoderCreate(handle_, NVJPEG_BACKEND_HYBRID, &decoders_[0]), lib.path());
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecoderCreate(handle_, NVJPEG_BACKEND_GPU_HYBRID, &decoders_[1]), lib.path());
}

void CudaPath::Destroy() noexcept {
  if (lib_ == nullptr) return;
  const NvjpegApi& a = lib_->api();
  for (auto& w : workers_) {
    if (w->stream) CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(w->stream.get()));
    for (HybridLane& lane : w->lanes) {
      for (HybridState& st : lane.states) DestroyState(a, st);
    }
    if (w->params != nullptr) a.nvjpegDecodeParamsDestroy(w->params);
    if (w->jpeg_stream != nullptr) a.nvjpegJpegStreamDestroy(w->jpeg_stream);
  }
  for (auto& kind : shared_) {
    for (auto& st : kind) DestroyState(a, st->state);
    kind.clear();
  }
  for (auto& kind : shared_free_) kind.clear();
  workers_.clear();
  free_.clear();
  for (auto& d : decoders_) {
    if (d != nullptr) a.nvjpegDecoderDestroy(d);
    d = nullptr;
  }
  if (handle_ != nullptr) a.nvjpegDestroy(handle_);
  handle_ = nullptr;
  lib_ = nullptr;
}

CudaPath::Worker* CudaPath::Take(cudaEvent_t start) {
  Worker* w = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      w = free_.back();
      free_.pop_back();
    }
  }
  if (w == nullptr) {  // a new worker: only while the number of concurrent chunks grows (warm-up)
    auto made = MakeWorker();
    std::lock_guard<std::mutex> lock(mu_);
    workers_.push_back(std::move(made));
    w = workers_.back().get();
  }
  CONVEYOR_CUDA_CHECK(cudaStreamWaitEvent(w->stream.get(), start, 0));
  return w;
}

std::unique_ptr<CudaPath::Worker> CudaPath::MakeWorker() {
  auto made = std::make_unique<Worker>();
  made->stream = cuda::Stream::Create();
  made->done = cuda::Event::Create();
  const NvjpegApi& a = lib_->api();
  const char* what = "CUDA backend worker";
  // Destroyed by Destroy() once listed; until then by this guard.
  auto destroy = [&] {
    if (made->params != nullptr) a.nvjpegDecodeParamsDestroy(made->params);
    if (made->jpeg_stream != nullptr) a.nvjpegJpegStreamDestroy(made->jpeg_stream);
  };
  try {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(handle_, &made->jpeg_stream), what);
    CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsCreate(handle_, &made->params), what);
  } catch (...) {
    destroy();
    throw;
  }
  for (HybridLane& lane : made->lanes) lane.states.resize(static_cast<size_t>(std::max(options_.cuda_states, 1)));
  return made;
}

CudaPath::Worker* CudaPath::TakeOwn() {
  auto made = MakeWorker();
  std::lock_guard<std::mutex> lock(mu_);
  workers_.push_back(std::move(made));
  return workers_.back().get();
}

cuda::StreamView CudaPath::StreamOf(const Worker* w) { return w->stream.view(); }

void CudaPath::Done(Worker* w) {
  w->done.Record(w->stream.view());
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(w);
}

cudaEvent_t CudaPath::EndEvent(const Worker* w) { return w->done.get(); }

HybridState& CudaPath::StateOf(Worker& w, int kind) {
  HybridLane& lane = w.lanes[kind];
  HybridState& st = lane.states[static_cast<size_t>(lane.next)];
  lane.next = (lane.next + 1) % static_cast<int>(lane.states.size());
  if (st.state == nullptr) MakeState(st, kind);
  return st;
}

void CudaPath::MakeState(HybridState& st, int kind) {
  const NvjpegApi& a = lib_->api();
  const char* what = "CUDA backend worker";
  const int buffers = options_.cuda_pinned_buffers;
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecoderStateCreate(handle_, decoders_[kind], &st.state), what);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegBufferDeviceCreateV2(handle_, alloc_->device(), &st.device_buffer), what);
  st.pinned.assign(static_cast<size_t>(buffers), nullptr);
  st.pinned_done.resize(static_cast<size_t>(buffers));
  for (int b = 0; b < buffers; ++b) {
    CONVEYOR_NVJPEG_CHECK(a.nvjpegBufferPinnedCreateV2(handle_, alloc_->pinned(), &st.pinned[b]), what);
    st.pinned_done[b] = cuda::Event::Create();
  }
  CONVEYOR_NVJPEG_CHECK(a.nvjpegStateAttachDeviceBuffer(st.state, st.device_buffer), what);
}

CudaPath::SharedState& CudaPath::TakeShared(int kind, cuda::StreamView stream) {
  SharedState* st = nullptr;
  {
    std::unique_lock<std::mutex> lock(shared_mu_);
    if (shared_free_[kind].empty() &&
        static_cast<int>(shared_[kind].size()) < std::max(options_.cuda_shared_states, 1)) {
      shared_[kind].push_back(std::make_unique<SharedState>());
      shared_free_[kind].push_back(shared_[kind].back().get());
    }
    shared_cv_.wait(lock, [&] { return !shared_free_[kind].empty(); });
    st = shared_free_[kind].back();
    shared_free_[kind].pop_back();
  }
  try {
    if (st->state.state == nullptr) MakeState(st->state, kind);
  } catch (...) {
    GiveShared(kind, *st, std::nullopt);
    throw;
  }
  if (st->used) st->released.Wait(stream);
  return *st;
}

void CudaPath::GiveShared(int kind, SharedState& st, std::optional<cuda::StreamView> ended) {
  if (ended) {
    st.released.Record(*ended);
    st.used = true;
  }
  {
    std::lock_guard<std::mutex> lock(shared_mu_);
    shared_free_[kind].push_back(&st);
  }
  shared_cv_.notify_one();
}

void CudaPath::Decode(Worker& w, const GpuDecodeSample& s, const std::string& where, CudaTimes& times,
                      TracedImage* traced) {
  const int64_t threshold = s.progressive && options_.progressive_huffman_threshold >= 0
                                ? options_.progressive_huffman_threshold
                                : options_.hybrid_huffman_threshold;
  const int kind = Pixels(s) > threshold ? 1 : 0;
  if (options_.cuda_shared_pixels <= 0 || Pixels(s) <= options_.cuda_shared_pixels) {
    DecodeOn(StateOf(w, kind), kind, w, s, where, times, traced);
    return;
  }
  SharedState& shared = TakeShared(kind, w.stream.view());
  try {
    DecodeOn(shared.state, kind, w, s, where, times, traced);
  } catch (...) {
    GiveShared(kind, shared, w.stream.view());  // whatever it queued is ordered before the next user
    throw;
  }
  GiveShared(kind, shared, w.stream.view());
  ++times.shared_images;
}

void CudaPath::DecodeOn(HybridState& lane, int kind, Worker& w, const GpuDecodeSample& s, const std::string& where,
                        CudaTimes& times, TracedImage* traced) {
  const NvjpegApi& a = lib_->api();
  const ThreadAllocTally tally0 = traced != nullptr ? ThisThreadAllocTally() : ThreadAllocTally{};
  const auto t0 = Clock::now();
  CONVEYOR_NVJPEG_CHECK(a.nvjpegJpegStreamParse(handle_, s.data, s.size, 0, 0, w.jpeg_stream), where);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeParamsSetOutputFormat(w.params, FormatOf(options_.color)), where);
  SetRoi(a, w.params, s, where);
  // The pinned buffer about to be refilled may still feed the transfer of an earlier image.
  const int b = lane.next;
  lane.next = (lane.next + 1) % static_cast<int>(lane.pinned.size());
  const auto t1 = Clock::now();
  lane.pinned_done[b].Synchronize();
  const auto t2 = Clock::now();
  CONVEYOR_NVJPEG_CHECK(a.nvjpegStateAttachPinnedBuffer(lane.state, lane.pinned[b]), where);
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeJpegHost(handle_, decoders_[kind], lane.state, w.params, w.jpeg_stream), where);
  const auto t3 = Clock::now();
  CONVEYOR_NVJPEG_CHECK(
      a.nvjpegDecodeJpegTransferToDevice(handle_, decoders_[kind], lane.state, w.jpeg_stream, w.stream.get()), where);
  const auto t3b = Clock::now();
  lane.pinned_done[b].Record(w.stream.view());
  nvjpegImage_t img = ImageOf(s, DecodeChannels(options_.color));
  CONVEYOR_NVJPEG_CHECK(a.nvjpegDecodeJpegDevice(handle_, decoders_[kind], lane.state, &img, w.stream.get()), where);
  const auto t4 = Clock::now();
  auto ns = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
  };
  times.host_ns += ns(t0, t1) + ns(t2, t3);
  times.pinned_wait_ns += ns(t1, t2);
  times.issue_ns += ns(t3, t4);
  if (traced != nullptr) {
    traced->parse_ns = ns(t0, t1);
    traced->wait_ns = ns(t1, t2);
    traced->host_ns = ns(t2, t3);
    traced->issue_ns = ns(t3, t4);
    traced->transfer_ns = ns(t3, t3b);
    traced->gpu_huffman = kind == 1;
    const ThreadAllocTally tally1 = ThisThreadAllocTally();
    traced->alloc_calls = tally1.device_calls + tally1.pinned_calls - tally0.device_calls - tally0.pinned_calls;
    traced->alloc_ns = tally1.device_ns + tally1.pinned_ns - tally0.device_ns - tally0.pinned_ns;
  }
}

}  // namespace conveyor::ops
