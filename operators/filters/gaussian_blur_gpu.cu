#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/filters/gaussian_blur.h"
#include "operators/image_common/convert.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kTileW = 32;  // = blockDim.x
constexpr int kTileH = 16;
constexpr int kRowsPerPass = 8;  // = blockDim.y
constexpr int kMaxRows = kTileH + 2 * kMaxBlurRadius;

// grid (blocks per sample, samples); each block strides over its sample's kTileW x kTileH output
// tiles. Per tile: the row pass for the tile's rows plus the halo (reflected) into shared memory,
// then the column pass from there. Same fmaf order as GaussianBlurCpu.
template <typename T>
__global__ void GaussianBlurKernel(const BlurSample* samples) {
  __shared__ float rows[kMaxRows * kTileW * kMaxBlurChannels];  // 40 KiB
  __shared__ float weights[2 * kMaxBlurRadius + 1];
  const BlurSample& s = samples[blockIdx.y];
  const int h = s.height, w = s.width, c = s.channels, r = s.radius;
  for (int k = threadIdx.y * kTileW + threadIdx.x; k <= 2 * r; k += kTileW * kRowsPerPass) weights[k] = s.weights[k];
  __syncthreads();
  const T* in = static_cast<const T*>(s.in);
  T* out = static_cast<T*>(s.out);
  const int tiles_x = (w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((h + kTileH - 1) / kTileH);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int x0 = (t % tiles_x) * kTileW, y0 = (t / tiles_x) * kTileH;
    const int x = x0 + threadIdx.x;
    if (x < w) {
      for (int rr = threadIdx.y; rr < kTileH + 2 * r; rr += kRowsPerPass) {
        const int64_t row = static_cast<int64_t>(Reflect101(y0 + rr - r, h)) * w;
        for (int ch = 0; ch < c; ++ch) {
          float acc = 0.f;
          for (int k = 0; k <= 2 * r; ++k) acc = fmaf(weights[k], LoadAsFloat(in[(row + Reflect101(x + k - r, w)) * c + ch]), acc);
          rows[(rr * kTileW + threadIdx.x) * c + ch] = acc;
        }
      }
    }
    __syncthreads();
    if (x < w) {
      for (int oy = threadIdx.y; oy < kTileH && y0 + oy < h; oy += kRowsPerPass) {
        for (int ch = 0; ch < c; ++ch) {
          float acc = 0.f;
          for (int k = 0; k <= 2 * r; ++k) acc = fmaf(weights[k], rows[((oy + k) * kTileW + threadIdx.x) * c + ch], acc);
          out[(static_cast<int64_t>(y0 + oy) * w + x) * c + ch] = StoreFromFloat<T>(acc);
        }
      }
    }
    __syncthreads();
  }
}

}  // namespace

void GaussianBlurGpu(const BlurSample* samples, int n, int64_t max_pixels_hint, DType type, cuda::StreamView stream) {
  if (n == 0) return;
  const dim3 grid(BlocksPerSample(max_pixels_hint, int64_t{kTileW} * kTileH), static_cast<unsigned>(n));
  const dim3 block(kTileW, kRowsPerPass);
  const bool ok = DispatchImageType(type, [&](auto tag) {
    GaussianBlurKernel<decltype(tag)><<<grid, block, 0, stream.get()>>>(samples);
  });
  if (!ok) throw InvalidArgument("GaussianBlurGpu: unsupported dtype " + std::string(DTypeName(type)));
  CONVEYOR_CHECK_LAUNCH("GaussianBlurKernel");
}

}  // namespace conveyor::ops
