#include "core/cuda/check.h"
#include "operators/color/histogram.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 1024;

// One block per sample: histogram (shared atomics), one thread per channel builds its table,
// then every element is mapped.
__global__ void HistogramKernel(const HistogramSample* samples) {
  __shared__ unsigned int counts[kMaxHistogramChannels * 256];
  __shared__ int64_t hist[kMaxHistogramChannels * 256];
  __shared__ uint8_t lut[kMaxHistogramChannels * 256];
  const HistogramSample s = samples[blockIdx.x];
  const int c = s.channels;
  for (int k = threadIdx.x; k < c * 256; k += blockDim.x) counts[k] = 0;
  __syncthreads();
  for (int64_t e = threadIdx.x; e < s.count; e += blockDim.x) atomicAdd(&counts[(e % c) * 256 + s.in[e]], 1u);
  __syncthreads();
  for (int k = threadIdx.x; k < c * 256; k += blockDim.x) hist[k] = counts[k];
  __syncthreads();
  if (threadIdx.x < c) BuildLut(s.mode, &hist[threadIdx.x * 256], &lut[threadIdx.x * 256]);
  __syncthreads();
  for (int64_t e = threadIdx.x; e < s.count; e += blockDim.x) s.out[e] = lut[(e % c) * 256 + s.in[e]];
}

}  // namespace

void HistogramGpu(const HistogramSample* samples, int n, cuda::StreamView stream) {
  if (n == 0) return;
  HistogramKernel<<<static_cast<unsigned>(n), kThreads, 0, stream.get()>>>(samples);
  CONVEYOR_CHECK_LAUNCH("HistogramKernel");
}

}  // namespace conveyor::ops
