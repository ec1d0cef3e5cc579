#include <string>

#include "core/error.h"
#include "operators/geometry/jitter.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

void JitterCpu(const JitterSample& s, DType type) {
  const bool ok = DispatchImageType(type, [&](auto tag) {
    for (int y = 0; y < s.height; ++y) {
      for (int x = 0; x < s.width; ++x) JitterPixel<decltype(tag)>(s, x, y);
    }
  });
  if (!ok) throw InvalidArgument("JitterCpu: unsupported dtype " + std::string(DTypeName(type)));
}

}  // namespace conveyor::ops
