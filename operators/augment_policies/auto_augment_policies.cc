// The published AutoAugment tables that auto_augment offers (policy.h: how a table is drawn and
// what its bins mean). Transcribed, not derived:
//   torchvision: torchvision/transforms/v2/_auto_augment.py, AutoAugment._get_policies
//     (AutoAugmentPolicy.IMAGENET, CIFAR10, SVHN); magnitudes: AutoAugment._AUGMENTATION_SPACE, 10 bins.
//   DALI: dali/python/nvidia/dali/auto_aug/auto_augment.py, get_reduced_image_net_policy and
//     get_reduced_cifar10_policy; magnitudes: the ranges declared there, num_magnitude_bins 11.
// Both follow the policies published with AutoAugment (arXiv:1805.09501).
#include "operators/augment_policies/policy.h"

namespace conveyor::ops::augment {
namespace {

using A = AugOp;
constexpr PolicyStep kNone{A::kIdentity, 0.f, -1};  // pads DALI's one-op sub-policies

AutoAugmentPolicy TorchvisionImageNet() {
  return {"image_net", Space::kStandard, 10, {{
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
  }}};
}

AutoAugmentPolicy TorchvisionCifar10() {
  return {"cifar10", Space::kStandard, 10, {{
      {{{A::kInvert, 0.1f, -1}, {A::kContrast, 0.2f, 6}}},
      {{{A::kRotate, 0.7f, 2}, {A::kTranslateX, 0.3f, 9}}},
      {{{A::kSharpness, 0.8f, 1}, {A::kSharpness, 0.9f, 3}}},
      {{{A::kShearY, 0.5f, 8}, {A::kTranslateY, 0.7f, 9}}},
      {{{A::kAutoContrast, 0.5f, -1}, {A::kEqualize, 0.9f, -1}}},
      {{{A::kShearY, 0.2f, 7}, {A::kPosterize, 0.3f, 7}}},
      {{{A::kColor, 0.4f, 3}, {A::kBrightness, 0.6f, 7}}},
      {{{A::kSharpness, 0.3f, 9}, {A::kBrightness, 0.7f, 9}}},
      {{{A::kEqualize, 0.6f, -1}, {A::kEqualize, 0.5f, -1}}},
      {{{A::kContrast, 0.6f, 7}, {A::kSharpness, 0.6f, 5}}},
      {{{A::kColor, 0.7f, 7}, {A::kTranslateX, 0.5f, 8}}},
      {{{A::kEqualize, 0.3f, -1}, {A::kAutoContrast, 0.4f, -1}}},
      {{{A::kTranslateY, 0.4f, 3}, {A::kSharpness, 0.2f, 6}}},
      {{{A::kBrightness, 0.9f, 6}, {A::kColor, 0.2f, 8}}},
      {{{A::kSolarize, 0.5f, 2}, {A::kInvert, 0.0f, -1}}},
      {{{A::kEqualize, 0.2f, -1}, {A::kAutoContrast, 0.6f, -1}}},
      {{{A::kEqualize, 0.2f, -1}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kColor, 0.9f, 9}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kAutoContrast, 0.8f, -1}, {A::kSolarize, 0.2f, 8}}},
      {{{A::kBrightness, 0.1f, 3}, {A::kColor, 0.7f, 0}}},
      {{{A::kSolarize, 0.4f, 5}, {A::kAutoContrast, 0.9f, -1}}},
      {{{A::kTranslateY, 0.9f, 9}, {A::kTranslateY, 0.7f, 9}}},
      {{{A::kAutoContrast, 0.9f, -1}, {A::kSolarize, 0.8f, 3}}},
      {{{A::kEqualize, 0.8f, -1}, {A::kInvert, 0.1f, -1}}},
      {{{A::kTranslateY, 0.7f, 9}, {A::kAutoContrast, 0.9f, -1}}},
  }}};
}

AutoAugmentPolicy TorchvisionSvhn() {
  return {"svhn", Space::kStandard, 10, {{
      {{{A::kShearX, 0.9f, 4}, {A::kInvert, 0.2f, -1}}},
      {{{A::kShearY, 0.9f, 8}, {A::kInvert, 0.7f, -1}}},
      {{{A::kEqualize, 0.6f, -1}, {A::kSolarize, 0.6f, 6}}},
      {{{A::kInvert, 0.9f, -1}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kEqualize, 0.6f, -1}, {A::kRotate, 0.9f, 3}}},
      {{{A::kShearX, 0.9f, 4}, {A::kAutoContrast, 0.8f, -1}}},
      {{{A::kShearY, 0.9f, 8}, {A::kInvert, 0.4f, -1}}},
      {{{A::kShearY, 0.9f, 5}, {A::kSolarize, 0.2f, 6}}},
      {{{A::kInvert, 0.9f, -1}, {A::kAutoContrast, 0.8f, -1}}},
      {{{A::kEqualize, 0.6f, -1}, {A::kRotate, 0.9f, 3}}},
      {{{A::kShearX, 0.9f, 4}, {A::kSolarize, 0.3f, 3}}},
      {{{A::kShearY, 0.8f, 8}, {A::kInvert, 0.7f, -1}}},
      {{{A::kEqualize, 0.9f, -1}, {A::kTranslateY, 0.6f, 6}}},
      {{{A::kInvert, 0.9f, -1}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kContrast, 0.3f, 3}, {A::kRotate, 0.8f, 4}}},
      {{{A::kInvert, 0.8f, -1}, {A::kTranslateY, 0.0f, 2}}},
      {{{A::kShearY, 0.7f, 6}, {A::kSolarize, 0.4f, 8}}},
      {{{A::kInvert, 0.6f, -1}, {A::kRotate, 0.8f, 4}}},
      {{{A::kShearY, 0.3f, 7}, {A::kTranslateX, 0.9f, 3}}},
      {{{A::kShearX, 0.1f, 6}, {A::kInvert, 0.6f, -1}}},
      {{{A::kSolarize, 0.7f, 2}, {A::kTranslateY, 0.6f, 7}}},
      {{{A::kShearY, 0.8f, 4}, {A::kInvert, 0.8f, -1}}},
      {{{A::kShearX, 0.7f, 9}, {A::kTranslateY, 0.8f, 3}}},
      {{{A::kShearY, 0.8f, 5}, {A::kAutoContrast, 0.7f, -1}}},
      {{{A::kShearX, 0.7f, 2}, {A::kInvert, 0.1f, -1}}},
  }}};
}

// torchvision's IMAGENET table but for sub-policy 12 (0-based): (equalize 0.8) alone.
AutoAugmentPolicy DaliReducedImageNet() {
  return {"reduced_image_net", Space::kDali, 11, {{
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
      {{{A::kEqualize, 0.8f, -1}, kNone}},
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
  }}};
}

// torchvision's CIFAR10 table but for sub-policy 14 (0-based): (solarize 0.5, 2) alone.
AutoAugmentPolicy DaliReducedCifar10() {
  return {"reduced_cifar10", Space::kDali, 11, {{
      {{{A::kInvert, 0.1f, -1}, {A::kContrast, 0.2f, 6}}},
      {{{A::kRotate, 0.7f, 2}, {A::kTranslateX, 0.3f, 9}}},
      {{{A::kSharpness, 0.8f, 1}, {A::kSharpness, 0.9f, 3}}},
      {{{A::kShearY, 0.5f, 8}, {A::kTranslateY, 0.7f, 9}}},
      {{{A::kAutoContrast, 0.5f, -1}, {A::kEqualize, 0.9f, -1}}},
      {{{A::kShearY, 0.2f, 7}, {A::kPosterize, 0.3f, 7}}},
      {{{A::kColor, 0.4f, 3}, {A::kBrightness, 0.6f, 7}}},
      {{{A::kSharpness, 0.3f, 9}, {A::kBrightness, 0.7f, 9}}},
      {{{A::kEqualize, 0.6f, -1}, {A::kEqualize, 0.5f, -1}}},
      {{{A::kContrast, 0.6f, 7}, {A::kSharpness, 0.6f, 5}}},
      {{{A::kColor, 0.7f, 7}, {A::kTranslateX, 0.5f, 8}}},
      {{{A::kEqualize, 0.3f, -1}, {A::kAutoContrast, 0.4f, -1}}},
      {{{A::kTranslateY, 0.4f, 3}, {A::kSharpness, 0.2f, 6}}},
      {{{A::kBrightness, 0.9f, 6}, {A::kColor, 0.2f, 8}}},
      {{{A::kSolarize, 0.5f, 2}, kNone}},
      {{{A::kEqualize, 0.2f, -1}, {A::kAutoContrast, 0.6f, -1}}},
      {{{A::kEqualize, 0.2f, -1}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kColor, 0.9f, 9}, {A::kEqualize, 0.6f, -1}}},
      {{{A::kAutoContrast, 0.8f, -1}, {A::kSolarize, 0.2f, 8}}},
      {{{A::kBrightness, 0.1f, 3}, {A::kColor, 0.7f, 0}}},
      {{{A::kSolarize, 0.4f, 5}, {A::kAutoContrast, 0.9f, -1}}},
      {{{A::kTranslateY, 0.9f, 9}, {A::kTranslateY, 0.7f, 9}}},
      {{{A::kAutoContrast, 0.9f, -1}, {A::kSolarize, 0.8f, 3}}},
      {{{A::kEqualize, 0.8f, -1}, {A::kInvert, 0.1f, -1}}},
      {{{A::kTranslateY, 0.7f, 9}, {A::kAutoContrast, 0.9f, -1}}},
  }}};
}

}  // namespace

const std::vector<AutoAugmentPolicy>& AutoAugmentPolicies() {
  static const std::vector<AutoAugmentPolicy> kPolicies = {TorchvisionImageNet(), TorchvisionCifar10(), TorchvisionSvhn(),
                                                           DaliReducedImageNet(), DaliReducedCifar10()};
  return kPolicies;
}

}  // namespace conveyor::ops::augment
