// The selection logic alone: over 20 000 draws the chosen operations' frequencies match the policy
// (within 5 standard deviations), magnitudes stay within the documented ranges, and the draws are
// reproducible from the key.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "operators/augment_policies/policy.h"

namespace conveyor::ops::augment {
namespace {

constexpr int kDraws = 20000;

// |count - N p| <= 5 sqrt(N p (1 - p)) + 1.
void ExpectFrequency(double count, double n, double p, const std::string& what) {
  const double bound = 5 * std::sqrt(n * p * (1 - p)) + 1;
  EXPECT_LE(std::abs(count - n * p), bound) << what << ": " << count << " of " << n << ", expected p = " << p;
}

bool InRange(const OpChoice& c, Space space, int bins, int64_t h, int64_t w) {
  const float top = [&] {
    switch (c.op) {
      case AugOp::kTranslateX: return Magnitude(c.op, space, bins - 1, bins, h, w);
      case AugOp::kTranslateY: return Magnitude(c.op, space, bins - 1, bins, h, w);
      default: return Magnitude(c.op, space, bins - 1, bins, h, w);
    }
  }();
  const float m = c.magnitude;
  switch (c.op) {
    case AugOp::kShearX: case AugOp::kShearY: case AugOp::kRotate: case AugOp::kTranslateX: case AugOp::kTranslateY:
      return std::abs(m) <= top;
    case AugOp::kBrightness: case AugOp::kColor: case AugOp::kContrast: case AugOp::kSharpness:
      return m >= 1 - top && m <= 1 + top;
    case AugOp::kPosterize: return m >= (space == Space::kWide ? 2 : 4) && m <= 8 && m == std::floor(m);
    case AugOp::kSolarize: return m >= 0 && m <= 255;
    default: return m == 0;
  }
}

TEST(PolicyDraws, RandAugmentUniformOverFourteenOpsAndFixedMagnitude) {
  std::map<AugOp, int> counts;
  int negative = 0, signed_ops = 0;
  for (int i = 0; i < kDraws / 2; ++i) {
    Philox rng(7, 11, 3, static_cast<uint32_t>(i));
    const SampleOps s = DrawRandAugment(rng, 2, 9, 31, 224, 300);
    ASSERT_EQ(s.count, 2);
    for (int k = 0; k < 2; ++k) {
      const OpChoice& c = s.ops[static_cast<size_t>(k)];
      ++counts[c.op];
      ASSERT_TRUE(InRange(c, Space::kStandard, 31, 224, 300)) << AugOpName(c.op) << " " << c.magnitude;
      if (IsSigned(c.op)) {
        ++signed_ops;
        const float base = Magnitude(c.op, Space::kStandard, 9, 31, 224, 300);
        const bool enhance = c.op >= AugOp::kBrightness && c.op <= AugOp::kSharpness;
        const float applied = enhance ? c.magnitude - 1 : c.magnitude;
        const bool translate = c.op == AugOp::kTranslateX || c.op == AugOp::kTranslateY;
        EXPECT_NEAR(std::abs(applied), translate ? std::trunc(base) : base, 1e-6) << AugOpName(c.op);
        negative += applied < 0;
      }
    }
  }
  for (int op = 0; op < kNumRandOps; ++op) {
    ExpectFrequency(counts[static_cast<AugOp>(op)], kDraws, 1.0 / kNumRandOps, AugOpName(static_cast<AugOp>(op)));
  }
  EXPECT_EQ(counts[AugOp::kInvert], 0);
  ExpectFrequency(negative, signed_ops, 0.5, "negated");
}

TEST(PolicyDraws, RandAugmentMagnitudesAtM9) {
  // torchvision v2 at num_magnitude_bins 31, m 9: 0.3 * 9 / 30 etc.
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kShearX, Space::kStandard, 9, 31, 10, 10), 0.09f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kRotate, Space::kStandard, 9, 31, 10, 10), 9.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kBrightness, Space::kStandard, 9, 31, 10, 10), 0.27f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kTranslateX, Space::kStandard, 30, 31, 10, 331), 150.f);
  EXPECT_EQ(Magnitude(AugOp::kPosterize, Space::kStandard, 9, 31, 10, 10), 7.f);   // 8 - round(1.2)
  EXPECT_EQ(Magnitude(AugOp::kPosterize, Space::kStandard, 30, 31, 10, 10), 4.f);
  EXPECT_EQ(Magnitude(AugOp::kPosterize, Space::kWide, 30, 31, 10, 10), 2.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kSolarize, Space::kStandard, 0, 31, 10, 10), 255.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kSolarize, Space::kStandard, 30, 31, 10, 10), 0.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kRotate, Space::kWide, 30, 31, 10, 10), 135.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kTranslateY, Space::kWide, 30, 31, 1000, 10), 32.f);
}

TEST(PolicyDraws, TrivialAugmentUniformOpsAndBins) {
  std::map<AugOp, int> ops;
  std::map<float, int> rotate_magnitudes;
  int rotations = 0;
  for (int i = 0; i < kDraws; ++i) {
    Philox rng(99, 5, 1, static_cast<uint32_t>(i));
    const SampleOps s = DrawTrivialAugmentWide(rng, 31, 64, 48);
    ASSERT_EQ(s.count, 1);
    ++ops[s.ops[0].op];
    ASSERT_TRUE(InRange(s.ops[0], Space::kWide, 31, 64, 48)) << AugOpName(s.ops[0].op) << " " << s.ops[0].magnitude;
    if (s.ops[0].op == AugOp::kRotate) {
      ++rotations;
      ++rotate_magnitudes[std::abs(s.ops[0].magnitude)];
    }
  }
  for (int op = 0; op < kNumRandOps; ++op) {
    ExpectFrequency(ops[static_cast<AugOp>(op)], kDraws, 1.0 / kNumRandOps, AugOpName(static_cast<AugOp>(op)));
  }
  EXPECT_EQ(rotate_magnitudes.size(), 31u);  // every bin reached
  for (const auto& [m, count] : rotate_magnitudes) {
    ExpectFrequency(count, rotations, (m == 0 ? 1.0 : 1.0) / 31, "rotate bin " + std::to_string(m));
  }
}

TEST(PolicyDraws, AutoAugmentFollowsTheImageNetTable) {
  // Expected frequency of each op in step k: Σ over sub-policies (1/25) p.
  std::map<std::pair<int, AugOp>, double> expected;
  for (const auto& sub : ImageNetPolicy()) {
    for (int k = 0; k < 2; ++k) {
      expected[{k, sub[static_cast<size_t>(k)].op}] += sub[static_cast<size_t>(k)].probability / kImageNetSubPolicies;
    }
  }
  std::map<std::pair<int, AugOp>, int> counts;
  for (int i = 0; i < kDraws; ++i) {
    Philox rng(3, 8, 2, static_cast<uint32_t>(i));
    const SampleOps s = DrawAutoAugmentImageNet(rng, 100, 120);
    ASSERT_EQ(s.count, 2);
    for (int k = 0; k < 2; ++k) {
      const OpChoice& c = s.ops[static_cast<size_t>(k)];
      ++counts[{k, c.op}];
      if (c.op != AugOp::kIdentity) {
        ASSERT_TRUE(InRange(c, Space::kStandard, 10, 100, 120)) << AugOpName(c.op);
      }
    }
  }
  for (int k = 0; k < 2; ++k) {
    double applied = 0;
    for (int op = 1; op < kNumAugOps; ++op) {
      const double p = expected[{k, static_cast<AugOp>(op)}];
      applied += p;
      ExpectFrequency(counts[{k, static_cast<AugOp>(op)}], kDraws, p,
                      "step " + std::to_string(k) + " " + AugOpName(static_cast<AugOp>(op)));
    }
    ExpectFrequency(counts[{k, AugOp::kIdentity}], kDraws, 1 - applied, "step " + std::to_string(k) + " skipped");
  }
}

TEST(PolicyDraws, ReproducibleFromTheKey) {
  for (uint32_t i = 0; i < 100; ++i) {
    Philox a(1, 2, 3, i), b(1, 2, 3, i);
    const SampleOps x = DrawRandAugment(a, 3, 5, 31, 50, 60), y = DrawRandAugment(b, 3, 5, 31, 50, 60);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(x.ops[static_cast<size_t>(k)].op, y.ops[static_cast<size_t>(k)].op);
      EXPECT_EQ(x.ops[static_cast<size_t>(k)].magnitude, y.ops[static_cast<size_t>(k)].magnitude);
    }
  }
}

}  // namespace
}  // namespace conveyor::ops::augment
