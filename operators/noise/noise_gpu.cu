#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/image_common/vec_io.cuh"
#include "operators/noise/noise.h"
#include "operators/noise/noise_unit.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

// Units 2k and 2k+1 take draws 4k..4k+3: one Philox block (10 rounds) serves both, where a
// generator per unit would compute every block twice. Seeking to a multiple of 4 lets the
// compiler keep the generator's four words in registers.
template <typename T, void (*Rule)(const NoiseSample&, int64_t, Philox&)>
__device__ void UnitPairs(const NoiseSample& s, const NoiseKey& key) {
  const int64_t pairs = (s.units + 1) / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < pairs; k += stride) {
    Philox rng(key.seed, key.node, key.iteration, s.sample);
    rng.Seek(4 * static_cast<uint64_t>(k));
    Rule(s, 2 * k, rng);
    if (2 * k + 1 < s.units) Rule(s, 2 * k + 1, rng);
  }
}

// grid (blocks per sample, samples); threads stride over the sample's units (pairs of units for
// the modes that take exactly two draws per unit).
template <typename T>
__global__ void NoiseKernel(const NoiseKey* key_ptr, const NoiseSample* samples) {
  const NoiseSample s = samples[blockIdx.y];
  const NoiseKey key = *key_ptr;
  if (s.mode == NoiseMode::kGaussian) return UnitPairs<T, GaussianUnit<T>>(s, key);
  if (s.mode == NoiseMode::kSaltAndPepper) return UnitPairs<T, SaltAndPepperUnit<T>>(s, key);
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
