// flip kernel: blockIdx.y = sample; blocks along x take whole rows (plane, y) in a grid-stride
// loop; threads take pixels of the row, so writes are consecutive. Rows that are not mirrored
// are copied element-wise (coalesced); mirrored rows move a pixel's `inner` elements per thread.
#include <algorithm>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/flip/flip.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 128;

template <typename T>
__global__ void __launch_bounds__(kThreads) FlipKernel(const FlipDesc* descs) {
  const FlipDesc d = descs[blockIdx.y];
  const int64_t rows = d.planes * d.height;
  const int64_t inner = d.inner;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t p = r / d.height;
    const int64_t y = r - p * d.height;
    const int64_t sy = d.vertical ? d.height - 1 - y : y;
    const T* src = static_cast<const T*>(d.in) + (p * d.height + sy) * d.width * inner;
    T* dst = static_cast<T*>(d.out) + r * d.width * inner;
    if (!d.horizontal) {
      for (int64_t e = threadIdx.x; e < d.width * inner; e += kThreads) dst[e] = src[e];
      continue;
    }
    if (inner == 1) {
      for (int64_t x = threadIdx.x; x < d.width; x += kThreads) dst[x] = src[d.width - 1 - x];
      continue;
    }
    for (int64_t x = threadIdx.x; x < d.width; x += kThreads) {
      const T* s = src + (d.width - 1 - x) * inner;
      T* o = dst + x * inner;
      for (int64_t k = 0; k < inner; ++k) o[k] = s[k];
    }
  }
}

}  // namespace

void FlipGpu(const FlipDesc* descs, int num_samples, int64_t capacity_bytes, int element_size, cuda::StreamView stream) {
  if (num_samples == 0 || capacity_bytes == 0) return;
  // One block per row of the largest sample the capacity allows (rows of >= 64 bytes assumed),
  // capped so the batch has ~4096 blocks; grid-stride loops cover the rest.
  const int64_t rows = std::max<int64_t>(capacity_bytes / num_samples / 64, 1);
  const int64_t spread = std::max<int64_t>((4096 + num_samples - 1) / num_samples, 1);
  const dim3 grid(static_cast<unsigned>(std::min(rows, spread)), static_cast<unsigned>(num_samples));
  switch (element_size) {
    case 1: FlipKernel<uint8_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    case 2: FlipKernel<uint16_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    case 4: FlipKernel<uint32_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    case 8: FlipKernel<uint64_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    default: throw InvalidArgument("flip: unsupported element size " + std::to_string(element_size));
  }
  CONVEYOR_CHECK_LAUNCH("FlipKernel");
}

}  // namespace conveyor::ops
