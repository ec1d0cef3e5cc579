// Window kernel: blockIdx.y = sample; blocks along x take output rows (grid-stride), threads the
// row's elements. A row whose pixels and channels all lie inside the input is one contiguous run
// of it: copied element-wise, coalesced on both sides. Other rows compute each element's source.
#include <algorithm>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/pad_paste/window.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads) WindowKernel(const WindowDesc* descs) {
  const WindowDesc& d = descs[blockIdx.y];
  const int64_t out_h = d.out_h, out_w = d.out_w, out_c = d.out_c;
  const int64_t in_h = d.in_h, in_w = d.in_w, in_c = d.in_c;
  const int64_t y0 = d.y0, x0 = d.x0, c0 = d.c0;
  const T* in = static_cast<const T*>(d.in);
  T* out = static_cast<T*>(d.out);
  const bool cols_inside = x0 >= 0 && x0 + out_w <= in_w && c0 == 0 && out_c == in_c;
  const int64_t row = out_w * out_c;
  for (int64_t y = blockIdx.x; y < out_h; y += gridDim.x) {
    T* dst = out + y * row;
    const int64_t sy = y0 + y;
    const bool row_inside = sy >= 0 && sy < in_h;
    if (row_inside && cols_inside) {
      const T* src = in + (sy * in_w + x0) * in_c;
      for (int64_t e = threadIdx.x; e < row; e += kThreads) dst[e] = src[e];
      continue;
    }
    for (int64_t e = threadIdx.x; e < row; e += kThreads) {
      const int64_t x = e / out_c, c = e - x * out_c;
      const int64_t sx = x0 + x, sc = c0 + c;
      if (row_inside && sx >= 0 && sx < in_w && sc >= 0 && sc < in_c) {
        dst[e] = in[(sy * in_w + sx) * in_c + sc];
      } else {
        dst[e] = static_cast<T>(d.fill[d.fill_count == 1 ? 0 : c % kMaxWindowFill]);
      }
    }
  }
}

}  // namespace

void WindowGpu(const WindowDesc* descs, int num_samples, int64_t capacity_bytes, DType dtype, cuda::StreamView stream) {
  if (num_samples == 0 || capacity_bytes == 0) return;
  const int64_t rows = std::max<int64_t>(capacity_bytes / num_samples / 256, 1);  // rows of >= 256 bytes
  const int64_t spread = std::max<int64_t>((8192 + num_samples - 1) / num_samples, 1);
  const dim3 grid(static_cast<unsigned>(std::min(rows, spread)), static_cast<unsigned>(num_samples));
  switch (DTypeSize(dtype)) {
    case 1: WindowKernel<uint8_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    case 2: WindowKernel<uint16_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    case 4: WindowKernel<uint32_t><<<grid, kThreads, 0, stream.get()>>>(descs); break;
    default: throw InvalidArgument("window: unsupported dtype " + std::string(DTypeName(dtype)));
  }
  CONVEYOR_CHECK_LAUNCH("WindowKernel");
}

}  // namespace conveyor::ops
