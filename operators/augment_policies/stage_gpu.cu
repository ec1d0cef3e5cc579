// The GPU half of stage.h: the contrast-centre kernel (one block per sample, exact int64 luma sum)
// and the per-step sequence of batched launches of the existing kernels.
#include "core/cuda/check.h"
#include "operators/augment_policies/stage.h"

namespace conveyor::ops::augment {
namespace {

constexpr int kThreads = 256;

__global__ void ContrastCenterKernel(const CenterSample* centers, ColorSample* colors) {
  __shared__ unsigned long long total;
  const CenterSample c = centers[blockIdx.x];
  if (c.pixels == 0) return;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  unsigned long long sum = 0;
  for (int64_t p = threadIdx.x; p < c.pixels; p += blockDim.x) {
    sum += 299u * c.in[3 * p] + 587u * c.in[3 * p + 1] + 114u * c.in[3 * p + 2];
  }
  atomicAdd(&total, sum);
  __syncthreads();
  if (threadIdx.x == 0) {
    const float offset = ContrastOffset(static_cast<int64_t>(total), c.pixels, c.factor);
    for (int k = 0; k < 3; ++k) colors[blockIdx.x].offset[k] = offset;
  }
}

}  // namespace

void ContrastCenterGpu(const CenterSample* centers, ColorSample* colors, int n, cuda::StreamView stream) {
  if (n == 0) return;
  ContrastCenterKernel<<<n, kThreads, 0, stream.get()>>>(centers, colors);
  CONVEYOR_CHECK_LAUNCH("ContrastCenterKernel");
}

void RunStepGpu(const StepArrays& d, int n, int64_t max_pixels_hint, resample::Filter filter, cuda::StreamView stream) {
  if (n == 0) return;
  ContrastCenterGpu(d.centers, d.colors, n, stream);
  // Identity, solarize and posterize count elements: the hint in elements covers every mode.
  ColorGpu(d.colors, n, max_pixels_hint * 3, DType::kUInt8, DType::kUInt8, stream);
  WarpGpu(d.warps, n, max_pixels_hint, filter, DType::kUInt8, DType::kUInt8, stream);
  SharpnessGpu(d.sharpness, n, max_pixels_hint, DType::kUInt8, stream);
  HistogramGpu(d.histograms, n, stream);
}

}  // namespace conveyor::ops::augment
