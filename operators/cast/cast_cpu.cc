#include "operators/cast/cast.h"
#include "operators/cast/cast_dispatch.h"

namespace conveyor::ops {

void CastCpu(void* out, DType out_type, const void* in, DType in_type, int64_t n) {
  detail::DispatchCastType(in_type, [&](auto in_tag) {
    detail::DispatchCastType(out_type, [&](auto out_tag) {
      using In = decltype(in_tag);
      using Out = decltype(out_tag);
      const In* src = static_cast<const In*>(in);
      Out* dst = static_cast<Out*>(out);
      for (int64_t i = 0; i < n; ++i) dst[i] = detail::CastValue<Out>(src[i]);
    });
  });
}

}  // namespace conveyor::ops
