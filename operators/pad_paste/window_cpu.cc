// The window reference: element by element, straight from the contract in window.h.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "operators/pad_paste/window.h"

namespace conveyor::ops {
namespace {

template <typename T>
void Run(const WindowDesc& d) {
  const T* in = static_cast<const T*>(d.in);
  T* out = static_cast<T*>(d.out);
  for (int64_t y = 0; y < d.out_h; ++y) {
    for (int64_t x = 0; x < d.out_w; ++x) {
      const int64_t sy = d.y0 + y, sx = d.x0 + x;
      const bool pixel_inside = sy >= 0 && sy < d.in_h && sx >= 0 && sx < d.in_w;
      for (int64_t c = 0; c < d.out_c; ++c) {
        const int64_t sc = d.c0 + c;
        T v;
        if (pixel_inside && sc >= 0 && sc < d.in_c) {
          v = in[(sy * d.in_w + sx) * d.in_c + sc];
        } else {
          const uint32_t bits = d.fill[d.fill_count == 1 ? 0 : c % kMaxWindowFill];
          std::memcpy(&v, &bits, sizeof(T));  // little-endian: the low bytes
        }
        out[(y * d.out_w + x) * d.out_c + c] = v;
      }
    }
  }
}

template <typename T>
bool IntegerBits(double value, uint32_t* bits, std::string* why, const char* name) {
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (!(value >= lo && value <= hi) || std::floor(value) != value) {
    *why = "expected an integer in [" + std::to_string(static_cast<int64_t>(lo)) + ", " +
           std::to_string(static_cast<int64_t>(hi)) + "] for " + name;
    return false;
  }
  const T v = static_cast<T>(value);
  *bits = 0;
  std::memcpy(bits, &v, sizeof(T));
  return true;
}

}  // namespace

const std::vector<DType>& WindowDTypes() {
  static const std::vector<DType> dtypes = {DType::kUInt8, DType::kInt8,  DType::kUInt16,
                                            DType::kInt16, DType::kInt32, DType::kFloat32};
  return dtypes;
}

bool FillBits(double value, DType dtype, uint32_t* bits, std::string* why) {
  switch (dtype) {
    case DType::kUInt8: return IntegerBits<uint8_t>(value, bits, why, "uint8");
    case DType::kInt8: return IntegerBits<int8_t>(value, bits, why, "int8");
    case DType::kUInt16: return IntegerBits<uint16_t>(value, bits, why, "uint16");
    case DType::kInt16: return IntegerBits<int16_t>(value, bits, why, "int16");
    case DType::kInt32: return IntegerBits<int32_t>(value, bits, why, "int32");
    case DType::kFloat32: {
      const float f = static_cast<float>(value);
      if (!std::isfinite(f)) {
        *why = "expected a finite value for float32";
        return false;
      }
      std::memcpy(bits, &f, 4);
      return true;
    }
    default: *why = "unsupported dtype " + std::string(DTypeName(dtype)); return false;
  }
}

void WindowCpu(const WindowDesc& d, DType dtype) {
  switch (DTypeSize(dtype)) {
    case 1: return Run<uint8_t>(d);
    case 2: return Run<uint16_t>(d);
    case 4: return Run<uint32_t>(d);
    default: throw InvalidArgument("window: unsupported dtype " + std::string(DTypeName(dtype)));
  }
}

}  // namespace conveyor::ops
