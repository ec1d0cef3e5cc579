#include "operators/augment_policies/policy.h"

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

OpChoice Signed(AugOp op, float magnitude, bool negate) {
  return {op, IsSigned(op) && negate ? -magnitude : magnitude};
}

}  // namespace

const char* AugOpName(AugOp op) {
  static constexpr const char* kNames[kNumAugOps] = {
      "identity",  "shear_x", "shear_y",   "translate_x", "translate_y",   "rotate",   "brightness", "color",
      "contrast", "sharpness", "posterize", "solarize",    "auto_contrast", "equalize", "invert"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumAugOps ? kNames[i] : "?";
}

bool IsSigned(AugOp op) {
  switch (op) {
    case AugOp::kShearX: case AugOp::kShearY: case AugOp::kTranslateX: case AugOp::kTranslateY:
    case AugOp::kRotate: case AugOp::kBrightness: case AugOp::kColor: case AugOp::kContrast:
    case AugOp::kSharpness:
      return true;
    default:
      return false;
  }
}

float Magnitude(AugOp op, Space space, int bin, int bins, int64_t h, int64_t w) {
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

// Enhance ops are applied as factors 1 + m (after the sign): torchvision's and DALI's mapping.
static OpChoice Finish(OpChoice c) {
  switch (c.op) {
    case AugOp::kBrightness: case AugOp::kColor: case AugOp::kContrast: case AugOp::kSharpness:
      c.magnitude = 1.f + c.magnitude;
      break;
    case AugOp::kTranslateX: case AugOp::kTranslateY:
      c.magnitude = std::trunc(c.magnitude);  // torchvision: translate=[int(magnitude), 0]
      break;
    default:
      break;
  }
  return c;
}

SampleOps DrawRandAugment(Philox& rng, int n, int m, int bins, int64_t h, int64_t w) {
  SampleOps s;
  s.count = n;
  for (int k = 0; k < n; ++k) {
    const auto op = static_cast<AugOp>(UniformIndex(rng, kNumRandOps));
    const bool negate = (rng.NextU32() & 1u) != 0;
    s.ops[static_cast<size_t>(k)] = Finish(Signed(op, Magnitude(op, Space::kStandard, m, bins, h, w), negate));
  }
  return s;
}

SampleOps DrawTrivialAugmentWide(Philox& rng, int bins, int64_t h, int64_t w) {
  const auto op = static_cast<AugOp>(UniformIndex(rng, kNumRandOps));
  const int bin = static_cast<int>(UniformIndex(rng, static_cast<uint32_t>(bins)));
  const bool negate = (rng.NextU32() & 1u) != 0;
  SampleOps s;
  s.count = 1;
  s.ops[0] = Finish(Signed(op, Magnitude(op, Space::kWide, bin, bins, h, w), negate));
  return s;
}

SampleOps DrawAutoAugmentImageNet(Philox& rng, int64_t h, int64_t w) {
  const auto& sub = ImageNetPolicy()[UniformIndex(rng, kImageNetSubPolicies)];
  SampleOps s;
  s.count = 2;
  for (size_t k = 0; k < 2; ++k) {
    const bool apply = rng.NextUniform() < sub[k].probability;
    const bool negate = (rng.NextU32() & 1u) != 0;
    if (!apply) continue;  // identity
    const float m = sub[k].bin < 0 ? 0.f : Magnitude(sub[k].op, Space::kStandard, sub[k].bin, 10, h, w);
    s.ops[k] = Finish(Signed(sub[k].op, m, negate));
  }
  return s;
}

const std::array<std::array<PolicyStep, 2>, kImageNetSubPolicies>& ImageNetPolicy() {
  using A = AugOp;
  static const std::array<std::array<PolicyStep, 2>, kImageNetSubPolicies> kPolicy = {{
      {{{A::kPosterize, 0.4f, 8}, {A::kRotate, 0.6f, 9}}},
      {{{A::kSolarize, 0.6f, 5}, {A::kAutoContrast, 0.6f, -1}}},
      {{{A::kEqualize, 0.8f, -1}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kPosterize, 0.6f, 7}, {A::kPosterize, 0.6f, 6}}},
      {{{A::kEqualize, 0.4f, -1}, {A::kSolarize, 0.2f, 4}}},
      {{{A::kEqualize, 0.4f, -1}, {A::kRotate, 0.8f, 8}}},
      {{{A::kSolarize, 0.6f, 3}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kPosterize, 0.8f, 5}, {A::kEqualize, 1.0f, -1}}},
      {{{A::kRotate, 0.2f, 3}, {A::kSolarize, 0.6f, 8}}},
      {{{A::kEqualize, 0.6f, -1}, {A::kPosterize, 0.4f, 6}}},
      {{{A::kRotate, 0.8f, 8}, {A::kColor, 0.4f, 0}}},
      {{{A::kRotate, 0.4f, 9}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kEqualize, 0.0f, -1}, {A::kEqualize, 0.8f, -1}}},
      {{{A::kInvert, 0.6f, -1}, {A::kEqualize, 1.0f, -1}}},
      {{{A::kColor, 0.6f, 4}, {A::kContrast, 1.0f, 8}}},
      {{{A::kRotate, 0.8f, 8}, {A::kColor, 1.0f, 2}}},
      {{{A::kColor, 0.8f, 8}, {A::kSolarize, 0.8f, 7}}},
      {{{A::kSharpness, 0.4f, 7}, {A::kInvert, 0.6f, -1}}},
      {{{A::kShearX, 0.6f, 5}, {A::kEqualize, 1.0f, -1}}},
      {{{A::kColor, 0.4f, 0}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kEqualize, 0.4f, -1}, {A::kSolarize, 0.2f, 4}}},
      {{{A::kSolarize, 0.6f, 5}, {A::kAutoContrast, 0.6f, -1}}},
      {{{A::kInvert, 0.6f, -1}, {A::kEqualize, 1.0f, -1}}},
      {{{A::kColor, 0.6f, 4}, {A::kContrast, 1.0f, 8}}},
      {{{A::kEqualize, 0.8f, -1}, {A::kEqualize, 0.6f, -1}}},
  }};
  return kPolicy;
}

}  // namespace conveyor::ops::augment
