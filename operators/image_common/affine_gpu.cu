#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/image_common/affine.h"
#include "operators/image_common/convert.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 8;  // elements per thread and step: 8 x uint8 = 8 B, 8 x float = 32 B

// grid (blocks per sample, samples): each block strides over groups of kVec elements of its
// sample; one modulo per group finds the channel, then it advances by increments.
template <typename Out, typename In>
__global__ void AffineKernel(const AffineSample* samples) {
  __shared__ float mul[kMaxAffineChannels], add[kMaxAffineChannels];
  const AffineSample& s = samples[blockIdx.y];
  const int channels = s.channels;
  if (threadIdx.x < channels) {
    mul[threadIdx.x] = s.mul[threadIdx.x];
    add[threadIdx.x] = s.add[threadIdx.x];
  }
  __syncthreads();
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const int64_t count = s.count;
  const int64_t groups = count / kVec;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t g = first; g < groups; g += stride) {
    In v[kVec];
    LoadVec(in + g * kVec, v);
    int c = static_cast<int>((g * kVec) % channels);
    Out o[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      o[k] = StoreFromFloat<Out>(fmaf(LoadAsFloat(v[k]), mul[c], add[c]));
      c = c + 1 == channels ? 0 : c + 1;
    }
    StoreVec(out + g * kVec, o);
  }
  const int64_t e = groups * kVec + first;  // the tail: fewer than kVec elements
  if (e < count) out[e] = StoreFromFloat<Out>(fmaf(LoadAsFloat(in[e]), mul[e % channels], add[e % channels]));
}

}  // namespace

void AffineGpu(const AffineSample* samples, int n, int64_t max_count_hint, DType out_type, DType in_type,
               cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_count_hint, int64_t{kThreads} * kVec), static_cast<unsigned>(n));
  bool launched = false;
  DispatchImageType(in_type, [&](auto in_tag) {
    DispatchImageType(out_type, [&](auto out_tag) {
      AffineKernel<decltype(out_tag), decltype(in_tag)><<<grid, kThreads, 0, stream.get()>>>(samples);
      launched = true;
    });
  });
  if (!launched) {
    throw InvalidArgument("AffineGpu: unsupported dtypes " + std::string(DTypeName(in_type)) + " -> " +
                          std::string(DTypeName(out_type)));
  }
  CONVEYOR_CHECK_LAUNCH("AffineKernel");
}

}  // namespace conveyor::ops
