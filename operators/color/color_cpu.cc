#include "core/error.h"
#include "operators/color/color.h"
#include "operators/color/color_pixel.h"

namespace conveyor::ops {

void ColorCpu(const ColorSample& s, DType out_type, DType in_type) {
  const bool ok = DispatchImageType(in_type, [&](auto in_tag) {
    DispatchImageType(out_type, [&](auto out_tag) {
      for (int64_t p = 0; p < s.pixels; ++p) ColorPixel<decltype(out_tag), decltype(in_tag)>(s, p);
    });
  });
  if (!ok) throw InvalidArgument("ColorCpu: unsupported input dtype " + std::string(DTypeName(in_type)));
}

}  // namespace conveyor::ops
