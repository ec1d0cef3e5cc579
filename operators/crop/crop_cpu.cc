// The crop reference: element by element, straight from the contract in crop.h.
#include <cmath>

#include "core/error.h"
#include "operators/crop/crop.h"

namespace conveyor::ops {
namespace {

template <typename T>
T FillAs(float v) {
  if constexpr (sizeof(T) == 1) {
    const float r = std::floor(v + 0.5f);
    return static_cast<T>(r <= 0.f ? 0.f : (r >= 255.f ? 255.f : r));
  } else {
    return v;
  }
}

template <typename T>
void RunFrame(const CropDesc& d, const T* in, T* out) {
  for (int64_t y = 0; y < d.out_h; ++y) {
    for (int64_t x = 0; x < d.out_w; ++x) {
      const int64_t sy = d.y0 + y, sx = d.x0 + x;
      const bool inside = sy >= 0 && sy < d.in_h && sx >= 0 && sx < d.in_w;
      for (int64_t c = 0; c < d.channels; ++c) {
        out[(y * d.out_w + x) * d.channels + c] =
            inside ? in[(sy * d.in_w + sx) * d.channels + c] : FillAs<T>(d.fill[c < kMaxCropFill ? c : 0]);
      }
    }
  }
}

template <typename T>
void Run(const CropDesc& d) {
  const int64_t in_frame = d.in_h * d.in_w * d.channels, out_frame = d.out_h * d.out_w * d.channels;
  for (int64_t f = 0; f < d.frames; ++f) {
    RunFrame(d, static_cast<const T*>(d.in) + f * in_frame, static_cast<T*>(d.out) + f * out_frame);
  }
}

}  // namespace

int64_t CropOrigin(double pos, int64_t extent, int64_t crop) {
  return static_cast<int64_t>(std::llround(pos * static_cast<double>(extent - crop)));
}

void CropCpu(const CropDesc& d, DType dtype) {
  if (dtype == DType::kUInt8) return Run<uint8_t>(d);
  if (dtype == DType::kFloat32) return Run<float>(d);
  throw InvalidArgument("crop: unsupported dtype " + std::string(DTypeName(dtype)));
}

}  // namespace conveyor::ops
