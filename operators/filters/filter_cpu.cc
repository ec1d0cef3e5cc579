#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "operators/filters/filter.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {
namespace {

template <typename In, typename Out>
void FilterSampleCpu(const FilterSample& s, const float* weights) {
  const In* in = static_cast<const In*>(s.in);
  Out* out = static_cast<Out*>(s.out);
  const float* w = weights + s.weights_offset;
  const int h = s.height, wd = s.width, c = s.channels;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < wd; ++x) {
      for (int ch = 0; ch < c; ++ch) {
        float acc = 0.f;
        for (int i = 0; i < s.filter_h; ++i) {
          const int sy = FilterBorderIndex(y + i - s.anchor_y, h, s.border);
          for (int j = 0; j < s.filter_w; ++j) {
            const int sx = FilterBorderIndex(x + j - s.anchor_x, wd, s.border);
            const float v = sy < 0 || sx < 0 ? s.fill : LoadAsFloat(in[(static_cast<int64_t>(sy) * wd + sx) * c + ch]);
            acc = std::fmaf(w[i * s.filter_w + j], v, acc);
          }
        }
        out[(static_cast<int64_t>(y) * wd + x) * c + ch] = StoreFromFloat<Out>(acc);
      }
    }
  }
}

}  // namespace

void FilterCpu(const FilterSample& s, const float* weights, DType in_type, DType out_type) {
  if (in_type == DType::kUInt8 && out_type == DType::kUInt8) return FilterSampleCpu<uint8_t, uint8_t>(s, weights);
  if (in_type == DType::kUInt8 && out_type == DType::kFloat32) return FilterSampleCpu<uint8_t, float>(s, weights);
  if (in_type == DType::kFloat32 && out_type == DType::kFloat32) return FilterSampleCpu<float, float>(s, weights);
  throw InvalidArgument("FilterCpu: unsupported dtypes " + std::string(DTypeName(in_type)) + " -> " +
                        std::string(DTypeName(out_type)));
}

}  // namespace conveyor::ops
