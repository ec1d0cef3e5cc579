// EnginesPath's per-slot state (its calls, parts and slots), shared by engines_path.cc (handles,
// assignment, the calls) and engines_check.cc (nvJPEG's support check). Private to EnginesPath.
#pragma once

#include <string>
#include <vector>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "operators/decoders/engines_path.h"

namespace conveyor::ops {

// A part's nvJPEG calls, run in this order. The router's kOther group is split by exact chroma
// subsampling: one batched hardware call holding more than one subsampling ran ~2.5x slower per image
// than calls of one subsampling each (H100/H200, docs/decoding_measurements.md "Routing").
enum CallKind { kCall420, kCall444, kCall422, kCallGray, kCallOtherCss, kCallLarge, kCallKinds };

// One nvJPEG call of a part: the images of one group, with a state of its own.
struct EnginesPath::Call {
  nvjpegJpegState_t state = nullptr;
  std::vector<int> images;  // sample indices
  cuda::Event start, end;   // timing, on the part's stream
  int64_t pixels = 0;
  double host_s = 0;
  bool pending = false;  // GPU time not read yet
  nvjpegStatus_t failed = NVJPEG_STATUS_SUCCESS;  // the batched call's status when it failed
  std::string what;  // the failed call, for the message
  int prealloc_n = 0, prealloc_h = 0, prealloc_w = 0;
  bool prealloc_failed = false, preallocated = false;
  std::vector<const unsigned char*> data;
  std::vector<size_t> lengths;
  std::vector<nvjpegImage_t> out;
  std::vector<nvjpegDecodeParams_t> params;
};

struct EnginesPath::Part {
  Call calls[kCallKinds];  // by CallKind, run in this order
  cuda::Stream stream;        // parts after the first: their own stream
  double ready_wait_s = 0;
  bool end_pending_at_return = false;
  const Call* First() const {
    for (const Call& c : calls) {
      if (!c.images.empty()) return &c;
    }
    return nullptr;
  }
  const Call* Last() const {
    for (int g = kCallKinds - 1; g >= 0; --g) {
      if (!calls[g].images.empty()) return &calls[g];
    }
    return nullptr;
  }
  bool Empty() const { return First() == nullptr; }
  int64_t Images() const {
    int64_t n = 0;
    for (const Call& c : calls) n += static_cast<int64_t>(c.images.size());
    return n;
  }
};

struct EnginesPath::Slot {
  cuda::Event ready;  // ws.stream()'s work before the call
  std::vector<Part> parts;
  // [part][sample]: headers for the support check and decode parameters, made with that part's handle.
  std::vector<std::vector<nvjpegJpegStream_t>> streams;
  std::vector<std::vector<nvjpegDecodeParams_t>> params;
  std::vector<uint8_t> part_of, ok;  // per sample
  int parts_used = 0;
};

}  // namespace conveyor::ops
