#include <string>

#include "core/error.h"
#include "operators/geometry/warp.h"
#include "operators/geometry/warp_pixel.h"

namespace conveyor::ops {

void WarpCpu(const WarpSample& s, resample::Filter filter, DType in, DType out) {
  const bool ok = warp::DispatchWarp(in, out, filter, [&](auto in_tag, auto out_tag, auto filter_tag) {
    using In = decltype(in_tag);
    using Out = decltype(out_tag);
    for (int y = 0; y < s.out_h; ++y) {
      for (int x = 0; x < s.out_w; ++x) warp::WarpPixel<In, Out, decltype(filter_tag)::value>(s, x, y);
    }
  });
  if (!ok) {
    throw InvalidArgument("WarpCpu: unsupported dtypes " + std::string(DTypeName(in)) + " -> " +
                          std::string(DTypeName(out)));
  }
}

}  // namespace conveyor::ops
