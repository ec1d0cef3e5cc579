#include "operators/augment_policies/policy.h"

#include <algorithm>
#include <cmath>

namespace conveyor::ops::augment {
namespace {

double Lin(double a, double z, int bin, int bins) {
  return bins <= 1 ? a : a + (z - a) * static_cast<double>(bin) / static_cast<double>(bins - 1);
}

// torch's (arange(B) / ((B - 1) / k)).round() in float32, round half to even.
int PosterizeDrop(int bin, int bins, float k) {
  if (bins <= 1) return 0;
  return static_cast<int>(std::nearbyint(static_cast<float>(bin) / (static_cast<float>(bins - 1) / k)));
}

bool IsEnhance(AugOp op) {
  return op == AugOp::kBrightness || op == AugOp::kColor || op == AugOp::kContrast || op == AugOp::kSharpness;
}

bool IsGeometric(AugOp op) {
  return op == AugOp::kShearX || op == AugOp::kShearY || op == AugOp::kTranslateX || op == AugOp::kTranslateY ||
         op == AugOp::kRotate;
}

// DALI's magnitudes: np.linspace(lo, hi, B, dtype=float32), then the augmentation's mapping.
float DaliMagnitude(AugOp op, int bin, int bins, int64_t h, int64_t w) {
  const auto lin = [&](double a, double z) { return static_cast<float>(Lin(a, z, bin, bins)); };
  switch (op) {
    case AugOp::kShearX: case AugOp::kShearY: return lin(0, 0.3);
    case AugOp::kTranslateX: return lin(0, 1) * static_cast<float>(w);  // rel_offset * shape[1], float32
    case AugOp::kTranslateY: return lin(0, 1) * static_cast<float>(h);
    case AugOp::kRotate: return lin(0, 30);
    case AugOp::kBrightness: case AugOp::kColor: case AugOp::kContrast: case AugOp::kSharpness:
      return lin(0.1, 1.9);
    case AugOp::kPosterize:  // poster_mask_uint8: keeps round(m) bits, at least 1
      return static_cast<float>(std::clamp(static_cast<int>(std::nearbyint(lin(0, 4))), 1, 8));
    case AugOp::kSolarize: return lin(256, 0);
    default: return 0.f;
  }
}

// The value applied: torchvision's enhance factors are 1 + m and its translations int(m); DALI's
// magnitudes are applied as they are.
OpChoice Applied(AugOp op, Space space, float magnitude, bool negate) {
  OpChoice c{op, IsSigned(op, space) && negate ? -magnitude : magnitude};
  if (space == Space::kDali) return c;
  if (IsEnhance(op)) c.magnitude = 1.f + c.magnitude;
  if (op == AugOp::kTranslateX || op == AugOp::kTranslateY) c.magnitude = std::trunc(c.magnitude);
  return c;
}

}  // namespace

const char* AugOpName(AugOp op) {
  static constexpr const char* kNames[kNumAugOps] = {
      "identity",  "shear_x", "shear_y",   "translate_x", "translate_y",   "rotate",   "brightness", "color",
      "contrast", "sharpness", "posterize", "solarize",    "auto_contrast", "equalize", "invert"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumAugOps ? kNames[i] : "?";
}

bool IsSigned(AugOp op, Space space) {
  return IsGeometric(op) || (space != Space::kDali && IsEnhance(op));
}

float Magnitude(AugOp op, Space space, int bin, int bins, int64_t h, int64_t w) {
  if (space == Space::kDali) return DaliMagnitude(op, bin, bins, h, w);
  const bool wide = space == Space::kWide;
  switch (op) {
    case AugOp::kShearX: case AugOp::kShearY:
      return static_cast<float>(Lin(0, wide ? 0.99 : 0.3, bin, bins));
    case AugOp::kTranslateX: case AugOp::kTranslateY: {
      const double side = static_cast<double>(op == AugOp::kTranslateX ? w : h);
      return static_cast<float>(Lin(0, wide ? 32.0 : 150.0 / 331.0 * side, bin, bins));
    }
    case AugOp::kRotate:
      return static_cast<float>(Lin(0, wide ? 135.0 : 30.0, bin, bins));
    case AugOp::kBrightness: case AugOp::kColor: case AugOp::kContrast: case AugOp::kSharpness:
      return static_cast<float>(Lin(0, wide ? 0.99 : 0.9, bin, bins));
    case AugOp::kPosterize:
      return static_cast<float>(8 - PosterizeDrop(bin, bins, wide ? 6.f : 4.f));
    case AugOp::kSolarize:
      return static_cast<float>(255.0 * Lin(1, 0, bin, bins));
    default:
      return 0.f;
  }
}

SampleOps DrawRandAugment(Philox& rng, int n, int m, int bins, int64_t h, int64_t w) {
  SampleOps s;
  s.count = n;
  for (int k = 0; k < n; ++k) {
    const auto op = static_cast<AugOp>(UniformIndex(rng, kNumRandOps));
    const bool negate = (rng.NextU32() & 1u) != 0;
    s.ops[static_cast<size_t>(k)] = Applied(op, Space::kStandard, Magnitude(op, Space::kStandard, m, bins, h, w), negate);
  }
  return s;
}

SampleOps DrawTrivialAugmentWide(Philox& rng, int bins, int64_t h, int64_t w) {
  const auto op = static_cast<AugOp>(UniformIndex(rng, kNumRandOps));
  const int bin = static_cast<int>(UniformIndex(rng, static_cast<uint32_t>(bins)));
  const bool negate = (rng.NextU32() & 1u) != 0;
  SampleOps s;
  s.count = 1;
  s.ops[0] = Applied(op, Space::kWide, Magnitude(op, Space::kWide, bin, bins, h, w), negate);
  return s;
}

SampleOps DrawAutoAugment(Philox& rng, const AutoAugmentPolicy& policy, int64_t h, int64_t w) {
  SampleOps s;
  s.sub_policy = static_cast<int>(UniformIndex(rng, kAutoAugmentSubPolicies));
  const SubPolicy& sub = policy.sub_policies[static_cast<size_t>(s.sub_policy)];
  s.count = 2;
  for (size_t k = 0; k < 2; ++k) {
    const bool apply = rng.NextUniform() < sub[k].probability;
    const bool negate = (rng.NextU32() & 1u) != 0;
    if (!apply) continue;  // identity
    const float m = sub[k].bin < 0 ? 0.f : Magnitude(sub[k].op, policy.space, sub[k].bin, policy.bins, h, w);
    s.ops[k] = Applied(sub[k].op, policy.space, m, negate);
  }
  return s;
}

std::vector<std::string> AutoAugmentPolicyNames() {
  std::vector<std::string> names;
  for (const AutoAugmentPolicy& p : AutoAugmentPolicies()) names.emplace_back(p.name);
  return names;
}

const AutoAugmentPolicy* FindAutoAugmentPolicy(std::string_view name) {
  for (const AutoAugmentPolicy& p : AutoAugmentPolicies()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace conveyor::ops::augment
