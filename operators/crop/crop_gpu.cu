// crop kernel: blockIdx.y = sample; blocks along x take output rows (grid-stride; a clip's rows
// of every frame, frame after frame, as the output lies), threads take the row's elements. A row fully inside the image is one contiguous run of the input: copied
// element-wise, coalesced on both sides, with no per-element index arithmetic. Rows that touch
// the padding go pixel by pixel.
#include <algorithm>
#include <cmath>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/crop/crop.h"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 128;

template <typename T>
__device__ __forceinline__ T FillAs(float v) {
  if constexpr (sizeof(T) == 1) {
    const float r = floorf(__fadd_rn(v, 0.5f));
    return static_cast<T>(r <= 0.f ? 0.f : (r >= 255.f ? 255.f : r));
  } else {
    return v;
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) CropKernel(const CropDesc* descs) {
  const CropDesc& d = descs[blockIdx.y];
  const int64_t out_h = d.out_h, out_w = d.out_w, c = d.channels;
  const int64_t y0 = d.y0, x0 = d.x0, in_h = d.in_h, in_w = d.in_w;
  const T* in0 = static_cast<const T*>(d.in);
  T* out = static_cast<T*>(d.out);
  const bool cols_inside = x0 >= 0 && x0 + out_w <= in_w;
  const int64_t rows = d.frames * out_h, in_frame = in_h * in_w * c;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t f = r / out_h, y = r - f * out_h;
    T* dst = out + r * out_w * c;
    const T* in = in0 + f * in_frame;
    const int64_t sy = y0 + y;
    const bool row_inside = sy >= 0 && sy < in_h;
    if (row_inside && cols_inside) {
      const T* src = in + (sy * in_w + x0) * c;
      for (int64_t e = threadIdx.x; e < out_w * c; e += kThreads) dst[e] = src[e];
      continue;
    }
    for (int64_t x = threadIdx.x; x < out_w; x += kThreads) {
      const int64_t sx = x0 + x;
      const bool inside = row_inside && sx >= 0 && sx < in_w;
      for (int64_t k = 0; k < c; ++k) {
        dst[x * c + k] = inside ? in[(sy * in_w + sx) * c + k] : FillAs<T>(d.fill[k < kMaxCropFill ? k : 0]);
      }
    }
  }
}

}  // namespace

void CropGpu(const CropDesc* descs, int num_samples, int64_t capacity_bytes, DType dtype, cuda::StreamView stream) {
  if (num_samples == 0 || capacity_bytes == 0) return;
  const int64_t rows = std::max<int64_t>(capacity_bytes / num_samples / 64, 1);  // rows of >= 64 bytes
  const int64_t spread = std::max<int64_t>((4096 + num_samples - 1) / num_samples, 1);
  const dim3 grid(static_cast<unsigned>(std::min(rows, spread)), static_cast<unsigned>(num_samples));
  if (dtype == DType::kUInt8) {
    CropKernel<uint8_t><<<grid, kThreads, 0, stream.get()>>>(descs);
  } else if (dtype == DType::kFloat32) {
    CropKernel<float><<<grid, kThreads, 0, stream.get()>>>(descs);
  } else {
    throw InvalidArgument("crop: unsupported dtype " + std::string(DTypeName(dtype)));
  }
  CONVEYOR_CHECK_LAUNCH("CropKernel");
}

}  // namespace conveyor::ops
