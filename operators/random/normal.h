// The normal draw shared by random.normal's CPU loop and kernel (host and device). Element j of a
// sample uses uniforms 2j and 2j+1 of its Philox sequence (Box–Muller, cosine branch):
//   u1 = (top 24 bits + 1) * 2^-24 in (0, 1],  u2 = top 24 bits * 2^-24 in [0, 1)
//   z  = sqrt(-2 ln u1) * cos(2π u2),           out = fmaf(z, stddev, mean)
// The uniforms and sqrt are bit-identical on host and device; logf and cosf are not (glibc vs
// CUDA's libdevice, each within 2 ulp), so CPU and GPU agree to |Δ| ≤ 1e-5 * stddev (|z| < 5.8).
#pragma once

#include <cmath>

#include "core/op/philox.h"

namespace conveyor::ops {

CONVEYOR_HOST_DEVICE inline float StandardNormal(Philox& rng) {
  const float u1 = static_cast<float>((rng.NextU32() >> 8) + 1u) * 0x1p-24f;
  const float u2 = static_cast<float>(rng.NextU32() >> 8) * 0x1p-24f;
  return sqrtf(-2.f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}

}  // namespace conveyor::ops
