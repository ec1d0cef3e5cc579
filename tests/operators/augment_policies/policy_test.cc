// The selection logic alone: over 20 000 draws the chosen operations' frequencies match the policy
// (within 5 standard deviations), magnitudes stay within the documented ranges, and the draws are
// reproducible from the key. auto_augment: every policy's sub-policies drawn uniformly, each step
// applied with its table probability and with its table bin's magnitude, computed here again from the
// published ranges (torchvision's and DALI's) rather than through Magnitude().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

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
      if (IsSigned(c.op, Space::kStandard)) {
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

// The value a table step applies, unsigned, from the published ranges: torchvision's
// AutoAugment._AUGMENTATION_SPACE (10 bins) and DALI's auto_augment.py / augmentations.py (11 bins).
double ExpectedMagnitude(Space space, AugOp op, int bin, int64_t h, int64_t w) {
  const bool tv = space == Space::kStandard;
  const double t = tv ? bin / 9.0 : bin / 10.0;  // the bin's fraction of the range
  switch (op) {
    case AugOp::kShearX: case AugOp::kShearY: return 0.3 * t;
    case AugOp::kTranslateX: return tv ? std::trunc(150.0 / 331.0 * static_cast<double>(w) * t) : t * static_cast<double>(w);
    case AugOp::kTranslateY: return tv ? std::trunc(150.0 / 331.0 * static_cast<double>(h) * t) : t * static_cast<double>(h);
    case AugOp::kRotate: return 30 * t;
    case AugOp::kBrightness: case AugOp::kColor: case AugOp::kContrast: case AugOp::kSharpness:
      return tv ? 0.9 * t : 0.1 + 1.8 * t;  // torchvision: the m of 1 ± m; DALI: the factor
    case AugOp::kPosterize: return tv ? 8 - std::nearbyint(bin / (9.0 / 4.0)) : std::max(1.0, std::nearbyint(4 * t));
    case AugOp::kSolarize: return tv ? 255 * (1 - t) : 256 * (1 - t);
    default: return 0;
  }
}

bool IsGeometric(AugOp op) { return op >= AugOp::kShearX && op <= AugOp::kRotate; }
bool IsEnhance(AugOp op) { return op >= AugOp::kBrightness && op <= AugOp::kSharpness; }

class AutoAugmentTable : public ::testing::TestWithParam<std::string> {};

TEST_P(AutoAugmentTable, DrawsFollowTheTable) {
  const AutoAugmentPolicy* policy = FindAutoAugmentPolicy(GetParam());
  ASSERT_NE(policy, nullptr);
  const int64_t h = 100, w = 120;
  std::vector<int> drawn(kAutoAugmentSubPolicies);
  std::vector<std::array<int, 2>> applied(kAutoAugmentSubPolicies);
  std::map<std::pair<int, AugOp>, int> ops;
  int negative = 0, signed_ops = 0;
  for (int i = 0; i < kDraws; ++i) {
    Philox rng(5, 17, 4, static_cast<uint32_t>(i));
    const SampleOps s = DrawAutoAugment(rng, *policy, h, w);
    ASSERT_EQ(s.count, 2);
    ASSERT_GE(s.sub_policy, 0);
    ASSERT_LT(s.sub_policy, kAutoAugmentSubPolicies);
    ++drawn[static_cast<size_t>(s.sub_policy)];
    const SubPolicy& sub = policy->sub_policies[static_cast<size_t>(s.sub_policy)];
    for (size_t k = 0; k < 2; ++k) {
      const OpChoice& c = s.ops[k];
      ++ops[{static_cast<int>(k), c.op}];
      const std::string where = GetParam() + " sub-policy " + std::to_string(s.sub_policy) + " step " + std::to_string(k);
      if (c.op == AugOp::kIdentity) {
        ASSERT_EQ(c.magnitude, 0.f) << where;
        continue;
      }
      ++applied[static_cast<size_t>(s.sub_policy)][k];
      ASSERT_EQ(c.op, sub[k].op) << where;
      const double expected = sub[k].bin < 0 ? 0 : ExpectedMagnitude(policy->space, c.op, sub[k].bin, h, w);
      const bool negatable = IsGeometric(c.op) || (policy->space == Space::kStandard && IsEnhance(c.op));
      const bool factor_of_m = policy->space == Space::kStandard && IsEnhance(c.op);  // 1 ± m
      const double value = factor_of_m ? c.magnitude - 1.0 : c.magnitude;
      ASSERT_NEAR(negatable ? std::abs(value) : value, expected, 1e-4 * (1 + expected)) << where << " " << AugOpName(c.op);
      if (negatable && expected != 0) {
        ++signed_ops;
        negative += value < 0;
      }
    }
  }
  for (int j = 0; j < kAutoAugmentSubPolicies; ++j) {
    const auto& sub = policy->sub_policies[static_cast<size_t>(j)];
    const size_t sj = static_cast<size_t>(j);
    ExpectFrequency(drawn[sj], kDraws, 1.0 / kAutoAugmentSubPolicies, "sub-policy " + std::to_string(j));
    for (size_t k = 0; k < 2; ++k) {
      const std::string what = "sub-policy " + std::to_string(j) + " step " + std::to_string(k) + " applied";
      if (sub[k].probability == 0.f) {
        EXPECT_EQ(applied[sj][k], 0) << what;
      }
      if (sub[k].probability == 1.f) {
        EXPECT_EQ(applied[sj][k], drawn[sj]) << what;
      }
      ExpectFrequency(applied[sj][k], drawn[sj], sub[k].probability, what);
    }
  }
  // Each op's frequency in each step: Σ over sub-policies (1/25) p.
  for (int k = 0; k < 2; ++k) {
    std::map<AugOp, double> expected;
    double skipped = 1;
    for (const SubPolicy& sub : policy->sub_policies) {
      const PolicyStep& step = sub[static_cast<size_t>(k)];
      expected[step.op] += step.probability / kAutoAugmentSubPolicies;
      skipped -= step.probability / kAutoAugmentSubPolicies;
    }
    expected[AugOp::kIdentity] += skipped;
    for (int op = 0; op < kNumAugOps; ++op) {
      const auto a = static_cast<AugOp>(op);
      ExpectFrequency(ops[{k, a}], kDraws, expected[a], "step " + std::to_string(k) + " " + AugOpName(a));
    }
  }
  if (signed_ops > 0) ExpectFrequency(negative, signed_ops, 0.5, "negated");
}

INSTANTIATE_TEST_SUITE_P(Policies, AutoAugmentTable,
                         ::testing::Values("image_net", "cifar10", "svhn", "reduced_image_net", "reduced_cifar10"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(AutoAugmentPolicies, NamesSpacesAndBins) {
  EXPECT_EQ(AutoAugmentPolicyNames(),
            (std::vector<std::string>{"image_net", "cifar10", "svhn", "reduced_image_net", "reduced_cifar10"}));
  EXPECT_EQ(FindAutoAugmentPolicy("cifar100"), nullptr);
  for (const std::string name : {"image_net", "cifar10", "svhn"}) {
    EXPECT_EQ(FindAutoAugmentPolicy(name)->space, Space::kStandard) << name;
    EXPECT_EQ(FindAutoAugmentPolicy(name)->bins, 10) << name;
  }
  for (const std::string name : {"reduced_image_net", "reduced_cifar10"}) {
    EXPECT_EQ(FindAutoAugmentPolicy(name)->space, Space::kDali) << name;
    EXPECT_EQ(FindAutoAugmentPolicy(name)->bins, 11) << name;
  }
}

// DALI's reduced tables and torchvision's were transcribed from different files; they agree except
// where DALI drops a zero-probability step (its one-op sub-policies).
void ExpectSameTableBut(const std::string& dali, const std::string& tv, int differing, const SubPolicy& expected) {
  const auto& a = FindAutoAugmentPolicy(dali)->sub_policies;
  const auto& b = FindAutoAugmentPolicy(tv)->sub_policies;
  for (int j = 0; j < kAutoAugmentSubPolicies; ++j) {
    const SubPolicy& want = j == differing ? expected : b[static_cast<size_t>(j)];
    for (size_t k = 0; k < 2; ++k) {
      const PolicyStep& x = a[static_cast<size_t>(j)][k];
      EXPECT_EQ(x.op, want[k].op) << dali << " " << j << " " << k;
      EXPECT_EQ(x.probability, want[k].probability) << dali << " " << j << " " << k;
      EXPECT_EQ(x.bin, want[k].bin) << dali << " " << j << " " << k;
    }
  }
}

TEST(AutoAugmentPolicies, DaliTablesMatchTorchvisionsButForOneOpSubPolicies) {
  const PolicyStep none{AugOp::kIdentity, 0.f, -1};
  ExpectSameTableBut("reduced_image_net", "image_net", 12, {{{AugOp::kEqualize, 0.8f, -1}, none}});
  ExpectSameTableBut("reduced_cifar10", "cifar10", 14, {{{AugOp::kSolarize, 0.5f, 2}, none}});
  // torchvision's SVHN row 15 keeps (translate_y 0.0, 2), DALI's svhn drops it; here only torchvision's.
  EXPECT_EQ(FindAutoAugmentPolicy("svhn")->sub_policies[15][1].probability, 0.f);
}

TEST(AutoAugmentPolicies, DaliMagnitudesAtTheirBins) {
  // augmentations.py / auto_augment.py: posterize keeps max(1, round(linspace(0, 4, 11)[b])) bits,
  // solarize's threshold is linspace(256, 0, 11)[b], enhance factors linspace(0.1, 1.9, 11)[b],
  // translations linspace(0, 1, 11)[b] * side.
  const int bits[11] = {1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4};
  for (int b = 0; b < 11; ++b) EXPECT_EQ(Magnitude(AugOp::kPosterize, Space::kDali, b, 11, 8, 8), bits[b]) << b;
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kSolarize, Space::kDali, 5, 11, 8, 8), 128.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kSolarize, Space::kDali, 0, 11, 8, 8), 256.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kContrast, Space::kDali, 6, 11, 8, 8), 1.18f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kColor, Space::kDali, 0, 11, 8, 8), 0.1f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kTranslateX, Space::kDali, 9, 11, 50, 120), 108.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kTranslateY, Space::kDali, 3, 11, 50, 120), 15.f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kShearY, Space::kDali, 8, 11, 8, 8), 0.24f);
  EXPECT_FLOAT_EQ(Magnitude(AugOp::kRotate, Space::kDali, 4, 11, 8, 8), 12.f);
  EXPECT_FALSE(IsSigned(AugOp::kBrightness, Space::kDali));
  EXPECT_TRUE(IsSigned(AugOp::kBrightness, Space::kStandard));
  EXPECT_TRUE(IsSigned(AugOp::kTranslateY, Space::kDali));
  // torchvision's CIFAR10 translate_x bin 9 of 10 on a 32-wide image: int(150 / 331 * 32) = 14.
  EXPECT_FLOAT_EQ(std::trunc(Magnitude(AugOp::kTranslateX, Space::kStandard, 9, 10, 32, 32)), 14.f);
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
