#include "core/error.h"
#include "operators/erase/grid_mask.h"

namespace conveyor::ops {

void GridMaskCpu(const GridMaskSample& s, DType type) {
  const int64_t pixels = static_cast<int64_t>(s.height) * s.width;
  const bool ok = DispatchImageType(type, [&](auto tag) {
    for (int64_t p = 0; p < pixels; ++p) GridMaskPixel<decltype(tag)>(s, p);
  });
  if (!ok) throw InvalidArgument("GridMaskCpu: unsupported dtype " + std::string(DTypeName(type)));
}

}  // namespace conveyor::ops
