// The one kernel shape of one_hot and lookup_table (device code; included by their .cu files):
// grid (blocks per sample, samples), each block striding over its sample's elements, with the
// index dtype as a template argument and the output written as raw words of the sample's
// out_size bytes.
//
//   struct Body { template <typename In, typename W> __device__ static void Run(const Sample& s); };
//   LaunchIndexSampleKernel<Body>(samples, n, hint, in_type, stream, "Name");
#pragma once

#include <cstdint>

#include "core/cuda/check.h"
#include "operators/image_common/vec_io.cuh"
#include "operators/tensor/element_types.h"

namespace conveyor::ops {

inline constexpr int kSampleWordThreads = 256;

__device__ __forceinline__ int64_t FirstElement() {
  return static_cast<int64_t>(blockIdx.x) * kSampleWordThreads + threadIdx.x;
}
__device__ __forceinline__ int64_t ElementStride() { return static_cast<int64_t>(gridDim.x) * kSampleWordThreads; }

template <typename In, typename Body, typename Sample>
__global__ void IndexSampleKernel(const Sample* samples) {
  const Sample s = samples[blockIdx.y];
  switch (s.out_size) {
    case 1: return Body::template Run<In, uint8_t>(s);
    case 2: return Body::template Run<In, uint16_t>(s);
    case 4: return Body::template Run<In, uint32_t>(s);
    default: return Body::template Run<In, uint64_t>(s);
  }
}

template <typename Body, typename Sample>
void LaunchIndexSampleKernel(const Sample* samples, int n, int64_t max_count_hint, DType in_type, cuda::StreamView stream,
                             const char* name) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_count_hint, kSampleWordThreads * 4), static_cast<unsigned>(n));
  DispatchIndexType(in_type, [&](auto in_tag) {
    IndexSampleKernel<decltype(in_tag), Body><<<grid, kSampleWordThreads, 0, stream.get()>>>(samples);
  });
  CONVEYOR_CHECK_LAUNCH(name);
}

}  // namespace conveyor::ops
