#include <cstdint>

#include "core/cuda/check.h"
#include "operators/image_common/vec_io.cuh"
#include "operators/tensor/cat.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// Copies one piece in words of W bytes (W divides every address, row_bytes and the pitch).
template <typename Word>
__device__ void CopyPiece(const CatPiece& p) {
  constexpr int64_t kW = sizeof(Word);
  const Word* src = static_cast<const Word*>(p.src);
  Word* dst = static_cast<Word*>(p.dst);
  const int64_t row_words = p.row_bytes / kW;
  const int64_t total = p.rows * row_words;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (p.row_bytes == p.dst_pitch) {  // one contiguous run
    for (; i < total; i += stride) dst[i] = src[i];
    return;
  }
  const int64_t pitch_words = p.dst_pitch / kW;
  for (; i < total; i += stride) {
    const int64_t row = i / row_words;
    dst[row * pitch_words + (i - row * row_words)] = src[i];
  }
}

// blockIdx.y = piece; blocks along x stride over its words.
__global__ void CatKernel(const CatPiece* pieces) {
  const CatPiece p = pieces[blockIdx.y];
  if (p.rows == 0 || p.row_bytes == 0) return;
  const uint64_t align = reinterpret_cast<uint64_t>(p.src) | reinterpret_cast<uint64_t>(p.dst) |
                         static_cast<uint64_t>(p.row_bytes) | static_cast<uint64_t>(p.dst_pitch);
  if (align % 16 == 0) {
    CopyPiece<uint4>(p);
  } else if (align % 8 == 0) {
    CopyPiece<uint2>(p);
  } else if (align % 4 == 0) {
    CopyPiece<uint32_t>(p);
  } else if (align % 2 == 0) {
    CopyPiece<uint16_t>(p);
  } else {
    CopyPiece<uint8_t>(p);
  }
}

}  // namespace

void CatGpu(const CatPiece* pieces, int n, int64_t max_piece_bytes_hint, cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_piece_bytes_hint / 16, kThreads), static_cast<unsigned>(n));
  CatKernel<<<grid, kThreads, 0, stream.get()>>>(pieces);
  CONVEYOR_CHECK_LAUNCH("CatKernel");
}

}  // namespace conveyor::ops
