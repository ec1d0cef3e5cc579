// The tiled two-pass resampling kernel (two launches: 3-channel samples, the rest; see kC) and
// ResampleGpu's dispatch. Per batch, blockIdx.y = sample, blocks along x visit the sample's
// 32 x H output tiles (grid-stride; H = 32 for 3-channel samples, 16 otherwise), those of every
// frame of a clip (FHWC) in one index space, so a clip's blocks spread over all its frames. Per tile:
//
//   taps of the tile's 32 columns and H rows           (shared; first 16 weights cached)
//   for each chunk of the input rows the tile needs:    (one chunk unless the downscale is large)
//     horizontal pass: window rows -> float tmp[row][32][C]   (shared memory, never global)
//     vertical pass:   acc[pixel][C] += w * tmp         (registers, H / 8 pixels per thread)
//   write the 32 x H x C outputs (consecutive threads write consecutive pixels)
//
// 3-channel uint8 tiles whose tap counts are small take the exact-taps path (kExactMaxTaps below).
//
// The input is read once per tile (plus the filter's halo), the output written once; the
// intermediate never leaves the SM. Arithmetic: resample_math.h, same as the CPU reference.
// Linear and nearest without antialiasing (two taps at most) take TwoTapKernel instead
// (resample_two_tap_gpu.cu): each output pixel straight from the input.
#include <algorithm>
#include <type_traits>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/resample/resample.h"
#include "operators/resample/resample_kernels.cuh"

namespace conveyor::ops {
namespace resample_detail {
namespace {

constexpr int kTileH = 16;  // output rows per tile (the grid's sizing; 3-channel samples take 32)
// 3-channel samples: 32-row tiles (four pixels per thread). Against 16: half the barriers and tap
// computations per output, and ~6% fewer horizontal rows (the vertical halo is paid once per 32).
template <int kC>
constexpr int kTileHOf = kC == 3 ? 32 : kTileH;
constexpr int kCachedTaps = 16;
// ResampleKernel's unrolled path: taps per axis up to this (<= kCachedTaps). Linear: downscales
// up to ~3x; cubic (twice the support): up to ~2.5x, 375x500 -> 224 included.
template <Filter F>
constexpr int kUnrolledTaps = F == Filter::kCubic ? 12 : 8;

// An upper bound on the taps any output index of this axis has: lo and hi (resample_math.h) are
// floor(c -/+ support + 0.5), at most floor(2 support) + 1 apart; one more for rounding.
__device__ __forceinline__ int MaxTaps(Filter f, const Axis& a) {
  return f == Filter::kNearest ? 1 : static_cast<int>(floorf(2.f * a.support)) + 2;
}

// kC = 3: the kernel for 3-channel samples (accumulators for 3 channels and a 24 KiB row buffer;
// the 8-channel kernel's 80 registers and 36 KiB gave 3 blocks per SM on the H100). kC = 0: any
// other count up to kMaxResampleChannels. Both are launched and each skips the other's samples:
// the channel count is per-iteration data, which a captured launch must not bake in.
template <int kC>
constexpr int kChannels = kC == 0 ? kMaxResampleChannels : kC;
template <int kC>
constexpr int kTmpFloats = kC == 0 ? 8192 : 6144;  // the horizontal pass's rows of one chunk (3 channels: 64)

// The exact-taps path (uint8 inputs; ResampleKernel below). A tile's columns have at most NX taps
// and its rows at most NY (both measured per tile, block-uniform); every column then takes exactly
// NX taps and every row NY, the ones it lacks weighted 0, so the loops are unrolled to the count
// with no per-tap test. The main path unrolls to a fixed 8 (linear) or 12 (cubic) taps and tests
// each: ncu on the H100 (2026-11-26, 375x500 -> 224 linear antialiased, 4.5 taps across and 3.7
// down on average) counted 143 instructions per horizontal row of which the predicated-off taps
// were ~40%, and a vertical pass of 8 tests + branches per pixel around ~4 real taps.
// A tap list that would run past the window's end starts earlier instead (lo' = min(lo, extent -
// N)), so every read is inside the window. Bit for bit the reference's sums: the added products
// are w = +0 times a finite value (uint8 inputs, or the horizontal pass's finite sums), so +0 or
// -0, and a sum that starts at +0 (the reference's 0.f, or a first product that is not -0) never
// becomes -0 in round-to-nearest, so adding either zero at either end changes nothing.
// Linear up to 8 taps per axis (downscales to ~3.5x), cubic up to 12 (~2.75x; 375x500 -> 224 is 10).
template <Filter F>
constexpr int kExactMaxTaps = F == Filter::kCubic ? 12 : 8;
static_assert(kExactMaxTaps<Filter::kCubic> <= kCachedTaps, "the exact path keeps its weights in w_x / w_y");
// 3-channel samples only: in the generic instantiation (kC = 0, eight accumulators per pixel) the
// extra path spilled 70-150 B more under the kernel's 48 registers.
template <typename In, int kC>
constexpr bool kExactTaps = std::is_same_v<In, uint8_t> && kC == 3;

__device__ __forceinline__ int ShiftedLo(const Tap& t, int n, int extent) { return min(t.lo, extent - n); }

// Calls fn(std::integral_constant<int, N>) with N == n, for n in [1, kMax].
template <int kMax, int N = 1, typename Fn>
__device__ __forceinline__ void WithTapCount(int n, Fn&& fn) {
  if (n == N) {
    fn(std::integral_constant<int, N>{});
  } else if constexpr (N < kMax) {
    WithTapCount<kMax, N + 1>(n, fn);
  }
}

// The horizontal sums of one output column over the row at px: taps k < min(kTaps, count) with
// weights wk, per channel, in index order. The exact-taps path passes count = kTaps (no test left
// after unrolling); the main path's unrolled loop the column's own count.
template <typename In, Filter F, int kTaps, int kCh>
__device__ __forceinline__ void HorizontalSums(const In* px, const float (&wk)[kTaps], int count, int c,
                                               float (&h)[kCh]) {
#pragma unroll
  for (int ch = 0; ch < kCh; ++ch) h[ch] = 0.f;
#pragma unroll
  for (int k = 0; k < kTaps; ++k) {
    if (k < count) {
#pragma unroll
      for (int ch = 0; ch < kCh; ++ch) {
        if (ch < c) {
          const float p = FMul(wk[k], resample::ToFloat(px[k * c + ch]));
          h[ch] = kSkipZeroAdd<In, F> && k == 0 ? p : FAdd(h[ch], p);
        }
      }
    }
  }
}

// One tile on the exact-taps path (see kExactMaxTaps): weights (0 where a column or row lacks the
// tap), horizontal pass of rows [lo_rows, hi_rows) into tmp, vertical pass, outputs.
template <typename In, typename Out, Filter F, int kC, bool kCrop>
__device__ __forceinline__ void ExactTapsTile(const ResampleDesc& d, const ResampleDesc* g, const In* in, Out* out,
                                              int c, int ox0, int oy0,
                                              int tw, int th, int nx, int ny, int lo_rows, int hi_rows,
                                              const Tap* tap_x, const Tap* tap_y, float (*w_x)[kTileW],
                                              float (*w_y)[kTileHOf<kC>], float* tmp) {
  constexpr int kTH = kTileHOf<kC>, kPPT = kTH / kRowThreads;
  constexpr int kCh = kC == 0 ? kMaxResampleChannels : kC;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kTileW + tx;
  for (int e = tid; e < kExactMaxTaps<F> * (kTileW + kTH); e += kTileW * kRowThreads) {
    const int k = e / (kTileW + kTH), i = e - k * (kTileW + kTH);
    if (i < kTileW) {
      if (i < tw && k < nx) {
        const Tap& t = tap_x[i];
        const int j = ShiftedLo(t, nx, d.axis_x.extent) + k;
        w_x[k][i] = j >= t.lo && j < t.lo + t.count ? Weight(F, d.axis_x, t, j) : 0.f;
      }
    } else if (i - kTileW < th && k < ny) {
      const Tap& t = tap_y[i - kTileW];
      const int j = ShiftedLo(t, ny, d.axis_y.extent) + k;
      w_y[k][i - kTileW] = j >= t.lo && j < t.lo + t.count ? Weight(F, d.axis_y, t, j) : 0.f;
    }
  }
  __syncthreads();
  // Horizontal pass: thread column tx, rows strided by kRowThreads.
  if (tx < tw) {
    WithTapCount<kExactMaxTaps<F>>(nx, [&](auto taps) {
      constexpr int N = decltype(taps)::value;
      float wk[N];
#pragma unroll
      for (int k = 0; k < N; ++k) wk[k] = w_x[k][tx];
      // The row pointers step by kRowThreads rows: a 64-bit product per row was 6 of the loop's
      // ~86 instructions (ncu); stepped, the antialiased resize went from 0.200 to 0.197 ms per
      // batch (H100, back to back, 375x500 -> 224, batch 256).
      const In* px = in + static_cast<int64_t>(ShiftedLo(tap_x[tx], N, d.axis_x.extent)) * c +
                     static_cast<int64_t>(lo_rows + ty) * d.in_row_stride;
      const int64_t px_step = static_cast<int64_t>(kRowThreads) * d.in_row_stride;
      float* dst = tmp + (ty * kTileW + tx) * c;
#pragma unroll 1
      for (int r = lo_rows + ty; r < hi_rows; r += kRowThreads, px += px_step, dst += kRowThreads * kTileW * c) {
        float h[kCh];
        HorizontalSums<In, F>(px, wk, N, c, h);
#pragma unroll
        for (int ch = 0; ch < kCh; ++ch) {
          if (ch < c) dst[ch] = h[ch];
        }
      }
    });
  }
  __syncthreads();
  // Vertical pass and outputs: kPPT pixels per thread.
  WithTapCount<kExactMaxTaps<F>>(ny, [&](auto taps) {
    constexpr int N = decltype(taps)::value;
#pragma unroll
    for (int p = 0; p < kPPT; ++p) {
      const int r = ty + p * kRowThreads;
      if (r >= th || tx >= tw) continue;
      const float* src = tmp + ((ShiftedLo(tap_y[r], N, d.axis_y.extent) - lo_rows) * kTileW + tx) * c;
      float acc[kCh];
#pragma unroll
      for (int ch = 0; ch < kCh; ++ch) acc[ch] = 0.f;
#pragma unroll
      for (int k = 0; k < N; ++k) {
        const float w = w_y[k][r];
#pragma unroll
        for (int ch = 0; ch < kCh; ++ch) {
          if (ch < c) {
            const float v = FMul(w, src[k * kTileW * c + ch]);
            acc[ch] = kSkipZeroAdd<In, F> && k == 0 ? v : FAdd(acc[ch], v);
          }
        }
      }
      Out* dst = out + OutPixelOf<kCrop>(d, g, oy0 + r, ox0 + tx) * c;
#pragma unroll
      for (int ch = 0; ch < kCh; ++ch) {
        if (ch < c) dst[ch] = Convert<Out>(acc[ch]);
      }
    }
  });
}

// One warp's taps of a tile edge: output `origin + lane` along `axis` for the `count` lanes the
// tile has, and (lane 0) their largest tap count into *max_taps.
__device__ __forceinline__ void EdgeTaps(Filter f, const Axis& axis, int origin, int count, int lane, Tap* taps,
                                         int* max_taps) {
  int n = 0;
  if (lane < count) {
    taps[lane] = MakeTap(f, axis, origin + lane);
    n = taps[lane].count;
  }
  n = __reduce_max_sync(0xffffffffu, n);
  if (lane == 0) *max_taps = n;
}

// At most 48 registers (5 blocks per SM): the 3-channel linear antialiased resize ran 0.331 ms at
// 64 registers (4 blocks) and 0.308 at 48 on the H100. The generic instantiation (kC = 0) spills
// 40-148 B under this bound; not yet measured (geometry_bench's gray and RGBA cases).
template <typename In, typename Out, Filter F, int kC, bool kCrop>
__global__ void __launch_bounds__(kTileW* kRowThreads, 5) ResampleKernel(const ResampleDesc* descs) {
  constexpr int kCh = kChannels<kC>;
  constexpr int kTH = kTileHOf<kC>, kPPT = kTH / kRowThreads;
  __shared__ Tap tap_x[kTileW];
  __shared__ Tap tap_y[kTH];
  __shared__ float w_x[kCachedTaps][kTileW];
  __shared__ float w_y[kCachedTaps][kTH];
  __shared__ float tmp[kTmpFloats<kC>];
  __shared__ int tile_taps[2];  // the tile's largest tap count: columns, rows

  const ResampleDesc* g = descs + blockIdx.y;  // origins and mirror are read there (WithOrigin)
  const ResampleDesc d = *g;
  if (d.out_h <= 0 || d.out_w <= 0 || d.channels <= 0) return;
  if (kC == 0 ? d.channels == 3 : d.channels != kC) return;  // the other kernel's sample
  const int c = kC == 0 ? d.channels : kC;
  // Frame 0's window and output; a clip's frame f is f image sizes further on both sides.
  const In* window0 = static_cast<const In*>(d.in) + static_cast<int64_t>(d.y0) * d.in_row_stride +
                      static_cast<int64_t>(d.x0) * c;
  Out* out0 = static_cast<Out*>(d.out);
  const int64_t in_frame = d.in_rows * d.in_row_stride;
  const int64_t out_frame = static_cast<int64_t>(d.out_h) * d.out_w * c;
  const int tiles_x = (d.out_w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((d.out_h + kTH - 1) / kTH);  // of one frame
  const int all_tiles = tiles * d.frames;
  const int rows_per_chunk = kTmpFloats<kC> / (kTileW * c);
  // Per sample, so every thread of the block takes the same path: a per-column choice split warps
  // whose columns straddle the limit and ran both paths (cubic antialiased resize on the H100:
  // 0.556 -> 0.684 ms).
  const bool unrolled_x = MaxTaps(F, d.axis_x) <= kUnrolledTaps<F>;
  const bool unrolled_y = MaxTaps(F, d.axis_y) <= kUnrolledTaps<F>;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kTileW + tx;

  for (int t = blockIdx.x; t < all_tiles; t += gridDim.x) {
    const int frame = t / tiles;
    const int tile = t - frame * tiles;
    const In* in = window0 + frame * in_frame;
    Out* out = out0 + frame * out_frame;
    const int tile_y = tile / tiles_x;
    const int ox0 = (tile - tile_y * tiles_x) * kTileW;
    const int oy0 = tile_y * kTH;
    const int tw = min(kTileW, d.out_w - ox0);
    const int th = min(kTH, d.out_h - oy0);

    __syncthreads();  // the previous tile is done with the taps and tmp
    if (tid < kTileW) {  // warp 0: the columns' taps and their largest count
      EdgeTaps(F, WithOrigin<kCrop>(d.axis_x, &g->axis_x.origin), ox0, tw, tid, tap_x, &tile_taps[0]);
    } else if (tid < 2 * kTileW) {  // warp 1: the rows'
      EdgeTaps(F, WithOrigin<kCrop>(d.axis_y, &g->axis_y.origin), oy0, th, tid - kTileW, tap_y, &tile_taps[1]);
    }
    __syncthreads();
    if constexpr (kExactTaps<In, kC>) {
      const int nx = tile_taps[0], ny = tile_taps[1];
      if (nx >= 1 && ny >= 1 && nx <= kExactMaxTaps<F> && ny <= kExactMaxTaps<F> && nx <= d.axis_x.extent &&
          ny <= d.axis_y.extent) {
        const int lo_rows = ShiftedLo(tap_y[0], ny, d.axis_y.extent);
        const int hi_rows = ShiftedLo(tap_y[th - 1], ny, d.axis_y.extent) + ny;
        if (hi_rows - lo_rows <= rows_per_chunk) {  // block-uniform: the barriers inside are legal
          ExactTapsTile<In, Out, F, kC, kCrop>(d, g, in, out, c, ox0, oy0, tw, th, nx, ny, lo_rows, hi_rows, tap_x, tap_y, w_x,
                                        w_y, tmp);
          continue;
        }
      }
    }
    // The cached weights, one (index, tap) per thread: every thread works, where one thread per
    // index used to loop over its taps while the rest of the block waited.
    for (int e = tid; e < kCachedTaps * (kTileW + kTH); e += kTileW * kRowThreads) {
      const int k = e / (kTileW + kTH), i = e - k * (kTileW + kTH);
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

    float acc[kPPT][kCh];
#pragma unroll
    for (int p = 0; p < kPPT; ++p) {
#pragma unroll
      for (int ch = 0; ch < kCh; ++ch) acc[p][ch] = 0.f;
    }

    for (int chunk_lo = row_lo; chunk_lo < row_hi; chunk_lo += rows_per_chunk) {
      const int chunk_hi = min(row_hi, chunk_lo + rows_per_chunk);
      // Horizontal pass: thread column tx, rows strided by kRowThreads.
      if (tx < tw) {
        const Tap t = tap_x[tx];
        if (unrolled_x) {
          // The common case (kUnrolledTaps): the taps unrolled, their weights in registers for all
          // the thread's rows, each load at a constant offset from the row's first tap — no
          // per-tap loop, weight or address arithmetic. ncu on the H100 counted ~600 instructions
          // per output pixel in the looped form (ALU the busiest pipe).
          float wk[kUnrolledTaps<F>];
#pragma unroll
          for (int k = 0; k < kUnrolledTaps<F>; ++k) wk[k] = k < t.count ? w_x[k][tx] : 0.f;
          const In* first = in + static_cast<int64_t>(t.lo) * c;
#pragma unroll 1
          for (int r = chunk_lo + ty; r < chunk_hi; r += kRowThreads) {
            float h[kCh];
            HorizontalSums<In, F>(first + static_cast<int64_t>(r) * d.in_row_stride, wk, t.count, c, h);
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
      for (int p = 0; p < kPPT; ++p) {
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
    for (int p = 0; p < kPPT; ++p) {
      const int r = ty + p * kRowThreads;
      if (r < th && tx < tw) {
        Out* dst = out + OutPixelOf<kCrop>(d, g, oy0 + r, ox0 + tx) * c;
#pragma unroll
        for (int ch = 0; ch < kCh; ++ch) {
          if (ch < c) dst[ch] = Convert<Out>(acc[p][ch]);
        }
      }
    }
  }
}

template <typename In, typename Out, int kC, bool kCrop>
void LaunchFiltered(const ResampleDesc* descs, int n, int blocks, Filter filter, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(n));
  const dim3 block(kTileW, kRowThreads);
  switch (filter) {
    case Filter::kNearest:
      ResampleKernel<In, Out, Filter::kNearest, kC, kCrop><<<grid, block, 0, stream>>>(descs);
      break;
    case Filter::kLinear:
      ResampleKernel<In, Out, Filter::kLinear, kC, kCrop><<<grid, block, 0, stream>>>(descs);
      break;
    case Filter::kCubic:
      ResampleKernel<In, Out, Filter::kCubic, kC, kCrop><<<grid, block, 0, stream>>>(descs);
      break;
  }
  CONVEYOR_CHECK_LAUNCH("ResampleKernel");
}

template <typename In, typename Out, bool kCrop>
void LaunchTiled(const ResampleDesc* descs, int n, int blocks, Filter filter, cudaStream_t stream) {
  LaunchFiltered<In, Out, 3, kCrop>(descs, n, blocks, filter, stream);
  // A quarter of the blocks for the other channel counts: in a batch of 3-channel samples every
  // block of this launch reads its descriptor and exits, and an empty 8,192-block launch cost
  // 11.6 us under ncu on the H100 (its blocks live one descriptor load each, 5 per SM). Its
  // grid-stride loops still cover every tile of a gray or RGBA batch.
  LaunchFiltered<In, Out, 0, kCrop>(descs, n, std::max(blocks / 4, 1), filter, stream);
}

template <typename In, typename Out>
void LaunchTyped(const ResampleDesc* descs, int n, int blocks, Filter filter, bool antialias, bool crop,
                 cudaStream_t stream) {
  if (filter != Filter::kCubic && !antialias) return LaunchTwoTap<In, Out>(descs, n, blocks, filter, crop, stream);
  if (crop) return LaunchTiled<In, Out, true>(descs, n, blocks, filter, stream);
  LaunchTiled<In, Out, false>(descs, n, blocks, filter, stream);
}

}  // namespace
}  // namespace resample_detail

void ResampleGpu(const ResampleDesc* descs, int num_samples, int64_t capacity_bytes, resample::Filter filter, bool antialias,
                 DType in_dtype, DType out_dtype, cuda::StreamView stream, bool crop_mirror) {
  using namespace resample_detail;
  if (num_samples == 0 || capacity_bytes == 0) return;
  // Blocks per sample: enough for the largest one-channel sample the capacity holds, but no more
  // than ~8192 blocks in all (grid-stride loops cover the rest): ~16 waves keep the tail short.
  const int64_t out_size = out_dtype == DType::kUInt8 ? 1 : 4;
  const int64_t tiles = std::max<int64_t>(capacity_bytes / out_size / num_samples / (kTileW * kTileH), 1);
  const int64_t spread = std::max<int64_t>((8192 + num_samples - 1) / num_samples, 1);
  const int blocks = static_cast<int>(std::min(tiles, spread));
  const cudaStream_t s = stream.get();
  if (in_dtype == DType::kUInt8 && out_dtype == DType::kUInt8) return LaunchTyped<uint8_t, uint8_t>(descs, num_samples, blocks, filter, antialias, crop_mirror, s);
  if (in_dtype == DType::kUInt8 && out_dtype == DType::kFloat32) return LaunchTyped<uint8_t, float>(descs, num_samples, blocks, filter, antialias, crop_mirror, s);
  if (in_dtype == DType::kFloat32 && out_dtype == DType::kUInt8) return LaunchTyped<float, uint8_t>(descs, num_samples, blocks, filter, antialias, crop_mirror, s);
  if (in_dtype == DType::kFloat32 && out_dtype == DType::kFloat32) return LaunchTyped<float, float>(descs, num_samples, blocks, filter, antialias, crop_mirror, s);
  throw InvalidArgument("resample: unsupported dtypes " + std::string(DTypeName(in_dtype)) + " -> " +
                        std::string(DTypeName(out_dtype)));
}

}  // namespace conveyor::ops
