// Vectorized loads and stores of N consecutive elements (kernels only). `p` must be aligned to
// min(16, N * sizeof(T)) bytes: samples start 16-byte aligned, so element offsets that are
// multiples of N qualify.
#pragma once

#include <cstring>

namespace conveyor::ops {

template <typename T, int N>
__device__ __forceinline__ void LoadVec(const T* p, T (&v)[N]) {
  constexpr int kBytes = N * static_cast<int>(sizeof(T));
  char* dst = reinterpret_cast<char*>(v);
  if constexpr (kBytes % 16 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i) {
      const uint4 w = reinterpret_cast<const uint4*>(p)[i];
      memcpy(dst + 16 * i, &w, 16);
    }
  } else if constexpr (kBytes % 8 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 8; ++i) {
      const uint2 w = reinterpret_cast<const uint2*>(p)[i];
      memcpy(dst + 8 * i, &w, 8);
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = p[i];
  }
}

template <typename T, int N>
__device__ __forceinline__ void StoreVec(T* p, const T (&v)[N]) {
  constexpr int kBytes = N * static_cast<int>(sizeof(T));
  const char* src = reinterpret_cast<const char*>(v);
  if constexpr (kBytes % 16 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 16; ++i) {
      uint4 w;
      memcpy(&w, src + 16 * i, 16);
      reinterpret_cast<uint4*>(p)[i] = w;
    }
  } else if constexpr (kBytes % 8 == 0) {
#pragma unroll
    for (int i = 0; i < kBytes / 8; ++i) {
      uint2 w;
      memcpy(&w, src + 8 * i, 8);
      reinterpret_cast<uint2*>(p)[i] = w;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) p[i] = v[i];
  }
}

// Blocks per sample for a grid (blocks_per_sample, num_samples): from a per-sample element count
// derived from capacities, so a captured launch stays valid while shapes vary within them.
inline unsigned BlocksPerSample(int64_t max_count_hint, int64_t elements_per_block) {
  int64_t b = (max_count_hint + elements_per_block - 1) / elements_per_block;
  if (b < 1) b = 1;
  if (b > 65535) b = 65535;
  return static_cast<unsigned>(b);
}

}  // namespace conveyor::ops
