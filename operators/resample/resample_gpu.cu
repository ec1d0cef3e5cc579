// The resampling kernels (one for 3-channel samples, one for the rest; see kC): per batch, blockIdx.y = sample, blocks along x visit the
// sample's 32 x 16 output tiles (grid-stride). Per tile:
//
//   taps of the tile's 32 columns and 16 rows          (shared; first 16 weights cached)
//   for each chunk of the input rows the tile needs:    (one chunk unless the downscale is large)
//     horizontal pass: window rows -> float tmp[row][32][C]   (shared memory, never global)
//     vertical pass:   acc[pixel][C] += w * tmp         (registers, 2 pixels per thread)
//   write the 32 x 16 x C outputs (consecutive threads write consecutive pixels)
//
// The input is read once per tile (plus the filter's halo), the output written once; the
// intermediate never leaves the SM. Arithmetic: resample_math.h, same as the CPU reference.
// Linear and nearest without antialiasing (two taps at most) take TwoTapKernel instead: each
// output pixel straight from the input, the tile's taps in shared memory (see there).
#include <algorithm>
#include <type_traits>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/resample/resample.h"

namespace conveyor::ops {
namespace {

using resample::Axis;
using resample::FAdd;
using resample::Filter;
using resample::FMul;
using resample::MakeTap;
using resample::Tap;
using resample::Weight;

constexpr int kTileW = 32;
constexpr int kTileH = 16;
constexpr int kRowThreads = 8;  // blockDim = (kTileW, kRowThreads)
constexpr int kPixelsPerThread = kTileH / kRowThreads;
constexpr int kCachedTaps = 16;
// ResampleKernel's unrolled path: taps per axis up to this (<= kCachedTaps). Linear: downscales
// up to ~3x; cubic (twice the support): up to ~2.5x, 375x500 -> 224 included.
template <Filter F>
constexpr int kUnrolledTaps = F == Filter::kCubic ? 12 : 8;

// The reference starts every sum at 0.f and adds the first product to it. 0 + x == x for every x
// but -0, and with uint8 inputs and non-negative weights (nearest, linear) no product is -0: the
// kernels start from the first product instead, one FADD less per sum, bit for bit the same.
template <typename In, Filter F>
constexpr bool kSkipZeroAdd = std::is_same_v<In, uint8_t> && F != Filter::kCubic;

// An upper bound on the taps any output index of this axis has: lo and hi (resample_math.h) are
// floor(c -/+ support + 0.5), at most floor(2 support) + 1 apart; one more for rounding.
__device__ __forceinline__ int MaxTaps(Filter f, const Axis& a) {
  return f == Filter::kNearest ? 1 : static_cast<int>(floorf(2.f * a.support)) + 2;
}

// kC = 3: the kernel for 3-channel samples (accumulators for 3 channels and a 16 KiB row buffer;
// the 8-channel kernel's 80 registers and 36 KiB gave 3 blocks per SM on the H100). kC = 0: any
// other count up to kMaxResampleChannels. Both are launched and each skips the other's samples:
// the channel count is per-iteration data, which a captured launch must not bake in.
template <int kC>
constexpr int kChannels = kC == 0 ? kMaxResampleChannels : kC;
template <int kC>
constexpr int kTmpFloats = kC == 0 ? 8192 : 4096;  // the horizontal pass's rows of one chunk

template <typename Out>
__device__ __forceinline__ Out Convert(float v) {
  if constexpr (sizeof(Out) == 1) {
    return resample::ToUint8(v);
  } else {
    return v;
  }
}

template <typename In, typename Out, Filter F, int kC>
__global__ void __launch_bounds__(kTileW* kRowThreads, 5) ResampleKernel(const ResampleDesc* descs) {
  constexpr int kCh = kChannels<kC>;
  __shared__ Tap tap_x[kTileW];
  __shared__ Tap tap_y[kTileH];
  __shared__ float w_x[kCachedTaps][kTileW];
  __shared__ float w_y[kCachedTaps][kTileH];
  __shared__ float tmp[kTmpFloats<kC>];

  const ResampleDesc d = descs[blockIdx.y];
  if (d.out_h <= 0 || d.out_w <= 0 || d.channels <= 0) return;
  if (kC == 0 ? d.channels == 3 : d.channels != kC) return;  // the other kernel's sample
  const int c = kC == 0 ? d.channels : kC;
  const In* in = static_cast<const In*>(d.in) + static_cast<int64_t>(d.y0) * d.in_row_stride +
                 static_cast<int64_t>(d.x0) * c;
  Out* out = static_cast<Out*>(d.out);
  const int tiles_x = (d.out_w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((d.out_h + kTileH - 1) / kTileH);
  const int rows_per_chunk = kTmpFloats<kC> / (kTileW * c);
  // Per sample, so every thread of the block takes the same path: a per-column choice split warps
  // whose columns straddle the limit and ran both paths (cubic antialiased resize on the H100:
  // 0.556 -> 0.684 ms).
  const bool unrolled_x = MaxTaps(F, d.axis_x) <= kUnrolledTaps<F>;
  const bool unrolled_y = MaxTaps(F, d.axis_y) <= kUnrolledTaps<F>;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kTileW + tx;

  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int tile_y = tile / tiles_x;
    const int ox0 = (tile - tile_y * tiles_x) * kTileW;
    const int oy0 = tile_y * kTileH;
    const int tw = min(kTileW, d.out_w - ox0);
    const int th = min(kTileH, d.out_h - oy0);

    __syncthreads();  // the previous tile is done with the taps and tmp
    if (tid < tw) {
      tap_x[tid] = MakeTap(F, d.axis_x, ox0 + tid);
    } else if (tid >= kTileW && tid - kTileW < th) {
      tap_y[tid - kTileW] = MakeTap(F, d.axis_y, oy0 + tid - kTileW);
    }
    __syncthreads();
    // The cached weights, one (index, tap) per thread: every thread works, where one thread per
    // index used to loop over its taps while the rest of the block waited.
    for (int e = tid; e < kCachedTaps * (kTileW + kTileH); e += kTileW * kRowThreads) {
      const int k = e / (kTileW + kTileH), i = e - k * (kTileW + kTileH);
      if (i < kTileW) {
        if (i < tw && k < tap_x[i].count) w_x[k][i] = Weight(F, d.axis_x, tap_x[i], tap_x[i].lo + k);
      } else if (i - kTileW < th) {
        const Tap& t = tap_y[i - kTileW];
        if (k < t.count) w_y[k][i - kTileW] = Weight(F, d.axis_y, t, t.lo + k);
      }
    }
    __syncthreads();
    const int row_lo = tap_y[0].lo;
    const int row_hi = tap_y[th - 1].lo + tap_y[th - 1].count;  // lo and lo + count grow with the row

    float acc[kPixelsPerThread][kCh];
#pragma unroll
    for (int p = 0; p < kPixelsPerThread; ++p) {
#pragma unroll
      for (int ch = 0; ch < kCh; ++ch) acc[p][ch] = 0.f;
    }

    for (int chunk_lo = row_lo; chunk_lo < row_hi; chunk_lo += rows_per_chunk) {
      const int chunk_hi = min(row_hi, chunk_lo + rows_per_chunk);
      // Horizontal pass: thread column tx, rows strided by kRowThreads.
      if (tx < tw) {
        const Tap t = tap_x[tx];
        if (unrolled_x) {
          // The common case (downscales up to ~3.5x linear, ~1.7x cubic): the taps unrolled, their
          // weights in registers for all the thread's rows, each load at a constant offset from
          // the row's first tap — no per-tap loop, weight or address arithmetic. ncu on the H100
          // counted ~600 instructions per output pixel in the looped form (ALU the busiest pipe).
          float wk[kUnrolledTaps<F>];
#pragma unroll
          for (int k = 0; k < kUnrolledTaps<F>; ++k) wk[k] = k < t.count ? w_x[k][tx] : 0.f;
          const In* first = in + static_cast<int64_t>(t.lo) * c;
#pragma unroll 1
          for (int r = chunk_lo + ty; r < chunk_hi; r += kRowThreads) {
            const In* px = first + static_cast<int64_t>(r) * d.in_row_stride;
            float h[kCh];
#pragma unroll
            for (int ch = 0; ch < kCh; ++ch) h[ch] = 0.f;
#pragma unroll
            for (int k = 0; k < kUnrolledTaps<F>; ++k) {
              if (k < t.count) {
#pragma unroll
                for (int ch = 0; ch < kCh; ++ch) {
                  if (ch < c) {
                    const float p = FMul(wk[k], resample::ToFloat(px[k * c + ch]));
                    h[ch] = kSkipZeroAdd<In, F> && k == 0 ? p : FAdd(h[ch], p);
                  }
                }
              }
            }
            float* dst = tmp + ((r - chunk_lo) * kTileW + tx) * c;
#pragma unroll
            for (int ch = 0; ch < kCh; ++ch) {
              if (ch < c) dst[ch] = h[ch];
            }
          }
        } else {
#pragma unroll 2
          for (int r = chunk_lo + ty; r < chunk_hi; r += kRowThreads) {  // 2 rows' loads in flight
            const In* row = in + static_cast<int64_t>(r) * d.in_row_stride;
            float h[kCh];
#pragma unroll
            for (int ch = 0; ch < kCh; ++ch) h[ch] = 0.f;
            for (int k = 0; k < t.count; ++k) {
              const float w = k < kCachedTaps ? w_x[k][tx] : Weight(F, d.axis_x, t, t.lo + k);
              const In* px = row + static_cast<int64_t>(t.lo + k) * c;
#pragma unroll
              for (int ch = 0; ch < kCh; ++ch) {
                if (ch < c) h[ch] = FAdd(h[ch], FMul(w, resample::ToFloat(px[ch])));
              }
            }
            float* dst = tmp + ((r - chunk_lo) * kTileW + tx) * c;
#pragma unroll
            for (int ch = 0; ch < kCh; ++ch) {
              if (ch < c) dst[ch] = h[ch];
            }
          }
        }
      }
      __syncthreads();
      // Vertical pass: the rows of this chunk inside each owned pixel's taps, in index order.
#pragma unroll
      for (int p = 0; p < kPixelsPerThread; ++p) {
        const int r = ty + p * kRowThreads;
        if (r < th && tx < tw) {
          const Tap t = tap_y[r];
          const int j_lo = max(t.lo, chunk_lo), j_hi = min(t.lo + t.count, chunk_hi);
          if (unrolled_y) {  // unrolled as the horizontal pass; same taps, same order
            const float* src = tmp + ((t.lo - chunk_lo) * kTileW + tx) * c;
#pragma unroll
            for (int k = 0; k < kUnrolledTaps<F>; ++k) {
              if (t.lo + k >= j_lo && t.lo + k < j_hi) {
                const float w = w_y[k][r];
#pragma unroll
                for (int ch = 0; ch < kCh; ++ch) {
                  if (ch < c) acc[p][ch] = FAdd(acc[p][ch], FMul(w, src[k * kTileW * c + ch]));
                }
              }
            }
            continue;
          }
          for (int j = j_lo; j < j_hi; ++j) {
            const int k = j - t.lo;
            const float w = k < kCachedTaps ? w_y[k][r] : Weight(F, d.axis_y, t, j);
            const float* src = tmp + ((j - chunk_lo) * kTileW + tx) * c;
#pragma unroll
            for (int ch = 0; ch < kCh; ++ch) {
              if (ch < c) acc[p][ch] = FAdd(acc[p][ch], FMul(w, src[ch]));
            }
          }
        }
      }
      __syncthreads();  // before the next chunk overwrites tmp
    }

#pragma unroll
    for (int p = 0; p < kPixelsPerThread; ++p) {
      const int r = ty + p * kRowThreads;
      if (r < th && tx < tw) {
        Out* dst = out + (static_cast<int64_t>(oy0 + r) * d.out_w + ox0 + tx) * c;
#pragma unroll
        for (int ch = 0; ch < kCh; ++ch) {
          if (ch < c) dst[ch] = Convert<Out>(acc[p][ch]);
        }
      }
    }
  }
}

// Linear or nearest without antialiasing: at most two taps per axis, so each output pixel is
// computed straight from the input — no shared intermediate rows, no chunks. A block covers a
// 32 x 32 output tile (block 32 x 8, four rows per thread); the tile's taps and weights are
// computed once into shared memory. Same expressions in the same order as the CPU reference
// (horizontal taps of each input row into float, then the rows in increasing order), so the
// output is the same bit for bit.
//
// kC = 3 (3-channel samples): a thread's rows go in passes of kPassRows, and each pass issues
// every load of its rows (2 input rows x 2 taps x 3 channels each; 1 x 1 for nearest) before any
// arithmetic, so a thread waits for memory once per pass instead of once per input row (8 times;
// the H100 ran the one-row-at-a-time loop at 0.37 of a copy's bandwidth, nearest at 0.65). Linear:
// two passes of two rows; nearest: one pass of four. On the H100 (2026-11-25, A B A B, 375x500 ->
// 224, batch 256) four rows per pass took nearest from 0.082 to 0.076 ms (0.94 of a copy) but
// linear from 0.163 to 0.217 ms (its 48 loaded values per pass cost more occupancy than they
// save waits), so each filter keeps the pass it was measured fastest with.
// kC = 0: any other channel count up to kMaxResampleChannels, one row at a time. One launch takes
// both: each block picks its sample's path (the channel count is per-iteration data, so a captured
// launch must not choose). Two launches, each skipping the other's samples, cost an empty 8,192-block
// launch per batch: 11.4 us of the 0.163 ms linear resize on the H100 (ncu, 2026-11-25).
constexpr int kDirectTileH = 32;
constexpr int kDirectRows = kDirectTileH / kRowThreads;
// Output rows whose loads a thread issues together (kC = 3; see above).
template <Filter F>
constexpr int kPassRows = F == Filter::kNearest ? 4 : 2;

// The tile's taps and weights, in shared memory (one set per block, whichever path it takes).
struct TwoTapTaps {
  int lo_x[kTileW], n_x[kTileW], lo_y[kDirectTileH], n_y[kDirectTileH];
  float w_x[2][kTileW], w_y[2][kDirectTileH];
};

// One sample's tiles (the block's share of them) for channel path kC.
template <typename In, typename Out, Filter F, int kC>
__device__ __forceinline__ void TwoTapSample(const ResampleDesc& d, TwoTapTaps& s) {
  const int c = kC != 0 ? kC : d.channels;
  const In* in = static_cast<const In*>(d.in) + static_cast<int64_t>(d.y0) * d.in_row_stride +
                 static_cast<int64_t>(d.x0) * c;
  Out* out = static_cast<Out*>(d.out);
  const int tiles_x = (d.out_w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((d.out_h + kDirectTileH - 1) / kDirectTileH);
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kTileW + tx;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int tile_y = tile / tiles_x;
    const int ox0 = (tile - tile_y * tiles_x) * kTileW;
    const int oy0 = tile_y * kDirectTileH;
    __syncthreads();  // the previous tile is done with the taps
    if (tid < kTileW) {
      if (ox0 + tid < d.out_w) {
        const Tap t = MakeTap(F, d.axis_x, ox0 + tid);
        s.lo_x[tid] = t.lo;
        s.n_x[tid] = t.count < 2 ? t.count : 2;
        for (int k = 0; k < s.n_x[tid]; ++k) s.w_x[k][tid] = Weight(F, d.axis_x, t, t.lo + k);
      }
    } else if (tid < kTileW + kDirectTileH) {
      const int r = tid - kTileW;
      if (oy0 + r < d.out_h) {
        const Tap t = MakeTap(F, d.axis_y, oy0 + r);
        s.lo_y[r] = t.lo;
        s.n_y[r] = t.count < 2 ? t.count : 2;
        for (int k = 0; k < s.n_y[r]; ++k) s.w_y[k][r] = Weight(F, d.axis_y, t, t.lo + k);
      }
    }
    __syncthreads();
    const int ox = ox0 + tx;
    if (ox >= d.out_w) continue;
    const int xl = s.lo_x[tx], xn = s.n_x[tx];
    const float wx0 = s.w_x[0][tx];
    const float wx1 = xn > 1 ? s.w_x[1][tx] : 0.f;
    if constexpr (kC != 0) {
      // Taps per axis this filter can have: nearest always 1, linear at most 2.
      constexpr int kTaps = F == Filter::kNearest ? 1 : 2;
      const int x1 = xn > 1 ? c : 0;  // the second horizontal tap; the first again when there is none
      constexpr int kPass = kPassRows<F>;
#pragma unroll
      for (int pass = 0; pass < kDirectRows; pass += kPass) {
        In v[kPass][kTaps][kTaps][kC];  // [row of the pass][vertical tap][horizontal tap][channel]
        bool valid[kPass];
        int ny[kPass];  // vertical taps to add (0 when there is no horizontal one: the output is 0)
        float wy[kPass][2];
#pragma unroll
        for (int q = 0; q < kPass; ++q) {
          const int r = ty + (pass + q) * kRowThreads;
          valid[q] = oy0 + r < d.out_h;
          ny[q] = valid[q] && xn > 0 ? s.n_y[r] : 0;
          if (ny[q] > 0) {
            wy[q][0] = s.w_y[0][r];
            wy[q][1] = ny[q] > 1 ? s.w_y[1][r] : 0.f;
            const In* row0 = in + static_cast<int64_t>(s.lo_y[r]) * d.in_row_stride + static_cast<int64_t>(xl) * c;
            const In* rows[2] = {row0, ny[q] > 1 ? row0 + d.in_row_stride : row0};
#pragma unroll
            for (int k = 0; k < kTaps; ++k) {
#pragma unroll
              for (int t = 0; t < kTaps; ++t) {
#pragma unroll
                for (int ch = 0; ch < kC; ++ch) v[q][k][t][ch] = rows[k][(t == 0 ? 0 : x1) + ch];
              }
            }
          }
        }
#pragma unroll
        for (int q = 0; q < kPass; ++q) {
          if (!valid[q]) continue;
          const int oy = oy0 + ty + (pass + q) * kRowThreads;
          float acc[kC];
#pragma unroll
          for (int ch = 0; ch < kC; ++ch) acc[ch] = 0.f;
#pragma unroll
          for (int k = 0; k < kTaps; ++k) {
            if (k >= ny[q]) break;
#pragma unroll
            for (int ch = 0; ch < kC; ++ch) {
              const float h0 = FMul(wx0, resample::ToFloat(v[q][k][0][ch]));
              float h = kSkipZeroAdd<In, F> ? h0 : FAdd(0.f, h0);
              if (kTaps > 1 && xn > 1) h = FAdd(h, FMul(wx1, resample::ToFloat(v[q][k][kTaps - 1][ch])));
              acc[ch] = kSkipZeroAdd<In, F> && k == 0 ? FMul(wy[q][k], h) : FAdd(acc[ch], FMul(wy[q][k], h));
            }
          }
          Out* dst = out + (static_cast<int64_t>(oy) * d.out_w + ox) * kC;
#pragma unroll
          for (int ch = 0; ch < kC; ++ch) dst[ch] = Convert<Out>(acc[ch]);
        }
      }
    } else {
#pragma unroll
      for (int p = 0; p < kDirectRows; ++p) {
        const int r = ty + p * kRowThreads;
        const int oy = oy0 + r;
        if (oy >= d.out_h) break;
        float acc[kMaxResampleChannels];
#pragma unroll
        for (int ch = 0; ch < kMaxResampleChannels; ++ch) acc[ch] = 0.f;
        for (int k = 0; k < s.n_y[r]; ++k) {
          const float wy = s.w_y[k][r];
          const In* row = in + static_cast<int64_t>(s.lo_y[r] + k) * d.in_row_stride + static_cast<int64_t>(xl) * c;
#pragma unroll
          for (int ch = 0; ch < kMaxResampleChannels; ++ch) {
            if (ch < c) {
              float h = 0.f;
              if (xn > 0) h = FAdd(h, FMul(wx0, resample::ToFloat(row[ch])));
              if (xn > 1) h = FAdd(h, FMul(wx1, resample::ToFloat(row[c + ch])));
              acc[ch] = FAdd(acc[ch], FMul(wy, h));
            }
          }
        }
        Out* dst = out + (static_cast<int64_t>(oy) * d.out_w + ox) * c;
#pragma unroll
        for (int ch = 0; ch < kMaxResampleChannels; ++ch) {
          if (ch < c) dst[ch] = Convert<Out>(acc[ch]);
        }
      }
    }
  }
}

template <typename In, typename Out, Filter F>
__global__ void __launch_bounds__(kTileW* kRowThreads) TwoTapKernel(const ResampleDesc* descs) {
  __shared__ TwoTapTaps s;
  const ResampleDesc d = descs[blockIdx.y];
  if (d.out_h <= 0 || d.out_w <= 0 || d.channels <= 0) return;
  // Block-uniform (one sample per block row of the grid), so the barriers inside stay legal.
  if (d.channels == 3) {
    TwoTapSample<In, Out, F, 3>(d, s);
  } else {
    TwoTapSample<In, Out, F, 0>(d, s);
  }
}

template <typename In, typename Out, Filter F>
void LaunchTwoTapFilter(const dim3& grid, const dim3& block, const ResampleDesc* descs, cudaStream_t stream) {
  TwoTapKernel<In, Out, F><<<grid, block, 0, stream>>>(descs);
}

template <typename In, typename Out>
void LaunchTwoTap(const ResampleDesc* descs, int n, int blocks, Filter filter, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(n));
  const dim3 block(kTileW, kRowThreads);
  if (filter == Filter::kNearest) {
    LaunchTwoTapFilter<In, Out, Filter::kNearest>(grid, block, descs, stream);
  } else {
    LaunchTwoTapFilter<In, Out, Filter::kLinear>(grid, block, descs, stream);
  }
  CONVEYOR_CHECK_LAUNCH("TwoTapKernel");
}

template <typename In, typename Out, int kC>
void LaunchFiltered(const ResampleDesc* descs, int n, int blocks, Filter filter, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(n));
  const dim3 block(kTileW, kRowThreads);
  switch (filter) {
    case Filter::kNearest:
      ResampleKernel<In, Out, Filter::kNearest, kC><<<grid, block, 0, stream>>>(descs);
      break;
    case Filter::kLinear:
      ResampleKernel<In, Out, Filter::kLinear, kC><<<grid, block, 0, stream>>>(descs);
      break;
    case Filter::kCubic:
      ResampleKernel<In, Out, Filter::kCubic, kC><<<grid, block, 0, stream>>>(descs);
      break;
  }
  CONVEYOR_CHECK_LAUNCH("ResampleKernel");
}

template <typename In, typename Out>
void LaunchTyped(const ResampleDesc* descs, int n, int blocks, Filter filter, bool antialias, cudaStream_t stream) {
  if (filter != Filter::kCubic && !antialias) return LaunchTwoTap<In, Out>(descs, n, blocks, filter, stream);
  LaunchFiltered<In, Out, 3>(descs, n, blocks, filter, stream);
  LaunchFiltered<In, Out, 0>(descs, n, blocks, filter, stream);
}

}  // namespace

void ResampleGpu(const ResampleDesc* descs, int num_samples, int64_t capacity_bytes, Filter filter, bool antialias,
                 DType in_dtype, DType out_dtype, cuda::StreamView stream) {
  if (num_samples == 0 || capacity_bytes == 0) return;
  // Blocks per sample: enough for the largest one-channel sample the capacity holds, but no more
  // than ~8192 blocks in all (grid-stride loops cover the rest): ~16 waves keep the tail short.
  const int64_t out_size = out_dtype == DType::kUInt8 ? 1 : 4;
  const int64_t tiles = std::max<int64_t>(capacity_bytes / out_size / num_samples / (kTileW * kTileH), 1);
  const int64_t spread = std::max<int64_t>((8192 + num_samples - 1) / num_samples, 1);
  const int blocks = static_cast<int>(std::min(tiles, spread));
  const cudaStream_t s = stream.get();
  if (in_dtype == DType::kUInt8 && out_dtype == DType::kUInt8) return LaunchTyped<uint8_t, uint8_t>(descs, num_samples, blocks, filter, antialias, s);
  if (in_dtype == DType::kUInt8 && out_dtype == DType::kFloat32) return LaunchTyped<uint8_t, float>(descs, num_samples, blocks, filter, antialias, s);
  if (in_dtype == DType::kFloat32 && out_dtype == DType::kUInt8) return LaunchTyped<float, uint8_t>(descs, num_samples, blocks, filter, antialias, s);
  if (in_dtype == DType::kFloat32 && out_dtype == DType::kFloat32) return LaunchTyped<float, float>(descs, num_samples, blocks, filter, antialias, s);
  throw InvalidArgument("resample: unsupported dtypes " + std::string(DTypeName(in_dtype)) + " -> " +
                        std::string(DTypeName(out_dtype)));
}

}  // namespace conveyor::ops
