// TwoTapKernel: resize with linear or nearest filters without antialiasing (at most two taps per
// axis), each output pixel straight from the input. Launched by ResampleGpu (resample_gpu.cu).
#include "core/cuda/check.h"
#include "operators/image_common/convert.h"  // ByteAsFloat
#include "operators/resample/resample_kernels.cuh"

namespace conveyor::ops::resample_detail {
namespace {

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

// An input element as the kC = 3 path holds it between its loads and its arithmetic.
template <typename In>
using TapReg = std::conditional_t<std::is_same_v<In, uint8_t>, unsigned, In>;
// resample::ToFloat's bit trick on a byte already zero-extended (no mask needed).
__device__ __forceinline__ float RegToFloat(unsigned byte) {
  return __fadd_rn(__uint_as_float(0x4B000000u | byte), -8388608.f);
}
__device__ __forceinline__ float RegToFloat(float v) { return v; }

// The tile's taps and weights, in shared memory (one set per block, whichever path it takes).
struct TwoTapTaps {
  int lo_x[kTileW], n_x[kTileW], lo_y[kDirectTileH], n_y[kDirectTileH];
  float w_x[2][kTileW], w_y[2][kDirectTileH];
};

// The staged path (uint8 RGB, linear): a tile's input footprint — rows [ys, ye) x columns [xs, xe)
// of the window, ~55 rows x 213 bytes for 375x500 -> 224 — is copied into shared memory with
// aligned 16-byte loads (every load of the block issued at once), then each output pixel reads its
// 2 x 2 taps there as 32-bit words. The direct path issues 12 byte loads per pixel, and its warps
// waited on them at 50% occupancy (0.116 ms on the H100, 60% of a copy's bandwidth; ncu: 44% of
// scheduler cycles with no eligible warp). A staged row starts at its first byte's aligned-down
// address (lead[r] bytes before it); aligned vectors may reach past the window but stay inside the
// image (bytes outside it are assembled one by one, and never used). Footprints wider or taller
// than the buffer (downscales beyond ~2.3x across or ~1.9x down) take the direct path.
constexpr int kStagePitch = 256;  // bytes per staged row: 15 vectors of data + the word reads' slack
constexpr int kStageRows = 64;
struct TwoTapStage {
  alignas(16) unsigned char bytes[kStageRows][kStagePitch];
  int lead[kStageRows];
};
template <typename In, Filter F, int kC>
constexpr bool kStaged = std::is_same_v<In, uint8_t> && F == Filter::kLinear && kC == 3;

// Convert<Out> for sums known to be >= 0 (uint8 inputs, linear weights): the clamp at 0 is left
// out, the rest is resample::ToUint8's device branch (fmaxf(x, 0) == x for x >= 0.5).
template <typename Out>
__device__ __forceinline__ Out ConvertNonNegative(float v) {
  if constexpr (sizeof(Out) == 1) {
    const float c = fminf(FAdd(v, 0.5f), 255.f);
    return static_cast<Out>(__float_as_uint(__fadd_rz(c, 8388608.f)) & 0xFFu);
  } else {
    return v;
  }
}

// One tile on the staged path; false (before any barrier, block-uniformly) when its footprint does
// not fit. `image` is the frame's first byte, `in` its window's origin, `out` the frame's output.
// Same expressions in the same order as the direct path.
template <typename Out, bool kCrop>
__device__ __forceinline__ bool StagedLinearTile(const ResampleDesc& d, const ResampleDesc* g, const TwoTapTaps& s,
                                                 TwoTapStage& st, const uint8_t* image, const uint8_t* in, Out* out,
                                                 int ox0, int oy0) {
  const int tw = min(kTileW, d.out_w - ox0), th = min(kDirectTileH, d.out_h - oy0);
  // Taps are monotonic in the output index and at most two (n = min(count, 2)), so the first
  // column's lo and the last one's lo + n bound every column's taps (the same for rows).
  const int xs = s.lo_x[0], ys = s.lo_y[0];
  const int xe = max(s.lo_x[tw - 1] + s.n_x[tw - 1], xs + 1), ye = max(s.lo_y[th - 1] + s.n_y[th - 1], ys + 1);
  const int rows = ye - ys, row_bytes = (xe - xs) * 3;
  if (rows > kStageRows || 15 + row_bytes > kStagePitch - 16 || d.in_row_stride > (1 << 24)) return false;
  const uint8_t* img_begin = image;
  const uint8_t* img_end = img_begin + d.in_rows * d.in_row_stride;
  const int tid = threadIdx.y * kTileW + threadIdx.x;
  const int vec = tid & 15;  // 16 threads per row, 16 rows per pass of the block
  constexpr int kPasses = kStageRows / 16;
  // A row's aligned vectors span [g - lead, g + row_bytes + 15) at most, and the rows' starts g
  // increase, so the footprint's first row bounds them from below and its last row from above:
  // when both lie inside the image (every tile but those at the image's first or last bytes),
  // no vector needs its own check (block-uniform), and each pass's row is a 32-bit offset from the
  // footprint's aligned start. The staging with a 64-bit address and two bounds compares per
  // vector was ~23% of the kernel's instructions (ncu source counters, H100, 2026-11-26); without
  // them, and with the missing taps' +0 weights written at setup (below), the no-antialias
  // resize went from 0.106 to 0.097 ms per batch (back to back, 375x500 -> 224, batch 256).
  const uint8_t* first = in + static_cast<int64_t>(ys) * d.in_row_stride + static_cast<int64_t>(xs) * 3;
  const uint8_t* last = first + static_cast<int64_t>(rows - 1) * d.in_row_stride;
  const bool inside = first - (reinterpret_cast<uintptr_t>(first) & 15u) >= img_begin && last + row_bytes + 15 <= img_end;
  uint4 v[kPasses];
  bool need[kPasses];
  if (inside) {
    // Offsets from `first` in 32 bits: the footprint spans at most 64 rows (kStageRows), and
    // the pitch of an image this path takes fits (checked before any barrier below).
    const int pitch = static_cast<int>(d.in_row_stride);
    const int first_lead = static_cast<int>(reinterpret_cast<uintptr_t>(first) & 15u);
    const uint8_t* base = first - first_lead;  // aligned
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int r = (tid >> 4) + 16 * i;
      const int off = r * pitch + first_lead;  // the row's first byte, from `base`
      const int lead = off & 15;
      need[i] = r < rows && 16 * vec < lead + row_bytes;
      if (r < rows && vec == 0) st.lead[r] = lead;
      if (need[i]) v[i] = __ldg(reinterpret_cast<const uint4*>(base + (off - lead) + 16 * vec));
    }
  } else {  // the image's first or last bytes: vectors checked one by one
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int r = (tid >> 4) + 16 * i;
      need[i] = false;
      if (r < rows) {
        const uint8_t* g = first + static_cast<int64_t>(r) * d.in_row_stride;
        const int lead = static_cast<int>(reinterpret_cast<uintptr_t>(g) & 15u);
        if (vec == 0) st.lead[r] = lead;
        need[i] = 16 * vec < lead + row_bytes;
        const uint8_t* p = g - lead + 16 * vec;
        if (need[i]) {
          if (p >= img_begin && p + 16 <= img_end) {
            v[i] = __ldg(reinterpret_cast<const uint4*>(p));
          } else {  // only what lies inside the image
            uint32_t w[4] = {0, 0, 0, 0};
            for (int b = 0; b < 16; ++b) {
              if (p + b >= img_begin && p + b < img_end) w[b >> 2] |= static_cast<uint32_t>(p[b]) << (8 * (b & 3));
            }
            v[i] = make_uint4(w[0], w[1], w[2], w[3]);
          }
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kPasses; ++i) {
    if (need[i]) *reinterpret_cast<uint4*>(&st.bytes[(tid >> 4) + 16 * i][16 * vec]) = v[i];
  }
  __syncthreads();
  const int tx = threadIdx.x, ty = threadIdx.y;
  if (tx >= tw) return true;
  // Without branches: every pixel reads two taps of two rows. A missing second tap (the window's
  // last column or row) is weighted +0 and read at a position that exists (the next bytes of the
  // staged row, or the first row again): its product is +0, and adding +0 to the non-negative sums
  // changes nothing, so the outputs are the reference's bit for bit. The branches per tap and per
  // row (and their reconvergence) were ~10 instructions per pixel of an issue-bound kernel (ncu on
  // the H100: 0.80 instructions issued per scheduler cycle, SM 77% busy, DRAM 39%).
  // A missing tap on an axis (no tap at all: the reference's output is 0) is weighted +0 too, so
  // every sum is +0 there without a branch.
  const int xn = s.n_x[tx];
  const float wx0 = s.w_x[0][tx], wx1 = s.w_x[1][tx];  // +0 where the tap is missing
  const int ob = xn > 0 ? (s.lo_x[tx] - xs) * 3 : 0;
  const int mirror = kCrop ? __ldg(&g->mirror) : 0;  // see WithOrigin
  Out* dst = out + OutPixel(mirror, d.out_h, d.out_w, oy0 + ty, ox0 + tx) * 3;
  const int dst_step = ((mirror & kMirrorY) ? -kRowThreads : kRowThreads) * d.out_w * 3;  // rows reversed
#pragma unroll
  for (int p = 0; p < kDirectRows; ++p, dst += dst_step) {
    const int r = ty + p * kRowThreads;
    if (r >= th) break;
    const int ny = s.n_y[r];
    const int sy0 = ny > 0 ? s.lo_y[r] - ys : 0;
    const int sy1 = ny > 1 ? sy0 + 1 : sy0;
    const float wy0 = s.w_y[0][r], wy1 = s.w_y[1][r];
    float h[2][3];
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int sy = k == 0 ? sy0 : sy1;
      const int o = st.lead[sy] + ob;
      const uint32_t* w = reinterpret_cast<const uint32_t*>(&st.bytes[sy][0]) + (o >> 2);
      const unsigned sh = static_cast<unsigned>(o & 3) * 8;
      const uint32_t lo4 = __funnelshift_r(w[0], w[1], sh), hi4 = __funnelshift_r(w[1], w[2], sh);
      // Tap 0 is bytes 0-2 of lo4; tap 1 byte 3 of lo4 and bytes 0-1 of hi4.
      h[k][0] = FAdd(FMul(wx0, ByteAsFloat(lo4, 0)), FMul(wx1, ByteAsFloat(lo4, 3)));
      h[k][1] = FAdd(FMul(wx0, ByteAsFloat(lo4, 1)), FMul(wx1, ByteAsFloat(hi4, 0)));
      h[k][2] = FAdd(FMul(wx0, ByteAsFloat(lo4, 2)), FMul(wx1, ByteAsFloat(hi4, 1)));
    }
    float acc[3];
#pragma unroll
    for (int ch = 0; ch < 3; ++ch) acc[ch] = FAdd(FMul(wy0, h[0][ch]), FMul(wy1, h[1][ch]));
#pragma unroll
    for (int ch = 0; ch < 3; ++ch) dst[ch] = ConvertNonNegative<Out>(acc[ch]);
  }
  return true;
}

// One sample's tiles (the block's share of them) for channel path kC. `g`: the descriptor in
// global memory, `d`: the kernel's copy (WithOrigin says why both).
template <typename In, typename Out, Filter F, int kC, bool kCrop>
__device__ __forceinline__ void TwoTapSample(const ResampleDesc& d, const ResampleDesc* g, TwoTapTaps& s,
                                             TwoTapStage& st) {
  const int c = kC != 0 ? kC : d.channels;
  // A clip's frame f is f image sizes after frame 0, in and out; the tiles of all its frames form
  // one index space, so the sample's blocks spread over every frame.
  const int tiles_x = (d.out_w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((d.out_h + kDirectTileH - 1) / kDirectTileH);  // of one frame
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * kTileW + tx;
  const int all_tiles = tiles * d.frames;
  const int64_t in_frame = d.in_rows * d.in_row_stride;
  const int64_t out_frame = static_cast<int64_t>(d.out_h) * d.out_w * c;
  for (int t = blockIdx.x; t < all_tiles; t += gridDim.x) {
    const int frame = t / tiles;
    const int tile = t - frame * tiles;
    const In* image = static_cast<const In*>(d.in) + frame * in_frame;
    const In* in = image + static_cast<int64_t>(d.y0) * d.in_row_stride + static_cast<int64_t>(d.x0) * c;
    Out* out = static_cast<Out*>(d.out) + frame * out_frame;
    const int tile_y = tile / tiles_x;
    const int ox0 = (tile - tile_y * tiles_x) * kTileW;
    const int oy0 = tile_y * kDirectTileH;
    __syncthreads();  // the previous tile is done with the taps
    // Taps with unit_stretch: this kernel runs only without antialiasing (ResampleGpu), and then
    // every axis has stretch 1 (MakeAxis); descriptors made otherwise break ResampleGpu's contract.
    if (tid < kTileW) {
      if (ox0 + tid < d.out_w) {
        const Tap t = MakeTap(F, WithOrigin<kCrop>(d.axis_x, &g->axis_x.origin), ox0 + tid, true);
        s.lo_x[tid] = t.lo;
        s.n_x[tid] = t.count < 2 ? t.count : 2;
        // Weights of missing taps are +0 (read by the staged path without a test; the others
        // read only k < n).
        for (int k = 0; k < 2; ++k) s.w_x[k][tid] = k < t.count ? Weight(F, d.axis_x, t, t.lo + k, true) : 0.f;
      }
    } else if (tid < kTileW + kDirectTileH) {
      const int r = tid - kTileW;
      if (oy0 + r < d.out_h) {
        const Tap t = MakeTap(F, WithOrigin<kCrop>(d.axis_y, &g->axis_y.origin), oy0 + r, true);
        s.lo_y[r] = t.lo;
        s.n_y[r] = t.count < 2 ? t.count : 2;
        for (int k = 0; k < 2; ++k) s.w_y[k][r] = k < t.count ? Weight(F, d.axis_y, t, t.lo + k, true) : 0.f;
      }
    }
    __syncthreads();
    if constexpr (kStaged<In, F, kC>) {
      static_assert(kSkipZeroAdd<In, F>, "StagedLinearTile starts its sums from the first product");
      if (StagedLinearTile<Out, kCrop>(d, g, s, st, image, in, out, ox0, oy0)) continue;
    }
    const int ox = ox0 + tx;
    if (ox >= d.out_w) continue;
    const int xl = s.lo_x[tx], xn = s.n_x[tx];
    const float wx0 = s.w_x[0][tx];
    const float wx1 = xn > 1 ? s.w_x[1][tx] : 0.f;
    if constexpr (kC != 0 && !kStaged<In, F, kC>) {
      // Taps per axis this filter can have: nearest always 1, linear at most 2.
      constexpr int kTaps = F == Filter::kNearest ? 1 : 2;
      const int x1 = xn > 1 ? c : 0;  // the second horizontal tap; the first again when there is none
      constexpr int kPass = kPassRows<F>;
#pragma unroll
      for (int pass = 0; pass < kDirectRows; pass += kPass) {
        // uint8 inputs held zero-extended in 32-bit registers: kept as `In`, each byte was masked with
        // 0xFF again before its conversion (a LOP3 per byte on the H100; ncu source counters).
        TapReg<In> v[kPass][kTaps][kTaps][kC];  // [row of the pass][vertical tap][horizontal tap][channel]
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
              const float h0 = FMul(wx0, RegToFloat(v[q][k][0][ch]));
              float h = kSkipZeroAdd<In, F> ? h0 : FAdd(0.f, h0);
              if (kTaps > 1 && xn > 1) h = FAdd(h, FMul(wx1, RegToFloat(v[q][k][kTaps - 1][ch])));
              acc[ch] = kSkipZeroAdd<In, F> && k == 0 ? FMul(wy[q][k], h) : FAdd(acc[ch], FMul(wy[q][k], h));
            }
          }
          Out* dst = out + OutPixelOf<kCrop>(d, g, oy, ox) * kC;
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
        Out* dst = out + OutPixelOf<kCrop>(d, g, oy, ox) * c;
#pragma unroll
        for (int ch = 0; ch < kMaxResampleChannels; ++ch) {
          if (ch < c) dst[ch] = Convert<Out>(acc[ch]);
        }
      }
    }
  }
}

// 48 registers, 5 blocks per SM: on the H100 (2026-11-26) the staged path ran 0.117 ms per batch at
// 62 registers and 0.110 under this bound (the direct path before it 0.113), gray -6%. ptxas
// spills 8 bytes of the uint8 linear instantiation since the staging's 32-bit offsets (measured
// with them: 0.097 ms).
template <typename In, typename Out, Filter F, bool kCrop>
__global__ void __launch_bounds__(kTileW* kRowThreads, 5) TwoTapKernel(const ResampleDesc* descs) {
  __shared__ TwoTapTaps s;
  __shared__ TwoTapStage st;
  const ResampleDesc d = descs[blockIdx.y];
  if (d.out_h <= 0 || d.out_w <= 0 || d.channels <= 0) return;
  // Block-uniform (one sample per block row of the grid), so the barriers inside stay legal.
  if (d.channels == 3) {
    TwoTapSample<In, Out, F, 3, kCrop>(d, descs + blockIdx.y, s, st);
  } else {
    TwoTapSample<In, Out, F, 0, kCrop>(d, descs + blockIdx.y, s, st);
  }
}

template <typename In, typename Out, Filter F>
void LaunchTwoTapFilter(const dim3& grid, const dim3& block, const ResampleDesc* descs, bool crop, cudaStream_t stream) {
  if (crop) {
    TwoTapKernel<In, Out, F, true><<<grid, block, 0, stream>>>(descs);
  } else {
    TwoTapKernel<In, Out, F, false><<<grid, block, 0, stream>>>(descs);
  }
}

}  // namespace

template <typename In, typename Out>
void LaunchTwoTap(const ResampleDesc* descs, int n, int blocks, Filter filter, bool crop, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(n));
  const dim3 block(kTileW, kRowThreads);
  if (filter == Filter::kNearest) {
    LaunchTwoTapFilter<In, Out, Filter::kNearest>(grid, block, descs, crop, stream);
  } else {
    LaunchTwoTapFilter<In, Out, Filter::kLinear>(grid, block, descs, crop, stream);
  }
  CONVEYOR_CHECK_LAUNCH("TwoTapKernel");
}

template void LaunchTwoTap<uint8_t, uint8_t>(const ResampleDesc*, int, int, Filter, bool, cudaStream_t);
template void LaunchTwoTap<uint8_t, float>(const ResampleDesc*, int, int, Filter, bool, cudaStream_t);
template void LaunchTwoTap<float, uint8_t>(const ResampleDesc*, int, int, Filter, bool, cudaStream_t);
template void LaunchTwoTap<float, float>(const ResampleDesc*, int, int, Filter, bool, cudaStream_t);

}  // namespace conveyor::ops::resample_detail
