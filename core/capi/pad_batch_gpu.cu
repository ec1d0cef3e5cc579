#include <algorithm>

#include "core/capi/pad_batch.h"
#include "core/cuda/check.h"

namespace conveyor::capi {
namespace {

struct PadGeometry {
  int ndim = 0;                  // of a sample
  int64_t extent[kMaxPadDims];   // padded extents of a sample
  int64_t per_sample = 0;        // elements of a padded sample
};

// One thread per output element: its sample's element when inside the sample, else the pattern.
template <typename T>
__global__ void PadKernel(T* out, const char* base, const PadSample* samples, PadGeometry g, int64_t total,
                          T pattern) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += step) {
    const int64_t b = e / g.per_sample;
    int64_t rest = e - b * g.per_sample;
    const PadSample& s = samples[b];
    int64_t src = 0, inner = 1;
    bool inside = true;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t j = rest % g.extent[d];
      rest /= g.extent[d];
      inside = inside && j < s.shape[d];
      src += j * inner;
      inner *= s.shape[d];
    }
    out[e] = inside ? reinterpret_cast<const T*>(base + s.offset)[src] : pattern;
  }
}

template <typename T>
void Launch(void* out, const void* base, const PadSample* samples, const PadGeometry& g, int64_t total,
            uint64_t pattern, cuda::StreamView stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 8192));
  PadKernel<T><<<blocks, 256, 0, stream.get()>>>(static_cast<T*>(out), static_cast<const char*>(base), samples, g,
                                                  total, static_cast<T>(pattern));
  CONVEYOR_CHECK_LAUNCH("PadKernel");
}

}  // namespace

void PadBatchGpu(void* out, const void* base, const PadSample* samples_on_device, const Shape& padded,
                 size_t itemsize, uint64_t pattern, cuda::StreamView stream) {
  const int64_t total = padded.num_elements();
  if (total == 0) return;
  PadGeometry g;
  g.ndim = padded.ndim() - 1;
  g.per_sample = 1;
  for (int d = 0; d < g.ndim; ++d) {
    g.extent[d] = padded[d + 1];
    g.per_sample *= padded[d + 1];
  }
  switch (itemsize) {
    case 1: return Launch<uint8_t>(out, base, samples_on_device, g, total, pattern, stream);
    case 2: return Launch<uint16_t>(out, base, samples_on_device, g, total, pattern, stream);
    case 4: return Launch<uint32_t>(out, base, samples_on_device, g, total, pattern, stream);
    default: return Launch<uint64_t>(out, base, samples_on_device, g, total, pattern, stream);
  }
}

}  // namespace conveyor::capi
