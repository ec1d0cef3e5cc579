// image_common/convert.h on the host: the rounding rules the CPU references rely on.
#include "operators/image_common/convert.h"

#include <gtest/gtest.h>

#include <cmath>

namespace conveyor::ops {
namespace {

TEST(Convert, Uint8ClampsAndRoundsToNearestEven) {
  EXPECT_EQ(StoreFromFloat<uint8_t>(-3.f), 0);
  EXPECT_EQ(StoreFromFloat<uint8_t>(300.f), 255);
  EXPECT_EQ(StoreFromFloat<uint8_t>(2.5f), 2);
  EXPECT_EQ(StoreFromFloat<uint8_t>(3.5f), 4);
  EXPECT_EQ(StoreFromFloat<uint8_t>(254.6f), 255);
  EXPECT_EQ(StoreFromFloat<uint8_t>(std::nanf("")), 0);
}

TEST(Convert, HalfTypesRoundToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties to even → 1.
  EXPECT_EQ(StoreFromFloat<Float16Bits>(1.f + 0x1p-11f).bits, 0x3C00);
  EXPECT_EQ(StoreFromFloat<Float16Bits>(1.f + 3 * 0x1p-11f).bits, 0x3C02);
  EXPECT_EQ(StoreFromFloat<BFloat16Bits>(1.f + 0x1p-8f).bits, 0x3F80);
  EXPECT_EQ(LoadAsFloat(Float16Bits{0xC000}), -2.f);
  EXPECT_EQ(LoadAsFloat(BFloat16Bits{0x4040}), 3.f);
  EXPECT_EQ(LoadAsFloat(uint8_t{200}), 200.f);
}

}  // namespace
}  // namespace conveyor::ops
