// The flip reference: element by element, straight from the contract in flip.h.
#include <cstring>

#include "operators/flip/flip.h"

namespace conveyor::ops {

void FlipCpu(const FlipDesc& d, int element_size) {
  const auto* in = static_cast<const char*>(d.in);
  auto* out = static_cast<char*>(d.out);
  const size_t pixel = static_cast<size_t>(d.inner) * element_size;
  for (int64_t p = 0; p < d.planes; ++p) {
    for (int64_t y = 0; y < d.height; ++y) {
      const int64_t sy = d.vertical ? d.height - 1 - y : y;
      for (int64_t x = 0; x < d.width; ++x) {
        const int64_t sx = d.horizontal ? d.width - 1 - x : x;
        std::memcpy(out + ((p * d.height + y) * d.width + x) * pixel, in + ((p * d.height + sy) * d.width + sx) * pixel,
                    pixel);
      }
    }
  }
}

}  // namespace conveyor::ops
