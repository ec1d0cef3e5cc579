// GpuDecoder's internals, shared by its two files (private to the gpu_decoder library: listed in
// its srcs, so nothing else can include it):
//   gpu_decoder_setup.cc  options hook, nvJPEG's paths made and released, slots, counters;
//   gpu_decoder.cc        Decode: route, every path side by side, refusals down their chains.
// The paths live in engines_path.*, cuda_path.*, jpeg2000_path.*, cpu_path.*; the policy in decode_route.* and
// decode_balance.*.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda/event.h"
#include "operators/decoders/ahead_path.h"
#include "operators/decoders/cpu_path.h"
#include "operators/decoders/cuda_path.h"
#include "operators/decoders/decode_balance.h"
#include "operators/decoders/decode_route.h"
#include "operators/decoders/engines_path.h"
#include "operators/decoders/gpu_decoder.h"
#include "operators/decoders/jpeg2000_path.h"
#include "operators/decoders/parts_tuner.h"

namespace conveyor::ops {

struct GpuDecoder::Impl {
  GpuDecoderOptions options;
  const NvjpegLibrary* lib = nullptr;  // null: everything on the CPU path
  CudaPath cuda;
  AheadPath ahead;  // after `cuda`: stopped before the workers it uses are destroyed
  EnginesPath engines;
  CpuPath cpu;
  Jpeg2000Path jpeg2000;
  bool jpeg2000_tried = false;  // nvJPEG2000's load attempted (at the first JPEG 2000 image)
  DecodeRouter router{RouterConfig{}};
  PartsTuner tuner{1, false};
  // One per tuner choice: each settles at its own handles' rates (an "engines only" one: share 1).
  DecodeBalance balances[PartsTuner::kMaxChoices];
  DecodeBalance& balance() { return balances[tuner.choice()]; }

  struct SlotEvents {
    cuda::Event done;   // end of this slot's last Decode on ws.stream()
    cuda::Event start;  // outputs allocated: the CUDA workers' streams wait for it
    int choice = 0;     // the tuner's choice in this slot's last call (whose engines' times it reads)
  };
  std::vector<std::unique_ptr<SlotEvents>> slots;
  SlotEvents& Slot(int s);

  mutable std::mutex counters_mu;
  GpuDecoderCounters counters;
  int64_t calls_made = 0;

  // Per-call lists (sample indices), reused.
  std::vector<int> balanced, cuda_list, cpu_list, jpeg2000_list, refused, fallbacks;
  std::vector<int> engine_groups[kEngineGroups];  // by EngineGroup
  std::vector<int64_t> balanced_pixels;
  std::vector<uint8_t> to_engines;
  std::vector<AheadPath::Job*> claimed;  // [sample]: its look-ahead job, this call
  std::vector<int64_t> item_order, item_cost;  // the host items' order (gpu_decoder.cc, OrderByCost)

  void Init();
  void Unavailable(const std::string& why);
  // Loads nvJPEG2000 and makes its path, once; on failure says why once on stderr (JPEG 2000 then
  // stays on the CPU path). Called by Decode at the first JPEG 2000 image.
  void InitJpeg2000();
  // One call's counters into the decoder's and the process's totals.
  void Account(const GpuDecoderCounters& call);
};

}  // namespace conveyor::ops
