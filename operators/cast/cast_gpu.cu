#include <algorithm>

#include "core/cuda/check.h"
#include "operators/cast/cast.h"
#include "operators/cast/cast_dispatch.h"

namespace conveyor::ops {
namespace {

template <typename Out, typename In>
__global__ void CastKernel(Out* out, const In* in, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<Out>(in[i]);
  }
}

}  // namespace

void CastGpu(void* out, DType out_type, const void* in, DType in_type, int64_t n, cuda::StreamView stream) {
  if (n == 0) return;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
  detail::DispatchCastType(in_type, [&](auto in_tag) {
    detail::DispatchCastType(out_type, [&](auto out_tag) {
      using In = decltype(in_tag);
      using Out = decltype(out_tag);
      CastKernel<<<blocks, kThreads, 0, stream.get()>>>(static_cast<Out*>(out), static_cast<const In*>(in), n);
    });
  });
  CONVEYOR_CHECK_LAUNCH("CastKernel");
}

}  // namespace conveyor::ops
