// Host float16/bfloat16 conversions: round trips, rounding to nearest even, specials. The values
// are checked against double arithmetic (the exact value of a half is m * 2^e), not a table.
#include "core/tensor/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace conveyor {
namespace {

// The exact value of a binary16 bit pattern from its fields, in double.
double HalfValue(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1F;
  const int man = h & 0x3FF;
  if (exp == 0) return sign * std::ldexp(man, -24);
  if (exp == 31) return man ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  return sign * std::ldexp(1024 + man, exp - 25);
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfBitsToFloat(static_cast<uint16_t>(h));
    const double want = HalfValue(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(std::isnan(HalfBitsToFloat(FloatToHalfBits(f)))) << h;
      continue;
    }
    EXPECT_EQ(static_cast<double>(f), want) << h;
    EXPECT_EQ(FloatToHalfBits(f), h) << h;
  }
}

TEST(Half, RandomFloatsRoundToNearestEven) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> mag(-30.f, 15.f);  // below 2^15: no overflow to inf
  for (int i = 0; i < 200000; ++i) {
    const float f = std::ldexp(1.0f + std::uniform_real_distribution<float>(0, 1)(rng), static_cast<int>(mag(rng))) *
                    (i % 2 ? -1.f : 1.f);
    const uint16_t h = FloatToHalfBits(f);
    const double got = HalfValue(h);
    // No other half is closer; on a tie the even mantissa wins.
    const uint16_t up = static_cast<uint16_t>(h + 1), down = static_cast<uint16_t>(h - 1);
    const double err = std::abs(got - f);
    for (uint16_t n : {up, down}) {
      if (((n ^ h) & 0x8000) || ((n >> 10) & 0x1F) == 31) continue;
      const double other = std::abs(HalfValue(n) - f);
      ASSERT_TRUE(err < other || (err == other && (h & 1) == 0)) << f << " -> " << got << " but " << HalfValue(n);
    }
  }
}

TEST(Half, SpecialsAndOverflow) {
  EXPECT_EQ(FloatToHalfBits(65504.f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65519.f), 0x7BFF);
  EXPECT_EQ(FloatToHalfBits(65520.f), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(-1e9f), 0xFC00);
  EXPECT_EQ(FloatToHalfBits(INFINITY), 0x7C00);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.f, -25)), 0x0000);      // tie between 0 and the first subnormal
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.f, -14)), 0x0400);      // smallest normal
  EXPECT_EQ(FloatToHalfBits(-0.f), 0x8000);
}

TEST(BFloat16, RoundTripAndRounding) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = BFloat16BitsToFloat(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToBFloat16Bits(f), b) << b;
  }
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + std::ldexp(1.f, -8)), 0x3F80);  // tie: stays even
  EXPECT_EQ(FloatToBFloat16Bits(1.0f + std::ldexp(3.f, -8)), 0x3F82);  // tie: rounds up to even
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace conveyor
