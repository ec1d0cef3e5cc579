#include <cmath>
#include <vector>

#include "core/error.h"
#include "operators/filters/gaussian_blur.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

int GaussianWeights(double sigma, int window_size, float* weights) {
  int radius = window_size > 0 ? (window_size - 1) / 2 : static_cast<int>(std::ceil(3 * sigma));
  if (sigma <= 0) sigma = (radius - 1) * 0.3 + 0.8;
  std::vector<double> w(static_cast<size_t>(2 * radius + 1));
  double sum = 0;
  for (int k = -radius; k <= radius; ++k) sum += w[static_cast<size_t>(k + radius)] = std::exp(-k * k / (2 * sigma * sigma));
  for (int k = 0; k < 2 * radius + 1; ++k) weights[k] = static_cast<float>(w[static_cast<size_t>(k)] / sum);
  return radius;
}

void GaussianBlurCpu(const BlurSample& s, DType type) {
  const bool ok = DispatchImageType(type, [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(s.in);
    T* out = static_cast<T*>(s.out);
    const int h = s.height, w = s.width, c = s.channels, r = s.radius;
    std::vector<float> tmp(static_cast<size_t>(h) * w * c);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        for (int ch = 0; ch < c; ++ch) {
          float acc = 0.f;
          for (int k = 0; k <= 2 * r; ++k) {
            acc = std::fmaf(s.weights[k], LoadAsFloat(in[(static_cast<int64_t>(y) * w + Reflect101(x + k - r, w)) * c + ch]), acc);
          }
          tmp[(static_cast<size_t>(y) * w + x) * c + ch] = acc;
        }
      }
    }
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        for (int ch = 0; ch < c; ++ch) {
          float acc = 0.f;
          for (int k = 0; k <= 2 * r; ++k) {
            acc = std::fmaf(s.weights[k], tmp[(static_cast<size_t>(Reflect101(y + k - r, h)) * w + x) * c + ch], acc);
          }
          out[(static_cast<int64_t>(y) * w + x) * c + ch] = StoreFromFloat<T>(acc);
        }
      }
    }
  });
  if (!ok) throw InvalidArgument("GaussianBlurCpu: unsupported dtype " + std::string(DTypeName(type)));
}

}  // namespace conveyor::ops
