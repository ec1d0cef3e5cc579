#include "core/cuda/check.h"
#include "operators/cast/cast.h"
#include "operators/cast/cast_dispatch.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // elements per thread and step: four independent loads in flight

// grid (blocks per sample, samples): each block strides over its sample's elements.
template <typename Out, typename In>
__global__ void CastKernel(const CastSample* samples) {
  const CastSample& s = samples[blockIdx.y];
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const int64_t n = s.count;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < n; base += step) {
    In v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t i = base + static_cast<int64_t>(k) * kThreads;
      if (i < n) v[k] = in[i];
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t i = base + static_cast<int64_t>(k) * kThreads;
      if (i < n) out[i] = detail::CastValue<Out>(v[k]);
    }
  }
}

}  // namespace

void CastGpu(const CastSample* samples, int n, int64_t max_count_hint, DType out_type, DType in_type,
             cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_count_hint, int64_t{kThreads} * kUnroll), static_cast<unsigned>(n));
  detail::DispatchCastType(in_type, [&](auto in_tag) {
    detail::DispatchCastType(out_type, [&](auto out_tag) {
      CastKernel<decltype(out_tag), decltype(in_tag)><<<grid, kThreads, 0, stream.get()>>>(samples);
    });
  });
  CONVEYOR_CHECK_LAUNCH("CastKernel");
}

}  // namespace conveyor::ops
