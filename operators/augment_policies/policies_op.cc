// auto_augment, rand_augment and trivial_augment_wide (DALI's auto_aug module, torchvision v2's
// AutoAugment / RandAugment / TrivialAugmentWide): per-sample operations from the counter-based
// RNG (policy.h: table and ranges), applied by the existing kernels (stage.h, policy_op.h).
//
// | op                   | input          | arguments                                           |
// |----------------------|----------------|-----------------------------------------------------|
// | auto_augment         | HWC uint8, RGB | policy (image_net, ...), fill_value, interp_type    |
// | rand_augment         | HWC uint8, RGB | n (2), m (9), num_magnitude_bins (31), fill, interp |
// | trivial_augment_wide | HWC uint8, RGB | num_magnitude_bins (31), fill_value, interp_type    |
//
// CPU and GPU bit-identical (the kernels are). GPU: 5 launches per step, capturable.
#include <string>

#include "core/op/registry.h"
#include "operators/augment_policies/policy_op.h"

namespace conveyor::ops::augment {
namespace {

const OpSchema kAutoAugmentSchema = AddPolicyArgs(
    OpSchema("auto_augment")
        .Doc("AutoAugment (arXiv:1805.09501): each sample applies one of the policy's 25 sub-policies, chosen "
             "uniformly; each of its steps (two; one in some of DALI's) runs with its probability "
             "(docs/operators_augment.md).")
        .Arg<std::string>("policy", "image_net",
                          "The policy: image_net, cifar10, svhn (torchvision's AutoAugmentPolicy IMAGENET, CIFAR10, "
                          "SVHN and its magnitudes, 10 bins), reduced_image_net, reduced_cifar10 (DALI's auto_augment "
                          "policies of those names and their magnitudes, 11 bins; translations relative to the "
                          "image, as DALI's with shape given).")
        .Choices(AutoAugmentPolicyNames()));

const OpSchema kRandAugmentSchema = AddPolicyArgs(
    OpSchema("rand_augment")
        .Doc("RandAugment (arXiv:1909.13719): each sample applies n operations drawn uniformly (with replacement) "
             "from 14, all with magnitude bin m of num_magnitude_bins, signs drawn per operation.")
        .Arg<int>("n", 2, "Operations per sample, 1..8.")
        .Arg<int>("m", 9, "Magnitude bin, 0 <= m < num_magnitude_bins.")
        .Arg<int>("num_magnitude_bins", 31, "Number of magnitude bins (>= 2)."));

const OpSchema kTrivialAugmentSchema = AddPolicyArgs(
    OpSchema("trivial_augment_wide")
        .Doc("TrivialAugment Wide (arXiv:2103.10158): each sample applies one operation drawn uniformly from 14 "
             "with a magnitude bin drawn uniformly from num_magnitude_bins, sign drawn.")
        .Arg<int>("num_magnitude_bins", 31, "Number of magnitude bins (>= 2)."));

class AutoAugmentOp final : public PolicyOp {
 public:
  // The schema has checked the name against AutoAugmentPolicyNames().
  explicit AutoAugmentOp(const OpSpec& spec)
      : PolicyOp(spec, 2), policy_(*FindAutoAugmentPolicy(spec.Arg<std::string>("policy"))) {}

 protected:
  SampleOps Draw(Philox& rng, int64_t h, int64_t w) const override { return DrawAutoAugment(rng, policy_, h, w); }

 private:
  const AutoAugmentPolicy& policy_;
};

class RandAugmentOp final : public PolicyOp {
 public:
  explicit RandAugmentOp(const OpSpec& spec)
      : PolicyOp(spec, CheckedN(spec)), n_(spec.Arg<int>("n")), m_(spec.Arg<int>("m")),
        bins_(spec.Arg<int>("num_magnitude_bins")) {
    if (bins_ < 2) ThrowArg("num_magnitude_bins", "a value >= 2", std::to_string(bins_));
    if (m_ < 0 || m_ >= bins_) {
      ThrowArg("m", "a value in [0, " + std::to_string(bins_) + ") (num_magnitude_bins " + std::to_string(bins_) + ")",
               std::to_string(m_));
    }
  }

 protected:
  SampleOps Draw(Philox& rng, int64_t h, int64_t w) const override { return DrawRandAugment(rng, n_, m_, bins_, h, w); }

 private:
  static int CheckedN(const OpSpec& spec) {
    const int n = spec.Arg<int>("n");
    if (n < 1 || n > kMaxPolicyOps) {
      throw InvalidArgument(spec.Describe() + ": argument \"n\": expected a value in [1, " + std::to_string(kMaxPolicyOps) +
                            "], got " + std::to_string(n));
    }
    return n;
  }

  int n_, m_, bins_;
};

class TrivialAugmentWideOp final : public PolicyOp {
 public:
  explicit TrivialAugmentWideOp(const OpSpec& spec) : PolicyOp(spec, 1), bins_(spec.Arg<int>("num_magnitude_bins")) {
    if (bins_ < 2) ThrowArg("num_magnitude_bins", "a value >= 2", std::to_string(bins_));
  }

 protected:
  SampleOps Draw(Philox& rng, int64_t h, int64_t w) const override { return DrawTrivialAugmentWide(rng, bins_, h, w); }

 private:
  int bins_;
};

const OperatorRegistration<AutoAugmentOp> kAutoAugmentRegistration(kAutoAugmentSchema);
const OperatorRegistration<RandAugmentOp> kRandAugmentRegistration(kRandAugmentSchema);
const OperatorRegistration<TrivialAugmentWideOp> kTrivialAugmentRegistration(kTrivialAugmentSchema);

}  // namespace
}  // namespace conveyor::ops::augment
