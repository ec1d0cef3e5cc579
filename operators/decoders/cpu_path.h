// GpuDecoder's CPU path: the operator's own CPU decoder (libjpeg-turbo, libpng) into pinned
// staging, then one copy per image on ws.stream(). It takes what no GPU path may (PNG,
// arithmetic-coded JPEG), what it decodes fastest (progressive JPEG, by default) and what a GPU
// path refused. Private to gpu_decoder.
//
// Two staging areas per slot: one for the images routed here (decoded in phase B beside the GPU
// paths) and one for fallbacks (phase C): a copy already queued from the first never sees its
// buffer replaced while the second grows.
#pragma once

#include <cstdint>
#include <vector>

#include "core/memory/buffer.h"
#include "operators/decoders/decode_path_common.h"

namespace conveyor::ops {

class CpuPath {
 public:
  enum Area { kRouted = 0, kFallback = 1 };

  // Lays out `images` (sample indices) in the slot's staging area, growing it when needed; call
  // before any Decode into that area in this call.
  void Prepare(int slot, Area area, const std::vector<int>& images, const std::vector<GpuDecodeSample>& samples,
               int channels);
  // The k-th image of the area's list decoded into its staging place (any thread).
  void Decode(int slot, Area area, size_t k, const CpuDecodeFn& cpu_decode);
  // One copy per image of the area on `stream`.
  void Upload(int slot, Area area, const std::vector<GpuDecodeSample>& samples, int channels, StreamView stream);

 private:
  struct Staging {
    Buffer buffer;  // pinned
    std::vector<int> images;
    std::vector<size_t> offsets;
  };
  Staging& At(int slot, Area area);
  std::vector<Staging> staging_;  // [slot * 2 + area]
};

}  // namespace conveyor::ops
