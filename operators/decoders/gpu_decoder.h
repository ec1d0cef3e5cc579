// GpuDecoder: batched image decoding into device memory over four paths — the GPU's hardware
// JPEG engines, nvJPEG's CUDA backend, nvJPEG2000 for JPEG 2000 and the CPU (decode, then upload)
// — with each image sent to the path that decodes it fastest (decode_route.h) and the images both
// JPEG GPU paths take split between them from measured throughput (decode_balance.h).
//
//   DecodeAhead(key, samples)  (before the call, from another thread: the executor's look-ahead)
//      the call's costliest CUDA-backend images decoded on threads of their own (ahead_path.h)
//   Decode(samples, ws):
//   A  route     the images decoded ahead for this call are claimed (copied in after B), the
//                rest routed (router); the engines' support check for their images (parallel)
//   B  decode    every path side by side: the engines' calls on threads of their own (RunBeside),
//                CUDA-backend, nvJPEG2000 and CPU images over the pool's other threads (ParallelFor)
//   C  refusals  images a path refused go down their chain (router.Next); the CPU path's uploads
//   join         ws.stream() waits for every stream used (events): no host sync
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
// | no nvJPEG2000   | JPEG 2000 goes to the CPU path; said once on stderr, at the first JPEG   |
// |                 | 2000 image (the library is loaded only then); counted                    |
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/op/workspace.h"
#include "operators/common/crop_window.h"
#include "operators/decoders/decode_route.h"
#include "operators/decoders/decoder_counters.h"
#include "operators/decoders/image_info.h"
#include "operators/decoders/parts_tuner.h"

namespace conveyor::ops {

enum class DecodeColor { kRgb, kBgr, kGray };
inline int DecodeChannels(DecodeColor c) { return c == DecodeColor::kGray ? 1 : 3; }

struct GpuDecodeSample {
  const uint8_t* data = nullptr;  // encoded bytes, host
  size_t size = 0;
  bool is_jpeg = true;            // a JPEG nvJPEG may take; false: PNG, arithmetic-coded → CPU path
  int64_t height = 0, width = 0;  // the whole image
  CropWindow roi;                 // the window to produce
  uint8_t* out = nullptr;         // device
  ChromaSubsampling subsampling = ChromaSubsampling::kNone;  // JPEG: from the header
  bool progressive = false;
  bool is_jpeg2000 = false;       // a JPEG 2000 file nvJPEG2000 may take (its path refuses the rest)
  bool common_layout = false;     // JPEG: ImageInfo::jpeg_common_layout
};

// Which engines' images get nvJPEG's support check (header parse + nvjpegDecodeBatchedSupportedEx:
// 2.0-2.4 ms of phase A per batch of 256 on the realistic set, H100): every one; all but the common
// layouts of a size the engines take (EnginesPath::Trusted), the default; or none (measuring and
// tests). An engines' call that fails anyway sends its images down the chain after phase B
// (the CUDA backend), and the decoder checks every image from then on.
enum class EnginesCheck { kAlways, kTrustCommon, kNever };

struct GpuDecoderOptions {
  DecodeColor color = DecodeColor::kRgb;
  DecodePaths paths = DecodePaths::kAuto;
  // The engines' share (by pixels) of the images both GPU paths take; -1 automatic; 0 keeps every
  // image off the engines (DALI's hw_decoder_load = 0).
  double hw_load = -1;
  int device = -1;      // -1: the current device when the decoder is made
  // Routing (decode_route.h).
  ProgressiveRoute progressive = ProgressiveRoute::kCuda;
  OtherChromaRoute other_chroma = OtherChromaRoute::kCuda;
  // Baseline JPEGs above this: the engines, in calls of their own. Off by default (above max_pixels'
  // default): with each call sorted by size, large images ran faster as balanced 4:2:0 candidates
  // (realistic set +4%, varied +6%, H100; docs/decoding.md).
  int64_t large_pixels = 1'000'000'000;
  // Measuring switch: baseline 4:2:0 JPEGs above this many pixels always on the engines (their 4:2:0
  // call), never given to the CUDA backend by the balance, whose per-worker nvJPEG buffers grow to
  // the largest image each worker decoded (~600 MiB on the realistic set, H200,
  // docs/decoding_memory.md). 0: off.
  int64_t engines_only_pixels = 0;
  // Measuring switch: baseline JPEGs other than 4:2:0 (4:4:4, 4:2:2, gray, ...) above this many
  // pixels on the engines, in the large group's call, whatever `other_chroma` says. It takes a 9 MP
  // 4:4:4 photo's ~70 ms off one CUDA-backend thread, but the images/s did not move beyond the runs'
  // spread (H200, realistic set, docs/decoding_slow_batches.md). 0: off.
  int64_t other_engines_pixels = 0;
  // Progressive JPEGs up to this many pixels: the CPU path (libjpeg-turbo; no CUDA calls but the
  // upload), whatever `progressive` says. 0: none.
  int64_t progressive_cpu_pixels = 0;
  // Look-ahead (DecodeAhead): a later call's images the router sends to the CUDA backend alone whose
  // cost (pixels, x3 progressive) is at least ahead_cost, at most ahead_images of them, costliest
  // first, are decoded before that call on ahead_threads threads of their own (each with its own
  // CUDA-backend worker and ahead_buffers device buffers, grown to the largest window each held);
  // the call copies them in. One 9 MP progressive photo holds a whole call of 256 images otherwise
  // (docs/decoding_slow_batches.md, "Starting the costliest photos a call early"). 0: off.
  int64_t ahead_cost = 3'000'000;
  // Baseline 4:2:0 JPEGs the balance would split between the engines and the CUDA backend, with at
  // least this many pixels, are picked too (their cost: pixels): one such photo on one JPEG engine
  // can hold the engines' part of a call. 0: none (no faster on the realistic set, where the CUDA
  // backend's own images hold the call: docs/decoding_slow_batches.md).
  int64_t ahead_balanced_pixels = 0;
  int ahead_images = 4;   // 1-64
  int ahead_threads = 2;  // 1-16
  int ahead_buffers = 3;  // per ahead thread, 1-64
  // The CPU and CUDA-backend images of a call taken from one queue, costliest first (pixels,
  // progressive ones weighted), so a large image never starts last on a thread that already
  // decoded its share (longest-processing-time-first). false: TBB's chunks in list order.
  bool host_costliest_first = true;
  // Measuring switch: the engines' support check on the engines' side of phase B instead of phase A,
  // so the CPU/CUDA queue starts without waiting for it; refusals decoded after phase B.
  bool engines_check_beside = false;
  EnginesCheck engines_check = EnginesCheck::kTrustCommon;
  // Images with more pixels go to nvJPEG's GPU-Huffman decoder, smaller ones to host Huffman
  // (DALI's hybrid_huffman_threshold).
  int64_t hybrid_huffman_threshold = 1000 * 1000;
  // Measuring switch: the same threshold for progressive JPEGs (whose host Huffman costs ~3x per
  // pixel); -1: hybrid_huffman_threshold.
  int64_t progressive_huffman_threshold = -1;
  // NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION: chroma upsampled by interpolation like libjpeg's
  // fancy upsampling (the CPU path), so every path gives close images. Dropped silently when the
  // library refuses the flag.
  bool interpolated_upsampling = true;
  // The same flag on the engines' handles alone. With it, nvJPEG's hardware backend has the engines
  // write YCbCr and upsamples and converts in a CUDA kernel per image; without, the engines convert
  // to RGB themselves (their own chroma upsampling).
  bool engines_interpolated_upsampling = true;
  // The engines' buffers: by default (as DALI) preallocated once, for the hints (DALI's
  // preallocate_width_hint / _height_hint) or 1x1, which puts nvJPEG's batched decode on its memory
  // pool, grown on demand inside the decode (where a growth synchronises the device) to what the
  // calls hold. With engines_prealloc_grow, nvjpegDecodeBatchedPreAllocate for the batch's size and
  // its largest image whenever a batch or image of that nvJPEG state is larger than any before: ~1 GB
  // more GPU memory on the realistic set for 2-5% more images/s (H200, docs/decoding_memory.md).
  int64_t preallocate_width_hint = 0, preallocate_height_hint = 0;
  bool engines_prealloc_grow = false;
  // Measuring switch: every engines' call (not only 4:2:0's) preallocated for its batch and largest
  // image whenever they grow (what nvJPEG's hardware backend then frees and reallocates per call).
  bool engines_prealloc_all = false;
  // Measuring switch: the growing preallocation sized for a square of the largest image's pixels
  // instead of the largest width by the largest height (a 4000x1000 and a 1000x4000 image ask for
  // 2048x2048, not 4032x4032): GPU memory against nvJPEG growing its buffers inside the decode.
  bool engines_prealloc_by_area = false;
  // Measuring switch: the growing preallocation sized for the call's typical image (the median by
  // pixels: its width and height) instead of its largest, so one 4000x3000 photo among 500x375 ones
  // does not size every image's buffers; larger images grow nvJPEG's buffers inside the decode.
  bool engines_prealloc_typical = false;
  // NVJPEG_FLAGS_ENABLE_MEMORY_POOLS on the engines' handles: the hardware backend keeps its internal
  // buffers in a memory pool instead of cuMemFree-ing them after each call (which waits for the device).
  bool engines_memory_pools = false;
  // Each engines' call's images largest first (SortLargestFirst, decode_balance.h); false: the
  // balance's interleaved order.
  bool engines_sorted = true;
  // Measuring switches (the CLI and benchmarks set them from CONVEYOR_JPEG_*; decoder_env.h).
  bool engines = true;          // false: no hardware engines (their images take the CUDA backend)
  int engine_threads = 2;       // nvJPEG hardware handles sharing the engines' images, 1-4
  // Each call's handle count timed against one handle and the faster kept (PartsTuner,
  // parts_tuner.h), on this schedule; false: always engine_threads.
  bool engine_parts_tuned = true;
  // Measuring switch (parts_tuner.h): the tuner also times "every 4:2:0 candidate on the engines"
  // against the automatic balance, which must be engines_share_margin faster to be kept (the CUDA
  // backend's share costs host cores). Only where hw_load is automatic.
  bool engines_share_tuned = false;
  double engines_share_margin = 0.03;
  PartsTuner::Schedule engine_parts_schedule;
  bool engines_wait = true;     // the engines' host wait for earlier work on the stream
  // false (default): NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE on the engines' handles. nvJPEG's hardware
  // backend cuMemFree-s internal buffers after every batched call (~16 per call pipelined, ~9 without;
  // CUPTI trace, H200), and each free stalls every thread's CUDA calls while the device drains:
  // without the pipeline the realistic set ran 4.7% faster, its worst block 12% faster, in 1.3 GB less.
  bool engines_pipeline = false;
  // The engines' parts are balanced by load: pixels, plus these pixels' worth per image and per
  // nvJPEG call (measuring switches; 0: pixels alone).
  int64_t engines_image_cost_px = 0, engines_call_cost_px = 0;
  int cuda_pinned_buffers = 2;  // per CUDA-backend worker, decoder kind and state, 2-16
  // Measuring switch: the CUDA backend's pinned requests rounded up to the largest so far, capped
  // at this many MiB (0: off; NvjpegAllocators::set_pinned_high_water_cap).
  int cuda_pinned_high_water_mb = 0;
  // nvJPEG states (each with its own device buffer and pinned buffers) per CUDA-backend worker and
  // decoder kind, taking turns image by image, 1-16: the host phase of the next image never waits
  // for the device work of the images before it on that worker while a state is free.
  int cuda_states = 1;
  // CUDA-backend images above this many pixels decode on nvJPEG states shared by every worker
  // (`cuda_shared_states` of them per decoder kind, taken in turn; a state's next user's stream
  // waits for its last device work) instead of the worker's own: each state's device buffer grows
  // to the largest image it ever decoded, so a few large photos do not grow every worker's. The
  // realistic set (H200): 2 or 4 MP took 230-290 MiB off ~2.83 GB at 2-10% of the images/s (cause
  // not yet traced); 0: off, the default (docs/decoding_memory.md). decoders.image's
  // `shared_state_threshold`.
  int64_t cuda_shared_pixels = 0;
  int cuda_shared_states = 2;  // 1-16
  int trace_calls = 0;          // calls (from call trace_from) that print their per-image trace
  int trace_from = 20;
  // nvJPEG2000's library file; "" searches (nvjpeg2k_loader.h). Tools set it from
  // CONVEYOR_NVJPEG2K_PATH (decoder_env.h).
  std::string nvjpeg2k_path;
};

// Tools (the CLI, benchmarks) may adjust every decoder made afterwards in the process — how their
// environment's measuring switches reach decoders that pipelines make. Pipelines never read the
// environment. nullptr: none.
using DecoderOptionsHook = void (*)(GpuDecoderOptions&);
void SetDecoderOptionsHook(DecoderOptionsHook hook);

// Every GpuDecoder's image counts summed over the process (destroyed decoders included), with the
// availability, share and reason of the decoder that finished a batch last, and the nvJPEG memory
// the live decoders hold (cuda_memory, engines_memory): for tools that see only a pipeline, not
// its operators (the CLI's run summary, `conveyor bench`).
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
  // error messages (the op's spec.Describe()). Images DecodeAhead started for key ws.iteration()
  // whose bytes, size and window match are copied in from their ahead decode.
  void Decode(const std::vector<GpuDecodeSample>& samples, const Workspace& ws, const CpuDecodeFn& cpu_decode,
              const DescribeFn& describe, const std::string& where);

  // Look-ahead (options' ahead_*): a later call's samples (key: its ws.iteration(); `out` unused),
  // before it. Starts the costliest CUDA-backend ones on the decoder's ahead threads, each only if
  // `accept(i)` (the caller's structure check) says so; copies their bytes, so `samples` need not
  // outlive the call. May run on another thread while Decode runs. Replaces what an earlier
  // DecodeAhead of the same key started. Never throws for the images' sake: an image that fails
  // ahead is decoded by its call as usual. Does nothing when ahead_cost is 0 or nvJPEG is missing.
  void DecodeAhead(int64_t key, const std::vector<GpuDecodeSample>& samples, const std::function<bool(int)>& accept,
                   const std::string& where);
  // DecodeAhead would start something (ahead_cost set, nvJPEG's CUDA backend ready).
  bool ahead_enabled() const;

  GpuDecoderCounters counters() const;
  const GpuDecoderOptions& options() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace conveyor::ops
