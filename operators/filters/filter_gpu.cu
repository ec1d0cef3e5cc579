#include <string>

#include "core/cuda/check.h"
#include "core/error.h"
#include "operators/filters/filter.h"
#include "operators/image_common/convert.h"
#include "operators/image_common/vec_io.cuh"

namespace conveyor::ops {
namespace {

constexpr int kTileW = 32;  // = blockDim.x
constexpr int kTileH = 16;
constexpr int kRowsPerPass = 8;  // = blockDim.y
constexpr int kThreads = kTileW * kRowsPerPass;
constexpr int kMaxSpanW = kTileW + kMaxFilterExtent - 1;
constexpr int kMaxSpanH = kTileH + kMaxFilterExtent - 1;

// grid (blocks per sample, samples); each block strides over its sample's kTileW x kTileH output
// tiles. Per tile and channel: the tile's input window (tile plus halo, the border rule applied as
// it is read) into shared memory as float, then each thread's outputs from there, with
// FilterCpu's fmaf order: bit-identical. Channels one at a time keep the window at one plane
// (11 KiB for the largest filter) whatever the channel count.
template <typename In, typename Out>
__global__ void FilterKernel(const FilterSample* samples, const float* weights) {
  __shared__ float window[kMaxSpanH * kMaxSpanW];
  __shared__ float taps[kMaxFilterExtent * kMaxFilterExtent];
  const FilterSample s = samples[blockIdx.y];
  const int h = s.height, w = s.width, c = s.channels, fh = s.filter_h, fw = s.filter_w;
  const int tid = threadIdx.y * kTileW + threadIdx.x;
  for (int k = tid; k < fh * fw; k += kThreads) taps[k] = weights[s.weights_offset + k];
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const int span_w = kTileW + fw - 1, span_h = kTileH + fh - 1;
  const int tiles_x = (w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((h + kTileH - 1) / kTileH);
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int x0 = (t % tiles_x) * kTileW, y0 = (t / tiles_x) * kTileH;
    const int x = x0 + threadIdx.x;
    for (int ch = 0; ch < c; ++ch) {
      __syncthreads();  // the previous window is read (and, the first time, the taps written)
      for (int k = tid; k < span_h * span_w; k += kThreads) {
        const int wy = k / span_w, wx = k - wy * span_w;
        const int sy = FilterBorderIndex(y0 + wy - s.anchor_y, h, s.border);
        const int sx = FilterBorderIndex(x0 + wx - s.anchor_x, w, s.border);
        window[k] = sy < 0 || sx < 0 ? s.fill : LoadAsFloat(in[(static_cast<int64_t>(sy) * w + sx) * c + ch]);
      }
      __syncthreads();
      if (x >= w) continue;
      for (int oy = threadIdx.y; oy < kTileH && y0 + oy < h; oy += kRowsPerPass) {
        float acc = 0.f;
        for (int i = 0; i < fh; ++i) {
          const float* row = window + (oy + i) * span_w + threadIdx.x;
          const float* tap = taps + i * fw;
          for (int j = 0; j < fw; ++j) acc = fmaf(tap[j], row[j], acc);
        }
        out[(static_cast<int64_t>(y0 + oy) * w + x) * c + ch] = StoreFromFloat<Out>(acc);
      }
    }
  }
}

template <typename In, typename Out>
void Launch(const FilterSample* samples, const float* weights, int n, int64_t max_pixels_hint, cudaStream_t stream) {
  const dim3 grid(BlocksPerSample(max_pixels_hint, int64_t{kTileW} * kTileH), static_cast<unsigned>(n));
  FilterKernel<In, Out><<<grid, dim3(kTileW, kRowsPerPass), 0, stream>>>(samples, weights);
  CONVEYOR_CHECK_LAUNCH("FilterKernel");
}

}  // namespace

void FilterGpu(const FilterSample* samples, const float* weights, int n, int64_t max_pixels_hint, DType in_type,
               DType out_type, cuda::StreamView stream) {
  if (n == 0) return;
  if (in_type == DType::kUInt8 && out_type == DType::kUInt8) {
    return Launch<uint8_t, uint8_t>(samples, weights, n, max_pixels_hint, stream.get());
  }
  if (in_type == DType::kUInt8 && out_type == DType::kFloat32) {
    return Launch<uint8_t, float>(samples, weights, n, max_pixels_hint, stream.get());
  }
  if (in_type == DType::kFloat32 && out_type == DType::kFloat32) {
    return Launch<float, float>(samples, weights, n, max_pixels_hint, stream.get());
  }
  throw InvalidArgument("FilterGpu: unsupported dtypes " + std::string(DTypeName(in_type)) + " -> " +
                        std::string(DTypeName(out_type)));
}

}  // namespace conveyor::ops
