// The engines / CUDA backend split (decode_balance.h), GPU-free: pixel shares on fresh random
// batches of mixed sizes, the rates' smoothing, the clamp, a fixed share.
#include "operators/decoders/decode_balance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

namespace conveyor::ops {
namespace {

std::vector<int64_t> RandomBatch(std::mt19937_64& rng, int n) {
  std::lognormal_distribution<double> side(6.0, 0.5);  // ~400 px, some thousands
  std::vector<int64_t> pixels;
  for (int i = 0; i < n; ++i) {
    pixels.push_back(static_cast<int64_t>(side(rng)) * static_cast<int64_t>(side(rng) * 0.75) + 1);
  }
  return pixels;
}

TEST(DecodeBalance, SplitGivesTheEnginesTheirShareOfPixelsToWithinOneImage) {
  std::mt19937_64 rng(std::random_device{}());
  for (double share : {0.0, 0.05, 0.3, 0.5, 0.77, 0.95, 1.0}) {
    const DecodeBalance balance(share);
    for (int round = 0; round < 20; ++round) {
      const std::vector<int64_t> pixels = RandomBatch(rng, 1 + static_cast<int>(rng() % 300));
      std::vector<uint8_t> to_engines;
      balance.Split(pixels, to_engines);
      ASSERT_EQ(to_engines.size(), pixels.size());
      double total = 0, engines = 0;
      for (size_t k = 0; k < pixels.size(); ++k) {
        total += static_cast<double>(pixels[k]);
        if (to_engines[k]) engines += static_cast<double>(pixels[k]);
      }
      const double largest = static_cast<double>(*std::max_element(pixels.begin(), pixels.end()));
      EXPECT_NEAR(engines, share * total, largest) << "share " << share;
    }
  }
}

TEST(DecodeBalance, InterleavesSoBothPathsGetSmallAndLargeImages) {
  DecodeBalance balance(0.5);
  std::vector<int64_t> pixels;
  for (int i = 0; i < 100; ++i) pixels.push_back(i < 50 ? 100 : 10000);  // small first, then large
  std::vector<uint8_t> to_engines;
  balance.Split(pixels, to_engines);
  int small = 0, large = 0;
  for (int i = 0; i < 100; ++i) (i < 50 ? small : large) += to_engines[static_cast<size_t>(i)];
  EXPECT_NEAR(small, 25, 1);
  EXPECT_NEAR(large, 25, 1);
}

TEST(DecodeBalance, ShareFollowsTheSmoothedRatesInsideTheClamp) {
  DecodeBalance balance;
  EXPECT_DOUBLE_EQ(balance.share(), DecodeBalance::kInitialShare);
  balance.AddEngines(3e6, 1.0);
  EXPECT_DOUBLE_EQ(balance.share(), DecodeBalance::kInitialShare);  // one rate is not a balance
  balance.AddCuda(1e6, 1.0);
  EXPECT_DOUBLE_EQ(balance.share(), 0.75);
  balance.AddCuda(3e6, 1.0);  // EMA: 0.7 * 1e6 + 0.3 * 3e6 = 1.6e6
  EXPECT_NEAR(balance.cuda_rate(), 1.6e6, 1e-6);
  EXPECT_NEAR(balance.share(), 3.0 / 4.6, 1e-12);
  balance.AddEngines(0, 1.0);  // empty measurements are ignored
  balance.AddCuda(5e6, 0.0);
  EXPECT_NEAR(balance.share(), 3.0 / 4.6, 1e-12);
  DecodeBalance lopsided;
  lopsided.AddEngines(1e9, 1.0);
  lopsided.AddCuda(1.0, 1.0);
  EXPECT_DOUBLE_EQ(lopsided.share(), 1 - DecodeBalance::kMinShare);
  lopsided.AddCuda(1e15, 1e-3);
  lopsided.AddCuda(1e15, 1e-3);
  lopsided.AddCuda(1e15, 1e-3);
  EXPECT_DOUBLE_EQ(lopsided.share(), DecodeBalance::kMinShare);
}

// With loads routed to one path only, the candidates are split so both paths' whole loads follow
// the share: engines (fixed + taken) / all = share, to within one image, inside the clamp.
TEST(DecodeBalance, FixedLoadsShiftTheCandidatesSplit) {
  std::mt19937_64 rng(std::random_device{}());
  for (int round = 0; round < 50; ++round) {
    DecodeBalance balance;
    balance.AddEngines(1e6 * (1 + static_cast<double>(rng() % 9)), 1.0);
    balance.AddCuda(1e6 * (1 + static_cast<double>(rng() % 9)), 1.0);
    const std::vector<int64_t> pixels = RandomBatch(rng, 50 + static_cast<int>(rng() % 200));
    double candidates = 0;
    for (int64_t p : pixels) candidates += static_cast<double>(p);
    const double engines_fixed = candidates * static_cast<double>(rng() % 100) / 200;
    const double cuda_fixed = candidates * static_cast<double>(rng() % 100) / 200;
    std::vector<uint8_t> to_engines;
    balance.Split(pixels, to_engines, engines_fixed, cuda_fixed);
    double taken = 0;
    for (size_t k = 0; k < pixels.size(); ++k) taken += to_engines[k] ? static_cast<double>(pixels[k]) : 0;
    const double want = std::clamp(balance.share() * (engines_fixed + cuda_fixed + candidates) - engines_fixed,
                                   DecodeBalance::kMinShare * candidates, (1 - DecodeBalance::kMinShare) * candidates);
    const double largest = static_cast<double>(*std::max_element(pixels.begin(), pixels.end()));
    EXPECT_NEAR(taken, want, largest) << "share " << balance.share() << " fixed " << engines_fixed << "/" << cuda_fixed;
  }
}

TEST(DecodeBalance, AFixedShareNeverMoves) {
  DecodeBalance balance(0.4);
  balance.AddEngines(9e6, 1.0);
  balance.AddCuda(1e6, 1.0);
  EXPECT_DOUBLE_EQ(balance.share(), 0.4);
  EXPECT_GT(balance.engines_rate(), 0);  // still measured, for the counters
}

// An engines' call's order: (height, width) descending, a permutation of the images given, images of
// one size in their given order; on fresh random batches with many repeated sizes.
TEST(SortLargestFirst, OrdersBySizeLargestFirstKeepingTiesInOrder) {
  std::mt19937_64 rng(std::random_device{}());
  for (int round = 0; round < 50; ++round) {
    const int n = static_cast<int>(rng() % 300);
    std::vector<std::pair<int64_t, int64_t>> dims(static_cast<size_t>(n) + 7);
    for (auto& d : dims) d = {1 + static_cast<int64_t>(rng() % 6) * 100, 1 + static_cast<int64_t>(rng() % 4) * 50};
    std::vector<int> images;  // a subset of the sample indices, in a random order
    for (int i = 0; i < n + 7; ++i) {
      if (rng() % 4 != 0) images.push_back(i);
    }
    std::shuffle(images.begin(), images.end(), rng);
    std::vector<int> sorted = images;
    SortLargestFirst(sorted, [&](int i) { return dims[static_cast<size_t>(i)]; });
    std::vector<int> a = images, b = sorted;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    ASSERT_EQ(a, b) << "not a permutation";
    for (size_t k = 1; k < sorted.size(); ++k) {
      const auto& prev = dims[static_cast<size_t>(sorted[k - 1])];
      const auto& cur = dims[static_cast<size_t>(sorted[k])];
      ASSERT_GE(prev, cur) << "position " << k;
      if (prev == cur) {  // ties keep the given order
        const auto pos = [&](int i) { return std::find(images.begin(), images.end(), i) - images.begin(); };
        ASSERT_LT(pos(sorted[k - 1]), pos(sorted[k])) << "position " << k;
      }
    }
  }
}

}  // namespace
}  // namespace conveyor::ops
