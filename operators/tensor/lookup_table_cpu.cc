#include <type_traits>

#include "operators/tensor/element_types.h"
#include "operators/tensor/lookup_table.h"

namespace conveyor::ops {

void LookupCpu(const LookupSample& s, DType in_type) {
  DispatchIndexAndWord(in_type, s.in, s.out_size, s.out, [&](const auto* in, auto* out) {
    using W = std::remove_reference_t<decltype(*out)>;
    const W* entries = static_cast<const W*>(s.entries);
    for (int64_t j = 0; j < s.count; ++j) {
      const int64_t key = static_cast<int64_t>(in[j]);
      out[j] = key >= 0 && key < s.size ? entries[key] : static_cast<W>(s.default_bits);
    }
  });
}

}  // namespace conveyor::ops
