// Pointwise uint8 → Out through a 256-entry per-sample table in shared memory (device code only).
// The classic answer for per-sample byte rules that cost more than a table read: gamma's powf,
// solarize/posterize's load-convert-store, a math expression of one uint8 input. Callers fill the
// table with their own element rule (one evaluation per possible byte), so the output carries the
// rule's bits by construction — the table changes where the work happens, never the result.
//
// Work split: the sample's input is cut into 16-byte chunks aligned to 16 in memory (the first and
// last may be partial); grid (blocks per sample, samples), each thread strides over chunks. A full
// chunk is one 16-byte load and 16 * sizeof(Out) bytes of vector stores; partial chunks, and every
// chunk when the output is not aligned like the input, go element by element.
//
//   __shared__ Out lut[256];
//   if (!LutBlockHasWork(in, count)) return;      // before building: blocks past a small sample
//   for (int b = threadIdx.x; b < 256; b += blockDim.x) lut[b] = Rule(b);
//   __syncthreads();
//   ApplyByteLut(in, out, count, lut);
#pragma once

#include <cstdint>

#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {

inline constexpr int kLutChunk = 16;  // input bytes per chunk: one 16-byte load

__device__ __forceinline__ int LutLead(const uint8_t* in) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(in) % kLutChunk);
}

// Chunks of a `count`-byte input at `in` (the first starts at the 16-byte boundary at or below in).
__device__ __forceinline__ int64_t LutChunks(const uint8_t* in, int64_t count) {
  return count <= 0 ? 0 : (LutLead(in) + count + kLutChunk - 1) / kLutChunk;
}

// Whether this block maps any chunk: a block that maps none skips building its table.
__device__ __forceinline__ bool LutBlockHasWork(const uint8_t* in, int64_t count) {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x < LutChunks(in, count);
}

// out[j] = lut[in[j]] for j in [0, count), by every thread of every block of the sample's grid
// row. `lut` (256 entries) must be complete and visible (after __syncthreads) before the call.
template <typename Out>
__device__ __forceinline__ void ApplyByteLut(const uint8_t* in, Out* out, int64_t count, const Out* lut) {
  const int lead = LutLead(in);
  const int64_t chunks = LutChunks(in, count);
  // out + j is 16-byte aligned wherever in + j is (samples of a TensorList always are).
  const bool vector = (reinterpret_cast<uintptr_t>(out) - static_cast<uintptr_t>(lead) * sizeof(Out)) % 16 == 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {
    const int64_t first = c * kLutChunk - lead;  // the element at the chunk's first byte (< 0: before the sample)
    if (vector && first >= 0 && first + kLutChunk <= count) {
      uint8_t bytes[kLutChunk];
      LoadVec<uint8_t, kLutChunk>(in + first, bytes);
      Out mapped[kLutChunk];
#pragma unroll
      for (int k = 0; k < kLutChunk; ++k) mapped[k] = lut[bytes[k]];
      StoreVec<Out, kLutChunk>(out + first, mapped);
    } else {
      for (int k = 0; k < kLutChunk; ++k) {
        const int64_t j = first + k;
        if (j >= 0 && j < count) out[j] = lut[in[j]];
      }
    }
  }
}

}  // namespace conveyor::ops
