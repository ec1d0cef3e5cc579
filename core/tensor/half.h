// Host-side float16 (IEEE binary16) and bfloat16 conversions, bit-exact with the GPU's
// round-to-nearest-even conversions (__float2half_rn, __float2bfloat16_rn), so CPU reference
// implementations produce the same bits as kernels. Plain C++: no CUDA headers.
#pragma once

#include <cstdint>
#include <cstring>

namespace conveyor {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even; overflow gives ±inf, NaN stays NaN (quiet), subnormals are kept.
inline uint16_t FloatToHalfBits(float f) {
  const uint32_t x = FloatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u);  // NaN
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u); // rounds to >= 65520: inf
  if (abs < 0x38800000u) {                                              // |f| < 2^-14: subnormal or zero
    // Scale into the subnormal grid (units of 2^-24) with float arithmetic, which rounds to
    // nearest even exactly as the target format would.
    const float scaled = BitsFloat(abs) * 16777216.0f;  // 2^24, exact
    const float rounded = scaled + 8388608.0f - 8388608.0f;  // 2^23 trick: RNE to an integer
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float
    const float v = static_cast<float>(man) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsFloat(sign | 0x7F800000u | (man << 13));
  return BitsFloat(sign | ((exp + 112u) << 23) | (man << 13));
}

inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

inline float BFloat16BitsToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }

}  // namespace conveyor
