#include <cmath>

#include "core/error.h"
#include "operators/image_common/affine.h"
#include "operators/image_common/convert.h"

namespace conveyor::ops {

void AffineCpu(const AffineSample& s, DType out_type, DType in_type) {
  const bool ok = DispatchImageType(in_type, [&](auto in_tag) {
    DispatchImageType(out_type, [&](auto out_tag) {
      using In = decltype(in_tag);
      using Out = decltype(out_tag);
      const In* in = static_cast<const In*>(s.in);
      Out* out = static_cast<Out*>(s.out);
      int c = 0;
      for (int64_t e = 0; e < s.count; ++e) {
        out[e] = StoreFromFloat<Out>(std::fmaf(LoadAsFloat(in[e]), s.mul[c], s.add[c]));
        if (++c == s.channels) c = 0;
      }
    });
  });
  if (!ok) throw InvalidArgument("AffineCpu: unsupported input dtype " + std::string(DTypeName(in_type)));
}

}  // namespace conveyor::ops
