// auto_augment, rand_augment and trivial_augment_wide (DALI's auto_aug module, torchvision v2's
// AutoAugment / RandAugment / TrivialAugmentWide): per-sample operations from the counter-based
// RNG (policy.h: table and ranges), applied by the existing kernels (stage.h, policy_op.h).
//
// | op                   | input          | arguments                                           |
// |----------------------|----------------|-----------------------------------------------------|
// | auto_augment         | HWC uint8, RGB | policy (image_net), fill_value, interp_type         |
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
             "uniformly; each of its two steps runs with its probability (docs/operators_augment.md).")
        .Arg<std::string>("policy", "image_net", "The policy: image_net (torchvision's IMAGENET, DALI's "
                                                 "auto_augment_image_net).")
        .Choices({"image_net"}));

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
  explicit AutoAugmentOp(const OpSpec& spec) : PolicyOp(spec, 2) {}

 protected:
  SampleOps Draw(Philox& rng, int64_t h, int64_t w) const override { return DrawAutoAugmentImageNet(rng, h, w); }
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
