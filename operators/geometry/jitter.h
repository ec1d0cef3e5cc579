// Jitter: every output pixel copies an input pixel a small random offset away (DALI's jitter).
// Plain functions, no CUDA syntax; the per-pixel rule (JitterPixel) is one host/device function,
// so CPU and GPU outputs are equal bit for bit.
//
// | what     | rule                                                                              |
// |----------|-----------------------------------------------------------------------------------|
// | draws    | pixel (x, y) of sample i uses draws 2p and 2p + 1 (p = y w + x) of Philox(seed,    |
// |          | node, iteration, i): dx = lo + u32 % (n + 1), then dy alike, lo = -floor(n / 2),   |
// |          | n = nDegree — DALI's range: [-1, 1] for n = 2, [-1, 2] for n = 3                   |
// | pixel    | out(y, x, c) = in(clamp(y + dy), clamp(x + dx), c): channels move together, the   |
// |          | source is clamped to the image (so nothing is ever filled)                        |
// | mask 0   | the sample is copied unchanged                                                    |
// | dtypes   | uint8, float16, bfloat16, float32 (values are moved, never converted)            |
// | GPU      | one launch per batch: 32 x 8 output tiles per block (tile_loop.cuh)               |
#pragma once

#include <cstdint>

#include "core/cuda/stream.h"
#include "core/op/philox.h"
#include "core/tensor/dtype.h"

namespace conveyor::ops {

inline constexpr int kMaxJitterDegree = 1 << 20;

struct JitterSample {
  const void* in;
  void* out;
  int32_t height, width, channels;
  int32_t n_degree;  // nDegree, 0..kMaxJitterDegree
  int32_t apply;     // mask: 0 copies the sample
  uint32_t sample;   // the sample index in the RNG key
  uint64_t seed, iteration;
  uint32_t node;
};

// Pixel (x, y) of one sample, every channel; `E` the element type (moved as is).
template <typename E>
CONVEYOR_HOST_DEVICE inline void JitterPixel(const JitterSample& s, int x, int y) {
  int sx = x, sy = y;
  if (s.apply != 0) {
    Philox rng(s.seed, s.node, s.iteration, s.sample);
    rng.Seek(2 * (static_cast<uint64_t>(y) * static_cast<uint64_t>(s.width) + static_cast<uint64_t>(x)));
    const uint32_t span = static_cast<uint32_t>(s.n_degree) + 1;
    const int lo = -(s.n_degree >> 1);
    sx += lo + static_cast<int>(rng.NextU32() % span);
    sy += lo + static_cast<int>(rng.NextU32() % span);
    sx = sx < 0 ? 0 : (sx >= s.width ? s.width - 1 : sx);
    sy = sy < 0 ? 0 : (sy >= s.height ? s.height - 1 : sy);
  }
  const E* in = static_cast<const E*>(s.in) + (static_cast<int64_t>(sy) * s.width + sx) * s.channels;
  E* out = static_cast<E*>(s.out) + (static_cast<int64_t>(y) * s.width + x) * s.channels;
  for (int c = 0; c < s.channels; ++c) out[c] = in[c];
}

void JitterCpu(const JitterSample& s, DType type);
// `samples`: n device-readable descriptors; `max_pixels_hint` (from capacities) sizes the grid.
void JitterGpu(const JitterSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream);

}  // namespace conveyor::ops
