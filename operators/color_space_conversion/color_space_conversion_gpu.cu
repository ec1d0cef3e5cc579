// color_space_conversion kernel: one launch per batch, grid (blocks per sample from capacity,
// samples). A thread converts 16 bytes' worth of pixels per step (16 uint8 or 4 float32 pixels):
// every load and store is a whole 16-byte vector (a group starts at a multiple of 16 * CIN bytes).
#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/color_space_conversion/color_space_conversion.h"
#include "operators/image_common/convert.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kThreads = 256;

template <typename T, int CIN, int COUT, bool kCopy>
__device__ __forceinline__ void ConvertPixel(const CscMatrix& mat, const T* in, T* out) {
  if constexpr (kCopy) {
#pragma unroll
    for (int k = 0; k < COUT; ++k) out[k] = in[k];
  } else {
    float x[CIN], y[COUT];
#pragma unroll
    for (int j = 0; j < CIN; ++j) x[j] = LoadAsFloat(in[j]);
    CscPixel<CIN, COUT>(mat, x, y);
#pragma unroll
    for (int k = 0; k < COUT; ++k) out[k] = StoreFromFloat<T>(y[k]);
  }
}

template <typename T, int CIN, int COUT, bool kCopy>
__global__ void CscKernel(const CscSample* samples) {
  constexpr int kPix = 16 / sizeof(T);
  const CscSample& s = samples[blockIdx.y];
  const CscMatrix mat = s.mat;
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  const int64_t pixels = s.pixels;
  const int64_t groups = pixels / kPix;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (int64_t g = first; g < groups; g += stride) {
    T v[kPix * CIN];
    T o[kPix * COUT];
    LoadVec(in + g * kPix * CIN, v);
#pragma unroll
    for (int p = 0; p < kPix; ++p) ConvertPixel<T, CIN, COUT, kCopy>(mat, v + p * CIN, o + p * COUT);
    StoreVec(out + g * kPix * COUT, o);
  }
  const int64_t p = groups * kPix + first;  // the tail: fewer than kPix pixels
  if (p < pixels) ConvertPixel<T, CIN, COUT, kCopy>(mat, in + p * CIN, out + p * COUT);
}

template <typename T, int CIN, int COUT, bool kCopy>
void Launch(const CscSample* samples, int n, int64_t hint, cuda::StreamView stream) {
  const dim3 grid(BlocksPerSample(hint, int64_t{kThreads} * (16 / sizeof(T))), static_cast<unsigned>(n));
  CscKernel<T, CIN, COUT, kCopy><<<grid, kThreads, 0, stream.get()>>>(samples);
  CONVEYOR_CHECK_LAUNCH("CscKernel");
}

template <typename T>
void LaunchTyped(const CscSample* samples, int n, int64_t hint, int cin, int cout, bool copy, cuda::StreamView stream) {
  if (copy && cin == 1) return Launch<T, 1, 1, true>(samples, n, hint, stream);
  if (copy && cin == 3) return Launch<T, 3, 3, true>(samples, n, hint, stream);
  if (!copy && cin == 3 && cout == 3) return Launch<T, 3, 3, false>(samples, n, hint, stream);
  if (!copy && cin == 3 && cout == 1) return Launch<T, 3, 1, false>(samples, n, hint, stream);
  if (!copy && cin == 1 && cout == 3) return Launch<T, 1, 3, false>(samples, n, hint, stream);
  throw InvalidArgument("CscGpu: unsupported channels " + std::to_string(cin) + " -> " + std::to_string(cout));
}

}  // namespace

void CscGpu(const CscSample* samples, int n, int64_t max_pixels_hint, int cin, int cout, bool copy, DType dtype,
            cuda::StreamView stream) {
  if (n == 0) return;
  if (dtype == DType::kUInt8) return LaunchTyped<uint8_t>(samples, n, max_pixels_hint, cin, cout, copy, stream);
  if (dtype == DType::kFloat32) return LaunchTyped<float>(samples, n, max_pixels_hint, cin, cout, copy, stream);
  throw InvalidArgument("CscGpu: expected uint8 or float32, got " + std::string(DTypeName(dtype)));
}

}  // namespace conveyor::ops
