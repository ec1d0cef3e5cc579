#include <type_traits>

#include "operators/tensor/element_types.h"
#include "operators/tensor/one_hot.h"

namespace conveyor::ops {

void OneHotCpu(const OneHotSample& s, DType in_type) {
  DispatchIndexAndWord(in_type, s.in, s.out_size, s.out, [&](const auto* in, auto* out) {
    using W = std::remove_reference_t<decltype(*out)>;
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t c = 0; c < s.classes; ++c) {
        W* row = out + (o * s.classes + c) * s.inner;
        for (int64_t i = 0; i < s.inner; ++i) row[i] = static_cast<W>(static_cast<int64_t>(in[o * s.inner + i]) == c ? s.on : s.off);
      }
    }
  });
}

}  // namespace conveyor::ops
