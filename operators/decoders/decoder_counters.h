// GpuDecoder's counters: images per path, where a call's time goes, the balance, nvJPEG's memory.
// One table (DecoderCounterFields) names every summed field once; adding two readings, the CLI's
// per-call figures and the benchmarks' columns all walk it, so a new counter is one line there.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "operators/decoders/nvjpeg/nvjpeg_memory.h"

namespace conveyor::ops {

struct GpuDecoderCounters {
  // Summed over calls (in the table).
  int64_t images_hardware = 0;  // decoded by the JPEG engines
  int64_t images_cuda = 0;      // nvJPEG CUDA backend
  int64_t images_cuda_shared = 0;  // of those, decoded on the workers' shared states (cuda_shared_pixels)
  int64_t images_ahead = 0;     // of images_cuda, decoded before their call (DecodeAhead) and copied in
  int64_t ahead_taken_back = 0;  // images picked ahead that their call decoded itself (not yet started)
  int64_t images_cpu = 0;       // CPU path: routed there (PNG, progressive, ...) or fallen back
  int64_t images_jpeg2000 = 0;  // nvJPEG2000 (JPEG 2000 it refuses is counted in images_cpu, fallbacks)
  int64_t fallbacks = 0;        // images a GPU path refused, decoded by the next path of their route
  int64_t images_engines_other = 0;  // engines' images in a call of their own (not 4:2:0: 4:4:4, gray, ...)
  int64_t calls = 0;            // Decode calls
  int64_t hw_batches = 0;       // engines' calls whose GPU time has been read
  int64_t hw_preallocations = 0;  // the engines' buffers preallocated (first batch, then growth)
  int64_t slot_pending_calls = 0;  // calls whose slot's previous work had not finished at their start
  int64_t hw_end_pending = 0;   // engines' calls whose end event had not completed when Decode returned
  int64_t hw_unchecked = 0;     // engines' images given to them without nvJPEG's support check (EnginesCheck)
  int64_t hw_failed_calls = 0;  // engines' calls that failed; their images went down the chain
  double hw_host_seconds = 0;   // host time inside the engines' calls (+ Initialize)
  double hw_gpu_seconds = 0;    // GPU time between the events around the engines' calls
  double hw_ready_wait_seconds = 0;  // the engines' host wait for earlier work on the stream
  double hw_start_seconds = 0;  // from phase B's start to the engines' first call
  double cuda_seconds = 0;      // wall time of the CUDA backend's part of phase B
  // The CUDA backend's workers, thread time summed: nvJPEG's parse + host Huffman, waiting for a
  // pinned buffer's previous transfer, issuing the transfer + device phase.
  double cuda_host_seconds = 0, cuda_pinned_wait_seconds = 0, cuda_issue_seconds = 0;
  double cpu_seconds = 0;       // thread time of the CPU path's decodes (routed and fallen back)
  double jpeg2000_seconds = 0;  // thread time of the nvJPEG2000 path's calls (parse, decode issue, waits)
  double classify_seconds = 0;  // phase A: the route of every image, the engines' support checks
  double phase_b_seconds = 0;   // phase B: every path side by side
  double phase_c_seconds = 0;   // phase C: fallbacks and the CPU path's uploads
  double slot_wait_seconds = 0;  // at the call's start: the slot's previous work
  double ahead_wait_seconds = 0;  // after phase B: waiting for images decoded ahead to finish their host phase
  double call_seconds = 0;      // whole Decode calls

  // The latest state (not summed).
  bool nvjpeg_available = false;
  bool hardware_available = false;
  // nvJPEG2000: loaded at the first JPEG 2000 image; the reason when that failed ("" before).
  bool nvjpeg2k_available = false;
  std::string nvjpeg2k_unavailable_reason;
  double hw_share = 0;  // the engines' current share of the images both GPU paths may take (by pixels)
  double hw_rate = 0, cuda_rate = 0;  // the balancer's smoothed rates, megapixels/s
  int hw_engines = 0, hw_cores_per_engine = 0;  // nvjpegGetHardwareDecoderInfo (0: not reported)
  int hw_parts = 0;  // nvJPEG hardware handles sharing the engines' images, each on its own thread
  int hw_parts_chosen = 0;  // the handles the next call may use (PartsTuner's choice, or hw_parts)
  bool hw_engines_only_chosen = false;  // the next call's 4:2:0 candidates all on the engines (PartsTuner)
  bool hw_no_pipeline = false;  // engines' handles made with NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE
  // nvJPEG's memory, per handle kind, as far as it comes through our allocators (nvjpeg_allocators.h).
  nvjpeg::NvjpegMemory cuda_memory, engines_memory;
  std::string unavailable_reason;  // why nvJPEG (or the engines) are not used
};

// One summed field: its name (JSON key, CLI column) and where it lives; exactly one member is set.
struct DecoderCounterField {
  const char* name;
  int64_t GpuDecoderCounters::*count = nullptr;
  double GpuDecoderCounters::*seconds = nullptr;
  double Value(const GpuDecoderCounters& c) const {
    return count != nullptr ? static_cast<double>(c.*count) : c.*seconds;
  }
};
std::span<const DecoderCounterField> DecoderCounterFields();

// to += every summed field of `call`.
void AddCounters(GpuDecoderCounters& to, const GpuDecoderCounters& call);
// `to`'s latest-state fields from `from` (availability, share, rates, engines, reason).
void CopyLatest(GpuDecoderCounters& to, const GpuDecoderCounters& from);

}  // namespace conveyor::ops
