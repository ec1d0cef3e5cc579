// The RLE decoder and the two painters against references computed differently: an RLE encoder
// written from the format's description, a column-major bitmap, and a crossing test per pixel
// centre for polygons.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "operators/readers/coco/coco_masks.h"
#include "tests/operators/readers/coco/coco_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using ops::coco::CheckRleSize;
using ops::coco::DecodeRleString;
using ops::coco::PaintPolygon;
using ops::coco::PaintRle;

TEST(CocoRle, StringDecodesToTheRunsEncoded) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint32_t> runs;
    const int n = static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) {
      // Small, large and decreasing runs, so the differences from two runs back take both signs.
      const uint32_t bound = (k % 7 == 3) ? 4000000000u : (k % 3 == 0 ? 100000u : 40u);
      runs.push_back(static_cast<uint32_t>(rng() % bound));
    }
    std::vector<uint32_t> got = {7};  // appends
    ASSERT_EQ(DecodeRleString(testing::EncodeRleString(runs), got), "");
    got.erase(got.begin());
    EXPECT_EQ(got, runs);
  }
}

TEST(CocoRle, KnownStrings) {
  std::vector<uint32_t> got;
  ASSERT_EQ(DecodeRleString("", got), "");
  EXPECT_TRUE(got.empty());
  ASSERT_EQ(DecodeRleString("0", got), "");  // one run of 0
  EXPECT_EQ(got, (std::vector<uint32_t>{0}));
  got.clear();
  // 5, 3, 2 as they are; the fourth run is 1 = 3 - 2 (-2: 0x1e, 'N', with the sign bit 0x10).
  ASSERT_EQ(DecodeRleString("532N", got), "");
  EXPECT_EQ(got, (std::vector<uint32_t>{5, 3, 2, 1}));
  got.clear();
  ASSERT_EQ(DecodeRleString("Q0", got), "");  // 0x21: 1 and more, then 0: 1
  EXPECT_EQ(got, (std::vector<uint32_t>{1}));
}

TEST(CocoRle, BadStringsAreRefused) {
  std::vector<uint32_t> got;
  EXPECT_THAT(DecodeRleString("12 3", got), HasSubstr("character 2 (' ') is not an RLE digit"));
  EXPECT_THAT(DecodeRleString("1P", got), HasSubstr("run 1 is cut short"));  // 'P' = 0x20: more follows
  EXPECT_THAT(DecodeRleString("PPPPPPPPPPPPPP0", got), HasSubstr("longer than 64 bits"));
  EXPECT_THAT(DecodeRleString("N", got), HasSubstr("run 0 decodes to -2"));
  EXPECT_THAT(DecodeRleString("111N", got), HasSubstr("run 3 decodes to -1"));
}

TEST(CocoRle, SizeCheckSumsTheRuns) {
  const std::vector<uint32_t> runs = {3, 4, 5};
  EXPECT_EQ(CheckRleSize(runs.data(), runs.size(), 3, 4), "");
  EXPECT_THAT(CheckRleSize(runs.data(), runs.size(), 4, 4), HasSubstr("cover 12 pixels, expected height * width = 16"));
}

TEST(CocoRle, PaintsRunsOfOnesColumnMajor) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 50; ++trial) {
    const int h = 1 + static_cast<int>(rng() % 30), w = 1 + static_cast<int>(rng() % 30);
    const std::vector<uint32_t> runs = testing::RandomRuns(rng, int64_t{h} * w);
    std::vector<int32_t> map(static_cast<size_t>(h * w), -1);
    PaintRle(runs.data(), runs.size(), h, w, 9, map.data());
    size_t pos = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
      for (uint32_t q = 0; q < runs[r]; ++q, ++pos) {
        const size_t x = pos / static_cast<size_t>(h), y = pos % static_cast<size_t>(h);
        EXPECT_EQ(map[y * static_cast<size_t>(w) + x], r % 2 ? 9 : -1) << "x " << x << " y " << y;
      }
    }
  }
}

TEST(CocoPolygon, PaintsThePixelsWhoseCentreIsInside) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> coord(-8, 48);
  for (int trial = 0; trial < 300; ++trial) {
    const int h = 1 + static_cast<int>(rng() % 40), w = 1 + static_cast<int>(rng() % 40);
    std::vector<double> poly;
    const int n = static_cast<int>(rng() % 9);  // 0..8 vertices: fewer than 3 paint nothing
    for (int v = 0; v < 2 * n; ++v) poly.push_back(trial % 4 == 0 ? std::round(coord(rng)) : coord(rng));
    std::vector<float> xy(poly.begin(), poly.end());
    std::vector<int32_t> map(static_cast<size_t>(h * w), 0);
    PaintPolygon(xy.data(), xy.size(), h, w, 5, map.data());
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const bool in = testing::PointInPolygon(poly, x + 0.5, y + 0.5);
        ASSERT_EQ(map[static_cast<size_t>(y * w + x)], in ? 5 : 0) << "trial " << trial << " x " << x << " y " << y;
      }
    }
  }
}

TEST(CocoPolygon, SquareCoversExactlyItsPixels) {
  // [2, 6) x [1, 4) in pixel edges: columns 2..5, rows 1..3.
  const std::vector<float> square = {2, 1, 6, 1, 6, 4, 2, 4};
  std::vector<int32_t> map(8 * 8, 0);
  PaintPolygon(square.data(), square.size(), 8, 8, 1, map.data());
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) EXPECT_EQ(map[static_cast<size_t>(y * 8 + x)], (x >= 2 && x < 6 && y >= 1 && y < 4) ? 1 : 0);
  }
  // Far outside: clipped, nothing written, no out-of-range write.
  const std::vector<float> far = {1e30f, -1e30f, 2e30f, 5, -1e30f, 1e30f};
  PaintPolygon(far.data(), far.size(), 8, 8, 3, map.data());
}

}  // namespace
}  // namespace conveyor
