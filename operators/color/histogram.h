// Histogram operators of the AutoAugment set on uint8 images: each sample's per-channel histogram
// gives a 256-entry lookup table per channel, which maps the sample. Plain functions, no CUDA
// syntax; the table rule (BuildLut) is one host/device function.
//
// | mode          | table per channel (h = histogram, integers unless stated)                    |
// |---------------|-------------------------------------------------------------------------------|
// | kAutoContrast | lo/hi = first/last nonzero bin; hi > lo: v → trunc(min(255, max(0, (v - lo) * |
// |               | (255f / (hi - lo))))) in float32 (torchvision's autocontrast); else identity   |
// | kEqualize     | step = (Σh - h[last nonzero]) / 255; step 0: identity; else v → 0 for v = 0,   |
// |               | min(255, (Σ_{u<v} h[u] + step / 2) / step) (torchvision's equalize)            |
//
// Input HWC (1..4 channels) or HW. CPU and GPU bit-identical. GPU: one block per sample
// (histogram in shared memory, then the table, then the mapping): one launch per batch.
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/op/philox.h"  // CONVEYOR_HOST_DEVICE

namespace conveyor::ops {

inline constexpr int kMaxHistogramChannels = 4;

enum class HistogramMode : int32_t { kAutoContrast = 0, kEqualize = 1 };

struct HistogramSample {
  const uint8_t* in;
  uint8_t* out;
  int64_t count;     // elements
  int32_t channels;  // 1..kMaxHistogramChannels
  HistogramMode mode;
};

// The table of one channel from its 256-bin histogram.
CONVEYOR_HOST_DEVICE inline void BuildLut(HistogramMode mode, const int64_t* hist, uint8_t* lut) {
  int lo = 0, hi = 255;
  while (lo < 255 && hist[lo] == 0) ++lo;
  while (hi > 0 && hist[hi] == 0) --hi;
  for (int v = 0; v < 256; ++v) lut[v] = static_cast<uint8_t>(v);
  if (mode == HistogramMode::kAutoContrast) {
    if (hi <= lo) return;
    const float scale = 255.f / static_cast<float>(hi - lo);
    for (int v = 0; v < 256; ++v) {
      const float x = static_cast<float>(v - lo) * scale;
      lut[v] = static_cast<uint8_t>(x < 0.f ? 0.f : x > 255.f ? 255.f : x);
    }
    return;
  }
  int64_t total = 0;
  for (int v = 0; v < 256; ++v) total += hist[v];
  const int64_t step = (total - hist[hi]) / 255;
  if (step == 0) return;
  int64_t cum = 0;
  for (int v = 0; v < 256; ++v) {
    const int64_t m = (cum + step / 2) / step;
    lut[v] = static_cast<uint8_t>(v == 0 ? 0 : m > 255 ? 255 : m);
    cum += hist[v];
  }
}

void HistogramCpu(const HistogramSample& s);
void HistogramGpu(const HistogramSample* samples, int n, cuda::StreamView stream);

}  // namespace conveyor::ops
