// The selection half of auto_augment, rand_augment and trivial_augment_wide: which operations a
// sample gets and with which magnitudes, drawn from the sample's counter-based RNG
// (ws.Rng(sample)). Host only, no images: the operators draw here in Setup for the CPU and the GPU
// backend alike, so both apply the same operations; the tests draw here directly.
//
// Operation table (torchvision v2 / DALI auto_aug; magnitudes of bin b of B = num_magnitude_bins,
// lin(a, z) = a + (z - a) * b / (B - 1); signed ops are negated with probability 1/2):
//
// | op           | rand_augment (B bins)     | trivial_augment_wide      | signed | applied as            |
// |--------------|---------------------------|---------------------------|--------|-----------------------|
// | identity     | -                         | -                         |        | copy                  |
// | shear_x/y    | lin(0, 0.3)               | lin(0, 0.99)              | yes    | warp, corner origin   |
// | translate_x/y| lin(0, 150/331 * W or H)  | lin(0, 32) pixels         | yes    | warp, trunc to int px |
// | rotate       | lin(0, 30) degrees        | lin(0, 135) degrees       | yes    | rotate, keep size     |
// | brightness   | 1 + lin(0, 0.9)           | 1 + lin(0, 0.99)          | yes    | brightness            |
// | color        | 1 + lin(0, 0.9)           | 1 + lin(0, 0.99)          | yes    | saturation (hsv)      |
// | contrast     | 1 + lin(0, 0.9)           | 1 + lin(0, 0.99)          | yes    | contrast, luma mean   |
// | sharpness    | 1 + lin(0, 0.9)           | 1 + lin(0, 0.99)          | yes    | sharpness             |
// | posterize    | 8 - round(b / ((B-1)/4))  | 8 - round(b / ((B-1)/6))  | no     | posterize (bits)      |
// | solarize     | 255 * lin(1, 0)           | 255 * lin(1, 0)           | no     | solarize (threshold)  |
// | auto_contrast| -                         | -                         |        | auto_contrast         |
// | equalize     | -                         | -                         |        | equalize              |
// | invert       | (auto_augment only)       |                           |        | solarize threshold 0  |
//
// auto_augment uses rand_augment's ranges with 10 bins and the ImageNet table in policy.cc.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/op/philox.h"

namespace conveyor::ops::augment {

enum class AugOp : int32_t {
  kIdentity = 0,
  kShearX,
  kShearY,
  kTranslateX,
  kTranslateY,
  kRotate,
  kBrightness,
  kColor,
  kContrast,
  kSharpness,
  kPosterize,
  kSolarize,
  kAutoContrast,
  kEqualize,
  kInvert,  // auto_augment only
};
inline constexpr int kNumRandOps = 14;  // identity .. equalize: rand_augment's and trivial's set
inline constexpr int kNumAugOps = 15;
inline constexpr int kMaxPolicyOps = 8;  // rand_augment's n at most

const char* AugOpName(AugOp op);

// Magnitude of `op` as applied: shear factor, translation in pixels, degrees, enhance factor
// (1 + m), posterize bits, solarize threshold (uint8 units); 0 for the others.
struct OpChoice {
  AugOp op = AugOp::kIdentity;
  float magnitude = 0;
};

struct SampleOps {
  int count = 0;
  std::array<OpChoice, kMaxPolicyOps> ops{};
};

enum class Space : int32_t { kStandard = 0, kWide = 1 };  // rand_augment / auto_augment vs trivial wide

// The magnitude of bin `bin` of `bins` for `op` on an h x w image (signs not applied).
float Magnitude(AugOp op, Space space, int bin, int bins, int64_t h, int64_t w);
bool IsSigned(AugOp op);

// Draws per sample (Philox order): rand_augment: per op: op index, sign bit. trivial: op index, bin,
// sign bit. auto_augment: sub-policy index, then per op: uniform, sign bit.
SampleOps DrawRandAugment(Philox& rng, int n, int m, int bins, int64_t h, int64_t w);
SampleOps DrawTrivialAugmentWide(Philox& rng, int bins, int64_t h, int64_t w);
SampleOps DrawAutoAugmentImageNet(Philox& rng, int64_t h, int64_t w);

// A uniform index in [0, k) from one 32-bit draw (multiply-shift).
inline uint32_t UniformIndex(Philox& rng, uint32_t k) {
  return static_cast<uint32_t>((static_cast<uint64_t>(rng.NextU32()) * k) >> 32);
}

// The ImageNet policy (torchvision's AutoAugmentPolicy.IMAGENET, DALI's auto_augment_image_net):
// 25 sub-policies of two (op, probability, magnitude bin of 10) steps; bin -1 = no magnitude.
struct PolicyStep {
  AugOp op;
  float probability;
  int bin;
};
inline constexpr int kImageNetSubPolicies = 25;
const std::array<std::array<PolicyStep, 2>, kImageNetSubPolicies>& ImageNetPolicy();

}  // namespace conveyor::ops::augment
