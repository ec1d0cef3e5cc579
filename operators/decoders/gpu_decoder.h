// GpuDecoder: batched JPEG decoding into device memory, split between the GPU's hardware JPEG
// engines, nvJPEG's CUDA backend and CPU threads, balancing itself from measured throughput.
//
//   Decode(samples, ws):                       ws.ParallelFor on the executor's CPU threads
//   A  classify (parallel)  split by the engines' share; for the images picked for the engines,
//                           nvJPEG's header parse and support check (ROI included)
//   B  decode   (parallel)  item 0: engines — one nvjpegDecodeBatched(Ex) on ws.stream()
//                           other items: CUDA backend, one image each — nvjpegJpegStreamParse,
//                             nvjpegDecodeJpegHost (Huffman on this thread), then
//                             TransferToDevice + DecodeJpegDevice on the worker's lane stream
//   C  CPU      (parallel)  the caller's CPU decode (PNG, anything nvJPEG refuses) into pinned
//                           staging, then one async copy per sample on ws.stream()
//   join                    ws.stream() waits for every lane stream used (events): no host sync
//
// | item            | contract                                                                 |
// |-----------------|--------------------------------------------------------------------------|
// | samples[i].out  | device memory, roi.h * roi.w * channels bytes, HWC, pitch roi.w*channels |
// | color           | kRgb (NVJPEG_OUTPUT_RGBI), kBgr (BGRI), kGray (Y): 3, 3, 1 channels      |
// | roi             | inside the image; the whole image when not cropping                     |
// | cpu_decode      | fn(i, host_dst): decodes sample i's roi into host_dst (same layout)      |
// | ws              | stream() set; slot() < num_slots; host buffers of a slot are rewritten   |
// |                 | only after that slot's previous GPU work finished (an event check)       |
// | errors          | NvjpegError naming the call, the status and "sample i (where(i))"       |
// | no nvJPEG / GPU | everything goes to the CPU path; said once on stderr; counted           |
//
// Self-balancing: the images the engines accept are split between engines and CUDA backend in
// proportion to each path's measured rate (images/s; engines: GPU events around their batch,
// read at the slot's next use without waiting; CUDA: wall time of its part of phase B), smoothed
// (EMA), starting engines-first, with a small share kept on each path so both stay measured.
// `hw_load` in [0, 1] fixes the engines' share instead (DALI's hw_decoder_load); -1: automatic.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/op/workspace.h"
#include "operators/common/crop_window.h"
#include "operators/decoders/nvjpeg/nvjpeg_memory.h"

namespace conveyor::ops {

enum class DecodeColor { kRgb, kBgr, kGray };
inline int DecodeChannels(DecodeColor c) { return c == DecodeColor::kGray ? 1 : 3; }

// Which paths may decode (tests and benchmarks force one; kAuto mixes all).
enum class DecodePaths { kAuto, kHardwareOnly, kCudaOnly, kCpuOnly };

struct GpuDecodeSample {
  const uint8_t* data = nullptr;  // encoded bytes, host
  size_t size = 0;
  bool is_jpeg = true;            // false: PNG or other → CPU path
  int64_t height = 0, width = 0;  // the whole image
  CropWindow roi;                 // the window to produce
  uint8_t* out = nullptr;         // device
  // JPEG chroma planes' bytes per pixel, doubled: 6 for 4:4:4, 4 for 4:2:2 / 4:4:0, 3 for 4:2:0 /
  // 4:1:1, 2 for grayscale (0: unknown, taken as 4:4:4). Sizes the engines' preallocation.
  int chroma_bytes_x2 = 0;
};

struct GpuDecoderOptions {
  DecodeColor color = DecodeColor::kRgb;
  DecodePaths paths = DecodePaths::kAuto;
  double hw_load = -1;  // engines' share of the images they accept; -1 automatic
  int device = -1;  // -1: the current device when the decoder is made
  // Images with more pixels go to nvJPEG's GPU-Huffman decoder, smaller ones to host Huffman
  // (DALI's hybrid_huffman_threshold).
  int64_t hybrid_huffman_threshold = 1000 * 1000;
  // NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION: chroma upsampled by interpolation like
  // libjpeg's fancy upsampling (the CPU backend), so both backends give close images. Dropped
  // silently when the library refuses the flag.
  bool interpolated_upsampling = true;
};

struct GpuDecoderCounters {
  int64_t images_hardware = 0;  // decoded by the JPEG engines
  int64_t images_cuda = 0;      // nvJPEG CUDA backend
  int64_t images_cpu = 0;       // CPU path (PNG, forced, fallbacks)
  int64_t fallbacks = 0;        // JPEGs nvJPEG refused, decoded on the CPU instead
  bool nvjpeg_available = false;
  bool hardware_available = false;
  double hw_share = 0;          // the engines' current share of accepted images
  int hw_engines = 0, hw_cores_per_engine = 0;  // nvjpegGetHardwareDecoderInfo (0: not reported)
  int hw_parts = 0;  // nvJPEG hardware handles sharing the engines' images, each on its own thread
  bool hw_no_pipeline = false;  // engines' handle made with NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE
  // Where the engines' and the CUDA backend's time goes (for tuning and benchmarks): summed over
  // the engines' batches whose GPU time has been read, and over the CUDA backend's phase B.
  int64_t hw_batches = 0;
  double hw_host_seconds = 0;   // host time inside nvjpegDecodeBatched(Ex) (+ Initialize)
  double hw_gpu_seconds = 0;    // GPU time between the events around the engines' batch
  double cuda_seconds = 0;      // wall time of the CUDA backend's part of phase B
  // The CUDA backend's workers, thread time summed over them: nvJPEG's parse + host Huffman,
  // waiting for a pinned buffer's previous transfer, issuing the transfer + device phase.
  double cuda_host_seconds = 0, cuda_pinned_wait_seconds = 0, cuda_issue_seconds = 0;
  // From phase B's start to the first CUDA image's chunk starting on the pool, and the chunks the
  // pool split the CUDA images into (summed over calls).
  double cuda_first_start_seconds = 0;
  int64_t cuda_chunks = 0;
  // The distinct threads that took CUDA images, summed over calls, and the sum of each one's first
  // start from phase B's start (their mean: threads_first_start / threads).
  int64_t cuda_threads = 0;
  double cuda_threads_first_start_seconds = 0;
  // From phase B's start to the last CUDA image's host work done, and the
  // chunks' set-up (device, worker, stream wait) and bookkeeping after their images, thread time.
  double cuda_work_seconds = 0, cuda_prologue_seconds = 0, cuda_epilogue_seconds = 0;
  double hw_rate = 0, cuda_rate = 0;  // the balancer's smoothed rates, images/s
  int64_t calls = 0;            // Decode calls
  double classify_seconds = 0;  // phase A (headers, the engines' support checks, the split)
  double phase_b_seconds = 0;   // phase B: engines and CUDA backend side by side
  double phase_c_seconds = 0;   // phase C: the CPU path and its uploads
  double hw_start_seconds = 0;  // from phase B's start to the engines' call (waiting for a thread)
  double slot_wait_seconds = 0;  // at the call's start: the slot's previous work (slot.done)
  int64_t slot_pending_calls = 0;  // calls whose slot's previous work had not finished at their start
  double slot_query_seconds = 0;  // at the call's start: until the slot's done event was asked (no wait)
  int64_t hw_end_pending = 0;  // engines' batches whose end event had not completed when the call returned
  double call_seconds = 0;      // whole Decode calls
  int64_t hw_preallocations = 0;  // the engines' buffers preallocated (first batch, then growth)
  double hw_ready_wait_seconds = 0;  // the engines' host wait for work on the stream before the call
  // nvJPEG's memory now, per handle (CUDA backend, engines), as far as it comes through our
  // allocators: allocations, bytes asked, the device slack added (nvjpeg_allocators.h). On the
  // H100 (nvJPEG of CUDA 13) the engines' handle asks ours for no device memory at all.
  nvjpeg::NvjpegMemory cuda_memory, engines_memory;
  std::string unavailable_reason;  // why nvJPEG (or the engines) are not used
};

// Every GpuDecoder's image counts summed over the process (destroyed decoders included), with the
// availability, share and reason of the decoder that finished a batch last: for tools that see
// only a pipeline, not its operators (the CLI's run summary).
GpuDecoderCounters ProcessGpuDecoderCounters();

using CpuDecodeFn = std::function<void(int sample, uint8_t* host_dst)>;
// "file.jpg (reader index 12)" for sample i; used only to build error messages.
using DescribeFn = std::function<std::string(int sample)>;

class GpuDecoder {
 public:
  explicit GpuDecoder(const GpuDecoderOptions& options);
  ~GpuDecoder();
  GpuDecoder(const GpuDecoder&) = delete;
  GpuDecoder& operator=(const GpuDecoder&) = delete;

  // Queues the decoding of every sample on ws.stream() (see the table above). `where` prefixes
  // error messages (the op's spec.Describe()).
  void Decode(const std::vector<GpuDecodeSample>& samples, const Workspace& ws, const CpuDecodeFn& cpu_decode,
              const DescribeFn& describe, const std::string& where);

  GpuDecoderCounters counters() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace conveyor::ops
