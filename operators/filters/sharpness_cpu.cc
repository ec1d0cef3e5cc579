#include "core/error.h"
#include "operators/filters/sharpness.h"

namespace conveyor::ops {

void SharpnessCpu(const SharpnessSample& s, DType type) {
  const int64_t pixels = static_cast<int64_t>(s.height) * s.width;
  const bool ok = DispatchImageType(type, [&](auto tag) {
    for (int64_t p = 0; p < pixels; ++p) SharpnessPixel<decltype(tag)>(s, p);
  });
  if (!ok) throw InvalidArgument("SharpnessCpu: unsupported dtype " + std::string(DTypeName(type)));
}

}  // namespace conveyor::ops
