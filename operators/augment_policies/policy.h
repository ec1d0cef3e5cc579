// The selection half of auto_augment, rand_augment and trivial_augment_wide: which operations a
// sample gets and with which magnitudes, drawn from the sample's counter-based RNG
// (ws.Rng(sample)). Host only, no images: the operators draw here in Setup for the CPU and the GPU
// backend alike, so both apply the same operations; the tests draw here directly.
//
// Magnitude spaces (bin b of B = num_magnitude_bins, lin(a, z) = a + (z - a) * b / (B - 1); signed
// ops are negated with probability 1/2). kStandard and kWide are torchvision v2's
// _AUGMENTATION_SPACE of RandAugment / AutoAugment and of TrivialAugmentWide; kDali is the one DALI's
// auto_aug.auto_augment policies declare (nvidia/dali/auto_aug/auto_augment.py, augmentations.py),
// with the image shape given (use_shape=True, max_translate_rel 1):
//
// | op           | kStandard                 | kWide                     | kDali (B = 11)            | applied as            |
// |--------------|---------------------------|---------------------------|---------------------------|-----------------------|
// | identity     | -                         | -                         | -                         | copy                  |
// | shear_x/y    | ±lin(0, 0.3)              | ±lin(0, 0.99)             | ±lin(0, 0.3)              | warp, corner origin   |
// | translate_x/y| ±lin(0, 150/331 * W or H) | ±lin(0, 32) pixels        | ±lin(0, 1) * W or H       | warp (torchvision's   |
// |              |                           |                           |                           | two: trunc to int px) |
// | rotate       | ±lin(0, 30) degrees       | ±lin(0, 135) degrees      | ±lin(0, 30) degrees       | rotate, keep size     |
// | brightness   | 1 ± lin(0, 0.9)           | 1 ± lin(0, 0.99)          | lin(0.1, 1.9) (unsigned)  | brightness            |
// | color        | 1 ± lin(0, 0.9)           | 1 ± lin(0, 0.99)          | lin(0.1, 1.9)             | saturation (hsv)      |
// | contrast     | 1 ± lin(0, 0.9)           | 1 ± lin(0, 0.99)          | lin(0.1, 1.9)             | contrast, luma mean   |
// | sharpness    | 1 ± lin(0, 0.9)           | 1 ± lin(0, 0.99)          | lin(0.1, 1.9)             | sharpness             |
// | posterize    | 8 - round(b / ((B-1)/4))  | 8 - round(b / ((B-1)/6))  | max(1, round(lin(0, 4)))  | posterize (bits kept) |
// | solarize     | 255 * lin(1, 0)           | 255 * lin(1, 0)           | lin(256, 0)               | solarize (threshold)  |
// | auto_contrast| -                         | -                         | -                         | auto_contrast         |
// | equalize     | -                         | -                         | -                         | equalize              |
// | invert       | (auto_augment only)       |                           | (auto_augment only)       | solarize threshold 0  |
//
// auto_augment's policies (auto_augment_policies.cc): torchvision's AutoAugmentPolicy tables
// (image_net, cifar10, svhn) in kStandard with 10 bins, DALI's (reduced_image_net, reduced_cifar10)
// in kDali with 11 bins.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// Magnitude of `op` as applied: shear factor, translation in pixels, degrees, enhance factor,
// posterize bits kept, solarize threshold (uint8 units); 0 for the others.
struct OpChoice {
  AugOp op = AugOp::kIdentity;
  float magnitude = 0;
};

struct SampleOps {
  int count = 0;
  std::array<OpChoice, kMaxPolicyOps> ops{};
  int sub_policy = -1;  // auto_augment: the sub-policy drawn (for tests and diagnostics)
};

// The magnitude spaces of the table above.
enum class Space : int32_t { kStandard = 0, kWide = 1, kDali = 2 };

// The magnitude of bin `bin` of `bins` for `op` on an h x w image, sign not applied: for kStandard
// and kWide enhance ops the m of factor 1 + m and translations before truncation; for kDali the
// applied value itself.
float Magnitude(AugOp op, Space space, int bin, int bins, int64_t h, int64_t w);
bool IsSigned(AugOp op, Space space);

// The ops of one auto_augment sub-policy: (op, probability, magnitude bin); bin -1 = no magnitude.
// DALI's one-op sub-policies end with {identity, 0, -1}.
struct PolicyStep {
  AugOp op;
  float probability;
  int bin;
};
inline constexpr int kAutoAugmentSubPolicies = 25;  // every published table has 25
using SubPolicy = std::array<PolicyStep, 2>;

struct AutoAugmentPolicy {
  std::string_view name;  // the value of auto_augment's `policy` argument
  Space space;            // kStandard (torchvision's tables) or kDali (DALI's)
  int bins;               // 10 (torchvision) or 11 (DALI)
  std::array<SubPolicy, kAutoAugmentSubPolicies> sub_policies;
};

// Every policy auto_augment offers, image_net first (its default).
const std::vector<AutoAugmentPolicy>& AutoAugmentPolicies();
std::vector<std::string> AutoAugmentPolicyNames();
// nullptr for an unknown name.
const AutoAugmentPolicy* FindAutoAugmentPolicy(std::string_view name);

// Draws per sample (Philox order): rand_augment: per op: op index, sign bit. trivial: op index, bin,
// sign bit. auto_augment: sub-policy index, then per op: uniform, sign bit.
SampleOps DrawRandAugment(Philox& rng, int n, int m, int bins, int64_t h, int64_t w);
SampleOps DrawTrivialAugmentWide(Philox& rng, int bins, int64_t h, int64_t w);
SampleOps DrawAutoAugment(Philox& rng, const AutoAugmentPolicy& policy, int64_t h, int64_t w);

// A uniform index in [0, k) from one 32-bit draw (multiply-shift).
inline uint32_t UniformIndex(Philox& rng, uint32_t k) {
  return static_cast<uint32_t>((static_cast<uint64_t>(rng.NextU32()) * k) >> 32);
}

}  // namespace conveyor::ops::augment
