#include "core/error.h"
#include "operators/erase/erase.h"
#include "operators/erase/erase_pixel.h"

namespace conveyor::ops {

void EraseCpu(const EraseSample& s, DType type) {
  const int64_t pixels = static_cast<int64_t>(s.height) * s.width;
  const bool ok = DispatchImageType(type, [&](auto tag) {
    for (int64_t p = 0; p < pixels; ++p) ErasePixel<decltype(tag)>(s, p);
  });
  if (!ok) throw InvalidArgument("EraseCpu: unsupported dtype " + std::string(DTypeName(type)));
}

}  // namespace conveyor::ops
