// Random crop windows: inside the image, area and aspect within their ranges, deterministic per
// key, different between samples, the centred fallback, and argument errors.
#include "operators/common/crop_window.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "core/error.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;

TEST(CropWindow, InsideImageWithAreaAndAspectInRange) {
  const RandomCropParams p = MakeRandomCropParams({0.08, 1.0}, {3.0 / 4, 4.0 / 3}, 10, "test");
  std::mt19937 seeds(std::random_device{}());
  int fallbacks = 0;
  std::set<std::pair<int64_t, int64_t>> origins;
  for (uint32_t s = 0; s < 2000; ++s) {
    const int64_t H = 1 + seeds() % 700, W = 1 + seeds() % 900;
    Philox rng(seeds(), 7, s, s);
    const CropWindow c = DrawRandomCropWindow(rng, H, W, p);
    ASSERT_GE(c.h, 1);
    ASSERT_GE(c.w, 1);
    ASSERT_GE(c.y, 0);
    ASSERT_GE(c.x, 0);
    ASSERT_LE(c.y + c.h, H);
    ASSERT_LE(c.x + c.w, W);
    origins.insert({c.y, c.x});
    const double area = static_cast<double>(c.h * c.w) / static_cast<double>(H * W);
    const double aspect = static_cast<double>(c.w) / static_cast<double>(c.h);
    // Rounding w and h to integers moves area and aspect by up to about one pixel per side.
    const double slack_area = (static_cast<double>(c.h + c.w) + 1) / static_cast<double>(H * W);
    const bool in_range = area >= 0.08 - slack_area && area <= 1.0 + slack_area &&
                          aspect >= 0.75 * (1 - 1.0 / c.w) * (1 - 1.0 / c.h) - 1e-9 &&
                          aspect <= 4.0 / 3 * (1 + 1.0 / c.w) * (1 + 1.0 / c.h) + 1e-9;
    if (!in_range || (c.h == H && c.w == W)) ++fallbacks;
  }
  EXPECT_LT(fallbacks, 400) << "most draws of typical images should succeed";
  EXPECT_GT(origins.size(), 500u) << "windows should move around";
}

TEST(CropWindow, SameKeySameWindowOtherSampleOtherWindow) {
  const RandomCropParams p;
  Philox a(42, 1, 3, 5), b(42, 1, 3, 5), c(42, 1, 3, 6);
  const CropWindow wa = DrawRandomCropWindow(a, 375, 500, p);
  EXPECT_EQ(wa, DrawRandomCropWindow(b, 375, 500, p));
  EXPECT_FALSE(wa == DrawRandomCropWindow(c, 375, 500, p));
}

TEST(CropWindow, FallbackIsCentredWithAspectClamped) {
  // A 10x1000 strip: no window of aspect <= 4/3 with at least 90% of the area fits.
  const RandomCropParams p = MakeRandomCropParams({0.9, 1.0}, {3.0 / 4, 4.0 / 3}, 10, "test");
  Philox rng(1, 2, 3, 4);
  const CropWindow c = DrawRandomCropWindow(rng, 10, 1000, p);
  EXPECT_EQ(c.h, 10);
  EXPECT_EQ(c.w, 13);  // round(10 * 4/3)
  EXPECT_EQ(c.x, (1000 - 13) / 2);
  EXPECT_EQ(c.y, 0);
  Philox rng2(1, 2, 3, 4);
  const CropWindow tall = DrawRandomCropWindow(rng2, 1000, 10, p);
  EXPECT_EQ(tall.w, 10);
  EXPECT_EQ(tall.h, 13);  // round(10 / 0.75)
  EXPECT_EQ(tall.y, (1000 - 13) / 2);
}

TEST(CropWindow, EmptyImageGivesEmptyWindow) {
  Philox rng(1, 2, 3, 4);
  EXPECT_EQ(DrawRandomCropWindow(rng, 0, 5, RandomCropParams{}), CropWindow{});
}

TEST(CropWindow, ArgumentErrors) {
  EXPECT_THAT([] { MakeRandomCropParams({0.5, 0.2}, {0.75, 1.33}, 10, "op \"r\""); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("op \"r\": random_area must be [lo, hi] with 0 < lo <= hi <= 1, got [0.5, 0.2]")));
  EXPECT_THAT([] { MakeRandomCropParams({0.1, 1}, {0, 1.33}, 10, "w"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("random_aspect_ratio must be [lo, hi] with 0 < lo")));
  EXPECT_THAT([] { MakeRandomCropParams({0.1, 1}, {0.75}, 10, "w"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("got [0.75]")));
  EXPECT_THAT([] { MakeRandomCropParams({0.1, 1}, {0.75, 1.33}, 0, "w"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("num_attempts must be at least 1, got 0")));
}

}  // namespace
}  // namespace conveyor::ops
