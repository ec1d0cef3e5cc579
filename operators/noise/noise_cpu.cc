#include "core/error.h"
#include "operators/noise/noise.h"
#include "operators/noise/noise_unit.h"

namespace conveyor::ops {

void NoiseCpu(const NoiseSample& s, const NoiseKey& key, DType type) {
  const bool ok = DispatchImageType(type, [&](auto tag) {
    for (int64_t u = 0; u < s.units; ++u) NoiseUnit<decltype(tag)>(s, key, u);
  });
  if (!ok) throw InvalidArgument("NoiseCpu: unsupported dtype " + std::string(DTypeName(type)));
}

}  // namespace conveyor::ops
