#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/image_common/vec_io.cuh"
#include "operators/noise/noise.h"
#include "operators/noise/noise_unit.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// grid (blocks per sample, samples); threads stride over the sample's units.
template <typename T>
__global__ void NoiseKernel(const NoiseKey* key_ptr, const NoiseSample* samples) {
  const NoiseSample s = samples[blockIdx.y];
  const NoiseKey key = *key_ptr;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < s.units; u += stride) {
    NoiseUnit<T>(s, key, u);
  }
}

}  // namespace

void NoiseGpu(const NoiseKey* key, const NoiseSample* samples, int n, int64_t max_units_hint, DType type,
              cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_units_hint, int64_t{kThreads} * 4), static_cast<unsigned>(n));
  const bool ok = DispatchImageType(type, [&](auto tag) {
    NoiseKernel<decltype(tag)><<<grid, kThreads, 0, stream.get()>>>(key, samples);
  });
  if (!ok) throw InvalidArgument("NoiseGpu: unsupported dtype " + std::string(DTypeName(type)));
  CONVEYOR_CHECK_LAUNCH("NoiseKernel");
}

}  // namespace conveyor::ops
