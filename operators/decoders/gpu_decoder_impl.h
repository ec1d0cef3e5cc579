// GpuDecoder's internals, shared by its three files (private to the gpu_decoder library: listed
// in its srcs, so nothing else can include it):
//   gpu_decoder_setup.cc  the environment switches, nvJPEG handles and states, slots, workers;
//   gpu_decoder_paths.cc  one image on the CUDA backend, one engines' batch, the engines' times;
//   gpu_decoder.cc        Decode (classify, split, both paths side by side, the CPU path), the
//                         balance between engines and CUDA backend, the counters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "operators/decoders/gpu_decoder.h"
#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"
#include "operators/decoders/nvjpeg/nvjpeg_loader.h"

namespace conveyor::ops {

using namespace nvjpeg;  // NOLINT: the nvJPEG names read best unqualified; this header is private
using Clock = std::chrono::steady_clock;

inline constexpr double kEma = 0.3;           // weight of the newest rate measurement
inline constexpr double kMinShare = 0.05;     // each path keeps this share so its rate stays measured
inline constexpr double kInitialHwShare = 0.9;  // engines first
inline constexpr unsigned kFlagsUpsamplingWithInterpolation = 32;  // NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION
inline constexpr unsigned kFlagsHwDecodeNoPipeline = 1;  // NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE
// nvjpegChromaSubsampling_t values (a C enum): the subsampling the engines' buffers are
// preallocated for, from the widest of the batch.
inline constexpr int kCss444 = 0, kCss422 = 1, kCss420 = 2, kCssGray = 6;
inline int CssForBytes(int chroma_bytes_x2) {
  if (chroma_bytes_x2 <= 0 || chroma_bytes_x2 > 4) return kCss444;
  if (chroma_bytes_x2 == 4) return kCss422;
  if (chroma_bytes_x2 == 3) return kCss420;
  return kCssGray;
}


inline nvjpegOutputFormat_t FormatOf(DecodeColor c) {
  switch (c) {
    case DecodeColor::kRgb: return NVJPEG_OUTPUT_RGBI;
    case DecodeColor::kBgr: return NVJPEG_OUTPUT_BGRI;
    case DecodeColor::kGray: return NVJPEG_OUTPUT_Y;
  }
  return NVJPEG_OUTPUT_RGBI;
}

inline bool IsWhole(const GpuDecodeSample& s) {
  return s.roi.y == 0 && s.roi.x == 0 && s.roi.h == s.height && s.roi.w == s.width;
}

inline nvjpegImage_t ImageOf(const GpuDecodeSample& s, int channels) {
  nvjpegImage_t img{};
  img.channel[0] = s.out;
  img.pitch[0] = static_cast<size_t>(s.roi.w) * channels;
  return img;
}

// One decoder kind (host Huffman or GPU Huffman) of a worker: its state and buffers. Pinned
// buffers (two unless CONVEYOR_JPEG_CUDA_PINNED says otherwise) take turns so the host phase of the
// next image can run while earlier images' transfers still read the others.
struct HybridLane {
  nvjpegJpegState_t state = nullptr;
  nvjpegBufferDevice_t device_buffer = nullptr;
  std::vector<nvjpegBufferPinned_t> pinned;
  std::vector<cuda::Event> pinned_done;
  cuda::Event device_done;  // traced calls: after the last image's device phase
  int next = 0;
};

// One CUDA image of a traced call (CONVEYOR_JPEG_TRACE): which of the call's threads, start and end
// from phase B's start, its decoder kind, where its time went (nvJPEG's parse, the wait for its
// pinned buffer, nvjpegDecodeJpegHost, issuing the transfer and device phase) and the nvJPEG
// allocator calls made on its thread meanwhile (calls and their time).
struct CudaImageTrace {
  int image = 0, thread = 0, kind = 0;
  int64_t start_ns = 0, end_ns = 0;
  int64_t parse_ns = 0, wait_ns = 0, host_ns = 0, issue_ns = 0;
  int64_t alloc_calls = 0, alloc_ns = 0;
  // Inside nvjpegDecodeJpegHost: the thread's CPU time, its voluntary (blocked) and involuntary
  // (preempted) context switches, the CPUs it started and ended on; and whether the lane's
  // previous device phase was still running when the image started.
  int64_t attach_ns = 0, host_cpu_ns = 0, voluntary = 0, involuntary = 0;
  int cpu_start = -1, cpu_end = -1, lane_busy = 0;
};

// A thread's CPU time and context switches so far (the trace's "is it blocked or busy").
struct ThreadUsage {
  int64_t cpu_ns = 0, voluntary = 0, involuntary = 0;
  static ThreadUsage Now();
};

// Where the CUDA backend's workers spend one call (thread time summed over workers, ns): nvJPEG's
// parse and host Huffman, waiting for a pinned buffer's previous transfer, and issuing the
// transfer and the device phase.
struct CudaPhaseTimes {
  std::atomic<int64_t> host_ns{0}, pinned_wait_ns{0}, issue_ns{0};
  // From phase B's start to the first CUDA chunk's start (-1: none yet), and the chunks (threads'
  // shares of the images) the pool made: how soon and how widely the pool took the images.
  std::atomic<int64_t> first_start_ns{-1};
  std::atomic<int64_t> chunks{0};
  // The distinct threads that took CUDA images in this call and the sum of their first starts
  // (from phase B's start): how late the pool's threads join.
  std::atomic<int64_t> work_end_ns{0}, prologue_ns{0}, epilogue_ns{0};
  std::mutex threads_mu;
  std::vector<std::thread::id> threads;
  int64_t threads_first_start_ns = 0;
  std::vector<CudaImageTrace> trace;  // traced calls only (under threads_mu)
  std::atomic<int64_t> engines_end_ns{0};
  int64_t engines_alloc_calls = 0, engines_alloc_ns = 0;  // traced calls: the engines' call's allocations
  ThreadUsage engines_usage;                               // and its thread's CPU time and switches
  int engines_cpu_start = -1, engines_cpu_end = -1;        // and the CPUs it started and ended on
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

// A sub-batch of the engines' images with its own nvJPEG handle and state (hw_parts of them,
// CONVEYOR_JPEG_ENGINE_THREADS, default 2), each on a thread of its own during the call: the
// engines' call is CPU-bound on its thread (~27-45 µs per image on the H100), and two handles
// side by side decoded 41-43k images/s where one gave 26-28k (2026-11-26; several states of *one*
// handle from several threads crashed or hung, the 2026-11-25 sessions). Part 0 runs on ws.stream(),
// the others on their own streams, which ws.stream() waits for after the call. Its internal buffers
// are preallocated for the largest batch and image seen, so a batch
// that grows (the balance moved) does not make nvJPEG reallocate inside the decode, which
// synchronises the device: without it the engines gave 11.3k images/s on the H100, with it 25.4k.
struct HwPart {
  nvjpegJpegState_t state = nullptr;
  cuda::Stream stream;  // parts after the first: their own stream
  cuda::Event start, end;  // timing on the stream
  bool pending = false;
  int64_t images = 0;
  double host_s = 0;
  int prealloc_n = 0, prealloc_h = 0, prealloc_w = 0, prealloc_bytes_x2 = 0;
  bool prealloc_failed = false;
  // This call's share of the counters, added by Decode under its one lock at the end.
  bool preallocated = false;
  double ready_wait_s = 0;
  bool end_pending_at_return = false;  // its end event had not completed when the call returned
  std::vector<const unsigned char*> data;
  std::vector<size_t> lengths;
  std::vector<nvjpegImage_t> images_out;
  std::vector<nvjpegDecodeParams_t> params;
};

struct SlotState {
  std::vector<HwPart> hw;                       // sub-batches of the engines' images
  // [part][sample]: headers for the support check and the decode parameters, made with that
  // part's handle (a sample goes to whichever part its place in the call's picks gives).
  std::vector<std::vector<nvjpegJpegStream_t>> hw_streams;
  std::vector<std::vector<nvjpegDecodeParams_t>> hw_params;
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
  nvjpegHandle_t hw_handle = nullptr;  // engines (part 0)
  // Parts 1..hw_parts-1: their own allocators (declared first: they outlive the handles) and handles.
  std::vector<std::unique_ptr<NvjpegAllocators>> hw_more_alloc;
  std::vector<nvjpegHandle_t> hw_more;
  nvjpegHandle_t HwHandle(int part) const { return part == 0 ? hw_handle : hw_more[static_cast<size_t>(part - 1)]; }
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
  std::vector<int> engine_candidates;  // this call's images picked for the engines, in order
  std::vector<uint8_t> engine_ok;
  std::vector<uint8_t> engine_part;    // per sample: the engines' part it was checked for
  std::vector<int> hw_offsets;         // hw_list's range of each part: [hw_offsets[p], hw_offsets[p + 1])
  std::vector<int> hw_list, cuda_list, cpu_list;
  std::vector<size_t> staging_offsets;
  int cuda_pinned_buffers = 2;  // per worker lane (CONVEYOR_JPEG_CUDA_PINNED)
  int trace_calls = 0;          // CONVEYOR_JPEG_TRACE
  int64_t calls_made = 0;
  int hw_parts = 0;  // sub-batches of the engines' images, each on a handle and thread of its own (HwPart); 0 until Init
  bool engines_wait = true;  // CONVEYOR_JPEG_ENGINES_WAIT

  const NvjpegApi& api() const { return lib->api(); }
  void Init();
  void Destroy() noexcept;
  SlotState& Slot(int s);
  Worker* TakeWorker();
  void GiveWorker(Worker* w);
  // `trace` (traced calls only, else null) gets the image's kind, phase times and allocations.
  void DecodeCuda(Worker& w, const GpuDecodeSample& s, const std::string& where, CudaPhaseTimes& times,
                  CudaImageTrace* trace);
  // Part `part` of the engines' images (hw_list[begin, end)) on `stream` (ws.stream() for part 0,
  // else the part's own stream, which first waits for slot.ready).
  void DecodeHardware(SlotState& slot, int part, int begin, int end, const std::vector<GpuDecodeSample>& samples,
                      StreamView stream, const std::string& where);
  void ReadEngineTimes(SlotState& slot, GpuDecoderCounters& call);
  void UpdateBalance(double cuda_seconds, int64_t cuda_images);
  void Unavailable(const std::string& why);
};

}  // namespace conveyor::ops
