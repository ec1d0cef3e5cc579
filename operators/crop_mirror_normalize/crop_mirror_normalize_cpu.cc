#include <cmath>

#include "core/error.h"
#include "operators/crop_mirror_normalize/crop_mirror_normalize.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

void CropMirrorNormalizeCpu(const CmnSample& s, DType out_type, DType in_type, bool chw) {
  const bool ok = DispatchImageType(in_type, [&](auto in_tag) {
    DispatchImageType(out_type, [&](auto out_tag) {
      using In = decltype(in_tag);
      using Out = decltype(out_tag);
      const int64_t h = s.h, w = s.w, co = s.out_channels;
      for (int64_t f = 0; f < s.frames; ++f) {  // a clip's frames alike; an image is one frame
        const In* in = static_cast<const In*>(s.in) + f * s.in_frame_stride;
        Out* out = static_cast<Out*>(s.out) + f * h * w * co;
        for (int64_t y = 0; y < h; ++y) {
          const In* row = in + (s.y0 + y) * s.in_row_stride + static_cast<int64_t>(s.x0) * s.channels;
          for (int64_t x = 0; x < w; ++x) {
            const int64_t xin = s.mirror ? w - 1 - x : x;
            for (int64_t c = 0; c < co; ++c) {
              const float v =
                  c < s.channels ? std::fmaf(LoadAsFloat(row[xin * s.channels + c]), s.mul[c], s.add[c]) : 0.f;
              out[chw ? (c * h + y) * w + x : (y * w + x) * co + c] = StoreFromFloat<Out>(v);
            }
          }
        }
      }
    });
  });
  if (!ok) throw InvalidArgument("CropMirrorNormalizeCpu: unsupported input dtype " + std::string(DTypeName(in_type)));
}

}  // namespace conveyor::ops
