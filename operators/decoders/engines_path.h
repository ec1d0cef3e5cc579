// GpuDecoder's engines path: the GPU's hardware JPEG engines through nvJPEG's batched hardware
// backend. Private to gpu_decoder.
//
// The engines' call is CPU-bound on its thread (~27-45 µs per image on the H100), so the images
// are split over up to `engine_threads` hardware handles ("parts"; how many a call uses is the
// PartsTuner's choice), each driven from a thread of its own during the call. Each nvJPEG call
// holds images of one kind only, with a state of its own: 4:2:0 photos split over the parts; the
// router's other group (4:4:4, 4:2:2, gray, ...) in one call per exact subsampling, each on the
// part least loaded so far (one hardware call of mixed subsamplings ran ~2.5x slower per image);
// the large images in a call on the first — so a few such images never change how the 4:2:0 batch
// is decoded or sized. The 4:2:0 images are split so each part's pixels, its other calls'
// included, come out even. Part 0 runs on ws.stream(), the others on their own streams, which wait
// for the call's `ready` event and which ws.stream() waits for afterwards.
//
// Each (part, group) state's buffers are preallocated for the largest batch and image seen (or the
// preallocate hints), so a batch that grows does not make nvJPEG reallocate inside the decode,
// which synchronises the device.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/op/workspace.h"
#include "operators/decoders/decode_path_common.h"
#include "operators/decoders/decode_trace.h"
#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"

namespace conveyor::ops {

class EnginesPath {
 public:
  EnginesPath();
  ~EnginesPath();
  EnginesPath(const EnginesPath&) = delete;
  EnginesPath& operator=(const EnginesPath&) = delete;

  // Makes the handles; "" or why the engines cannot be used (no engines on this GPU is not an error).
  std::string Init(const NvjpegLibrary& lib, const GpuDecoderOptions& options, unsigned flags,
                   GpuDecoderCounters& counters);
  void Destroy() noexcept;
  bool ready() const { return !handles_.empty(); }
  int parts() const { return static_cast<int>(handles_.size()); }
  NvjpegMemory memory() const;

  // One call. Begin: record `ready` on ws.stream() (before phase A). Assign the images of each group
  // (sample indices) to at most `max_parts` parts. Check them in parallel: *refused gets the images
  // the engines decline, removed from their parts. Decode part p on its thread (all parts side by side).
  // End: ws.stream() waits for the other parts; this call's counters.
  void Begin(int slot, StreamView stream);
  void Assign(int slot, const std::vector<int> (&groups)[kEngineGroups], const std::vector<GpuDecodeSample>& samples,
              int max_parts);
  // Images whose header the options trust (Trusted) skip nvJPEG's check; their count goes to *unchecked.
  void Check(int slot, const std::vector<GpuDecodeSample>& samples, const Workspace& ws,
             const std::function<std::string(int)>& sample_where, std::vector<int>* refused, int64_t* unchecked);
  // Whether an image skips nvJPEG's support check: EnginesCheck::kNever, or kTrustCommon with the
  // common layout (ImageInfo::jpeg_common_layout) at a size from 16 to 16384 pixels a side — until
  // an engines' call has failed.
  bool Trusted(const GpuDecodeSample& sample) const;
  int parts_used(int slot) const;
  // Part 0 on ws_stream, the others on their own streams.
  void DecodePart(int slot, int part, const std::vector<GpuDecodeSample>& samples, StreamView ws_stream,
                  const std::string& where, Clock::time_point phase_start, DecodeTrace* trace);
  void End(int slot, StreamView stream, GpuDecoderCounters& call);
  // After the parts joined: the images of this call's engines' calls that failed (nvJPEG refused
  // the batch) into *failed, once their streams' work has finished (a host wait: the chain's next
  // path rewrites their outputs). After the first failure every image gets nvJPEG's check. Says
  // so once on stderr; the number of failed calls into call.hw_failed_calls.
  void TakeFailed(int slot, StreamView stream, std::vector<int>* failed, GpuDecoderCounters& call);
  // The engines' GPU time of the slot's previous call, read at the slot's next use (its events
  // have completed by then), never waited for: the counters and a measurement for the balance.
  // Returns {pixels, seconds}: all parts' pixels over the longest part (they run side by side).
  std::pair<double, double> ReadTimes(int slot, GpuDecoderCounters& call);

 private:
  struct Call;
  struct Part;
  struct Slot;
  Slot& SlotAt(int s);
  nvjpegHandle_t Handle(int part) const { return handles_[static_cast<size_t>(part)]; }
  void Run(Part& part, int p, int group, const std::vector<GpuDecodeSample>& samples, StreamView stream,
           const std::string& where);

  const NvjpegLibrary* lib_ = nullptr;
  GpuDecoderOptions options_;
  unsigned flags_ = 0;
  std::vector<std::unique_ptr<NvjpegAllocators>> alloc_;  // one per handle, declared first: outlive them
  std::vector<nvjpegHandle_t> handles_;
  std::vector<std::unique_ptr<Slot>> slots_;
  bool check_all_ = false;  // an engines' call failed: nvJPEG's check for every image from then on
  // The driver's memory taken while the handles were made / the states preallocated (NvjpegMemory);
  // the parts' preallocations take turns so their windows do not overlap.
  std::atomic<int64_t> create_bytes_{0}, prealloc_bytes_{0};
  std::mutex prealloc_mu_;
};

}  // namespace conveyor::ops
