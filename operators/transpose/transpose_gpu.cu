// Transpose kernels: one launch per batch, grid (blocks per sample from capacity, samples); each
// block reads its sample's plan and takes the path it names (uniform per block, see transpose.h).
#include <algorithm>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/image_common/vec_io.cuh"
#include "operators/transpose/transpose.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;
constexpr int kNarrowBytes = 16;  // a side of at most this many bytes per row is "narrow"
constexpr int kNarrowTile = 1024;  // rows per narrow tile: 1024 x 16 B = kSmemBytes
constexpr int kSmemBytes = kNarrowTile * kNarrowBytes;
constexpr int kTile = 32;  // wide path: 32 x 32 tiles

// Copies `bytes` between 16-byte aligned addresses, 16 bytes per thread and step; the tail byte
// by byte. `stride`/`first`: the threads taking part.
__device__ __forceinline__ void CopyAligned(unsigned char* dst, const unsigned char* src, int64_t bytes,
                                            int64_t first, int64_t stride) {
  const int64_t vecs = bytes / 16;
  for (int64_t v = first; v < vecs; v += stride) reinterpret_cast<uint4*>(dst)[v] = reinterpret_cast<const uint4*>(src)[v];
  for (int64_t b = vecs * 16 + first; b < bytes; b += stride) dst[b] = src[b];
}

// in [rows, cols] → out [cols, rows], cols * sizeof(T) <= 16 (HWC → CHW): a tile of whole input
// rows is one linear span, loaded with 16-byte loads; each thread then writes one element per
// plane, consecutive threads consecutive elements.
template <typename T>
__device__ void NarrowCols(const T* in, T* out, int64_t rows, int cols, unsigned char* smem) {
  const T* tile = reinterpret_cast<const T*>(smem);
  const int64_t tiles = (rows + kNarrowTile - 1) / kNarrowTile;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t r0 = t * kNarrowTile;
    const int nr = static_cast<int>(min(static_cast<int64_t>(kNarrowTile), rows - r0));
    __syncthreads();  // the previous tile's reads are done
    CopyAligned(smem, reinterpret_cast<const unsigned char*>(in + r0 * cols),
                static_cast<int64_t>(nr) * cols * static_cast<int64_t>(sizeof(T)), threadIdx.x, kThreads);
    __syncthreads();
    for (int c = 0; c < cols; ++c) {
      T* plane = out + c * rows + r0;
      for (int r = threadIdx.x; r < nr; r += kThreads) plane[r] = tile[r * cols + c];
    }
  }
}

// in [rows, cols] → out [cols, rows], rows * sizeof(T) <= 16 (CHW → HWC): each thread reads one
// element per plane into shared memory; the tile of whole output rows is one linear span, stored
// with 16-byte stores.
template <typename T>
__device__ void NarrowRows(const T* in, T* out, int rows, int64_t cols, unsigned char* smem) {
  T* tile = reinterpret_cast<T*>(smem);
  const int64_t tiles = (cols + kNarrowTile - 1) / kNarrowTile;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t c0 = t * kNarrowTile;
    const int nc = static_cast<int>(min(static_cast<int64_t>(kNarrowTile), cols - c0));
    __syncthreads();  // the previous tile's stores are done
    for (int r = 0; r < rows; ++r) {
      const T* plane = in + r * cols + c0;
      for (int c = threadIdx.x; c < nc; c += kThreads) tile[c * rows + r] = plane[c];
    }
    __syncthreads();
    CopyAligned(reinterpret_cast<unsigned char*>(out + c0 * rows), smem,
                static_cast<int64_t>(nc) * rows * static_cast<int64_t>(sizeof(T)), threadIdx.x, kThreads);
  }
}

// in [rows, cols] → out [cols, rows], both sides wide: 32 x 32 tiles through shared memory (one
// padding column against bank conflicts); reads and writes of a warp are 32 consecutive elements.
template <typename T>
__device__ void Wide(const T* in, T* out, int64_t rows, int64_t cols, unsigned char* smem) {
  T(*tile)[kTile + 1] = reinterpret_cast<T(*)[kTile + 1]>(smem);
  const int64_t tiles_c = (cols + kTile - 1) / kTile;
  const int64_t tiles = (rows + kTile - 1) / kTile * tiles_c;
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t tr = t / tiles_c;  // once per tile, not per element
    const int64_t r0 = tr * kTile, c0 = (t - tr * tiles_c) * kTile;
    __syncthreads();
    for (int k = ty; k < kTile; k += kThreads / kTile) {
      if (r0 + k < rows && c0 + tx < cols) tile[k][tx] = in[(r0 + k) * cols + c0 + tx];
    }
    __syncthreads();
    for (int k = ty; k < kTile; k += kThreads / kTile) {
      if (c0 + k < cols && r0 + tx < rows) out[(c0 + k) * rows + r0 + tx] = tile[tx][k];
    }
  }
}

template <typename T>
__global__ void TransposeKernel(const TransposeSample* samples) {
  static_assert(kSmemBytes >= kTile * (kTile + 1) * 8, "the wide tile fits");
  __shared__ __align__(16) unsigned char smem[kSmemBytes];
  const TransposeSample& s = samples[blockIdx.y];
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  const int64_t count = s.count;
  if (count == 0) return;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  switch (s.kind) {
    case TransposeKind::kCopy:
      CopyAligned(static_cast<unsigned char*>(s.out), static_cast<const unsigned char*>(s.in),
                  count * static_cast<int64_t>(sizeof(T)), first, stride);
      return;
    case TransposeKind::kTranspose2d: {
      const int64_t cols = s.out_shape[0], rows = s.out_shape[1];
      if (cols * static_cast<int64_t>(sizeof(T)) <= kNarrowBytes) {
        NarrowCols(in, out, rows, static_cast<int>(cols), smem);
      } else if (rows * static_cast<int64_t>(sizeof(T)) <= kNarrowBytes) {
        NarrowRows(in, out, static_cast<int>(rows), cols, smem);
      } else {
        Wide(in, out, rows, cols, smem);
      }
      return;
    }
    case TransposeKind::kGeneral: {
      const int n = s.ndim;
      for (int64_t e = first; e < count; e += stride) {
        int64_t rem = e, src = 0;
        for (int d = n - 1; d >= 0; --d) {
          const int64_t q = rem / s.out_shape[d];
          src += (rem - q * s.out_shape[d]) * s.in_stride[d];
          rem = q;
        }
        out[e] = in[src];
      }
      return;
    }
  }
}

template <typename T>
void Launch(const TransposeSample* samples, int n, int64_t max_count_hint, cuda::StreamView stream) {
  const dim3 grid(BlocksPerSample(max_count_hint, int64_t{kThreads} * 16), static_cast<unsigned>(n));
  TransposeKernel<T><<<grid, kThreads, 0, stream.get()>>>(samples);
  CONVEYOR_CHECK_LAUNCH("TransposeKernel");
}

}  // namespace

void TransposeGpu(const TransposeSample* samples, int n, int64_t max_count_hint, size_t element_size,
                  cuda::StreamView stream) {
  if (n == 0) return;
  switch (element_size) {
    case 1: return Launch<uint8_t>(samples, n, max_count_hint, stream);
    case 2: return Launch<uint16_t>(samples, n, max_count_hint, stream);
    case 4: return Launch<uint32_t>(samples, n, max_count_hint, stream);
    case 8: return Launch<uint64_t>(samples, n, max_count_hint, stream);
    default: throw InvalidArgument("TransposeGpu: element size " + std::to_string(element_size) + " not supported");
  }
}

}  // namespace conveyor::ops
