// auto_augment, rand_augment, trivial_augment_wide: each step equals the standalone operator with
// the same parameter (CPU), every sub-policy of every auto_augment policy too, the operators equal
// the steps replayed from the same draws, GPU equals CPU bit for bit (random sizes, mixed choices,
// every auto_augment policy), errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "operators/augment_policies/policy.h"
#include "tests/conformance/conformance.h"
#include "operators/augment_policies/stage.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using namespace conveyor::ops::augment;  // NOLINT

OpSpec Node(const std::string& op, const std::string& name) { return OpSpec(op, name).AddInput("x").AddOutput("y"); }

// One step through stage.h on the CPU.
TensorListCPU Step(const TensorListCPU& in, const OpChoice& c, ops::resample::Filter filter = ops::resample::Filter::kNearest) {
  TensorListCPU out;
  out.Resize(in.shapes(), DType::kUInt8);
  out.set_layout("HWC");
  StepSample s = MakeStep(c, in.shape(0)[0], in.shape(0)[1], 128.f);
  SetStepAddresses(s, static_cast<const uint8_t*>(in.raw_sample(0)), static_cast<uint8_t*>(out.raw_sample(0)));
  RunStepCpu(s, filter);
  return out;
}

// The standalone operator (and its arguments) that applies `c` to `in`.
OpSpec Standalone(const OpChoice& c, const TensorListCPU& in) {
  const std::vector<double> fill = {128};
  const double m = c.magnitude;
  const auto warp = [&](const std::string& name, std::vector<double> matrix) {
    return Node("warp_affine", name).SetArg("matrix", std::move(matrix)).SetArg("fill_value", fill)
        .SetArg("interp_type", std::string("nearest"));
  };
  switch (c.op) {
    case AugOp::kBrightness: return Node("brightness", "b").SetArg("brightness", c.magnitude);
    case AugOp::kColor: return Node("saturation", "s").SetArg("saturation", c.magnitude);
    case AugOp::kContrast: {
      const Shape& shape = in.shape(0);
      const float center = ContrastCenter(static_cast<const uint8_t*>(in.raw_sample(0)), shape[0] * shape[1]);
      return Node("contrast", "c").SetArg("contrast", c.magnitude).SetArg("contrast_center", center);
    }
    case AugOp::kSharpness: return Node("sharpness", "sh").SetArg("factor", c.magnitude);
    case AugOp::kPosterize: return Node("posterize", "p").SetArg("bits", static_cast<int>(c.magnitude));
    case AugOp::kSolarize: return Node("solarize", "so").SetArg("threshold", c.magnitude);
    case AugOp::kInvert: return Node("solarize", "inv").SetArg("threshold", 0.f);
    case AugOp::kAutoContrast: return Node("auto_contrast", "ac");
    case AugOp::kEqualize: return Node("equalize", "eq");
    case AugOp::kRotate:
      return Node("rotate", "r").SetArg("angle", c.magnitude).SetArg("keep_size", true).SetArg("fill_value", fill)
          .SetArg("interp_type", std::string("nearest"));
    case AugOp::kShearX: return warp("wx", {1, m, 0, 0, 1, 0});
    case AugOp::kShearY: return warp("wy", {1, 0, 0, m, 1, 0});
    case AugOp::kTranslateX: return warp("tx", {1, 0, -m, 0, 1, 0});  // the picture moves by +m
    case AugOp::kTranslateY: return warp("ty", {1, 0, 0, 0, 1, -m});
    default:  // identity has none: the tests compare it with the input
      ADD_FAILURE() << "no standalone operator for " << AugOpName(c.op);
      return Node("flip", "none");
  }
}

TEST(PolicySteps, EqualTheStandaloneOperators) {
  const TensorListCPU in = RandomBatch({Shape{37, 53, 3}}, DType::kUInt8, "HWC");
  const std::vector<OpChoice> choices = {
      {AugOp::kBrightness, 1.27f}, {AugOp::kColor, 0.4f},       {AugOp::kContrast, 1.6f},  {AugOp::kSharpness, 0.3f},
      {AugOp::kPosterize, 5.f},    {AugOp::kPosterize, 1.f},    {AugOp::kSolarize, 101.f}, {AugOp::kSolarize, 230.4f},
      {AugOp::kInvert, 0.f},       {AugOp::kAutoContrast, 0.f}, {AugOp::kEqualize, 0.f},   {AugOp::kRotate, -17.f},
      {AugOp::kShearX, 0.21f},     {AugOp::kShearY, -0.3f},     {AugOp::kTranslateX, 7.f}, {AugOp::kTranslateY, -4.f},
      {AugOp::kTranslateX, -47.7f},
  };
  for (const OpChoice& c : choices) {
    ExpectSameBytes(Step(in, c), RunOp(Standalone(c, in), Device::kCpu, in),
                    std::string(AugOpName(c.op)) + " " + std::to_string(c.magnitude));
  }
  ExpectSameBytes(Step(in, {AugOp::kIdentity, 0.f}), in, "identity");
}

// For every sub-policy of every auto_augment policy, a draw that applies all its steps: each step
// (from the previous step's output) equals the standalone operator with the drawn magnitude.
TEST(PolicySteps, EverySubPolicyEqualsTheStandaloneOperators) {
  const TensorListCPU in = RandomBatch({Shape{29, 41, 3}}, DType::kUInt8, "HWC");
  for (const AutoAugmentPolicy& policy : AutoAugmentPolicies()) {
    std::vector<bool> seen(kAutoAugmentSubPolicies, false);
    int covered = 0;
    for (uint32_t i = 0; i < 400000 && covered < kAutoAugmentSubPolicies; ++i) {
      Philox rng(21, 2, 0, i);
      const SampleOps ops = DrawAutoAugment(rng, policy, 29, 41);
      const SubPolicy& sub = policy.sub_policies[static_cast<size_t>(ops.sub_policy)];
      bool all = true;
      for (size_t k = 0; k < 2; ++k) all = all && (sub[k].probability == 0.f || ops.ops[k].op != AugOp::kIdentity);
      if (!all || seen[static_cast<size_t>(ops.sub_policy)]) continue;
      seen[static_cast<size_t>(ops.sub_policy)] = true;
      ++covered;
      TensorListCPU cur = Step(in, OpChoice{});  // identity: a copy
      for (size_t k = 0; k < 2; ++k) {
        if (ops.ops[k].op == AugOp::kIdentity) continue;
        TensorListCPU next = Step(cur, ops.ops[k]);
        ExpectSameBytes(next, RunOp(Standalone(ops.ops[k], cur), Device::kCpu, cur),
                        std::string(policy.name) + " sub-policy " + std::to_string(ops.sub_policy) + " step " +
                            std::to_string(k) + " " + AugOpName(ops.ops[k].op));
        cur = std::move(next);
      }
    }
    EXPECT_EQ(covered, kAutoAugmentSubPolicies) << policy.name;
  }
}

// The operator's output against the steps replayed from Philox(seed 1234, node, iteration 0, i).
void ExpectReplay(const OpSpec& spec, const std::function<SampleOps(Philox&, int64_t, int64_t)>& draw) {
  const TensorListCPU in = RandomBatch(RandomHwcShapes(10, 1, 40, 40, 3), DType::kUInt8, "HWC");
  const TensorListCPU out = RunOp(spec, Device::kCpu, in);
  for (int i = 0; i < in.num_samples(); ++i) {
    TensorListCPU cur;
    cur.Resize({in.shape(i)}, DType::kUInt8);
    cur.set_layout("HWC");
    std::memcpy(cur.raw_sample(0), in.raw_sample(i), static_cast<size_t>(in.shape(i).num_elements()));
    Philox rng(1234, NodeId(spec.name()), 0, static_cast<uint32_t>(i));
    const SampleOps ops = draw(rng, in.shape(i)[0], in.shape(i)[1]);
    for (int k = 0; k < ops.count; ++k) cur = Step(cur, ops.ops[static_cast<size_t>(k)]);
    ASSERT_EQ(std::memcmp(cur.raw_sample(0), out.raw_sample(i), static_cast<size_t>(in.shape(i).num_elements())), 0)
        << spec.name() << " sample " << i;
  }
}

TEST(PolicyOps, ReplayTheirDraws) {
  ExpectReplay(Node("rand_augment", "ra").SetArg("n", 3).SetArg("m", 12),
               [](Philox& r, int64_t h, int64_t w) { return DrawRandAugment(r, 3, 12, 31, h, w); });
  ExpectReplay(Node("trivial_augment_wide", "ta"),
               [](Philox& r, int64_t h, int64_t w) { return DrawTrivialAugmentWide(r, 31, h, w); });
  for (const AutoAugmentPolicy& policy : AutoAugmentPolicies()) {
    ExpectReplay(Node("auto_augment", "aa_" + std::string(policy.name)).SetArg("policy", std::string(policy.name)),
                 [&](Philox& r, int64_t h, int64_t w) { return DrawAutoAugment(r, policy, h, w); });
  }
}

TEST(PolicyOpsGpu, MatchCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  // Batches of 24 random sizes (1 x 1 up to 300 x 300) give every kernel a mix of chosen and skipped
  // samples in each step; three iterations' worth of draws through distinct node names.
  std::vector<Shape> shapes = RandomHwcShapes(22, 1, 300, 300, 3);
  shapes.push_back(Shape{1, 1, 3});
  shapes.push_back(Shape{0, 5, 3});
  const TensorListCPU in = RandomBatch(shapes, DType::kUInt8, "HWC");
  for (const std::string interp : {"nearest", "linear"}) {
    std::vector<OpSpec> specs = {Node("rand_augment", "ra1").SetArg("n", 3).SetArg("m", 17), Node("rand_augment", "ra2"),
                                 Node("trivial_augment_wide", "ta")};
    for (const std::string& policy : AutoAugmentPolicyNames()) {
      specs.push_back(Node("auto_augment", "aa_" + policy).SetArg("policy", policy));
    }
    for (const OpSpec& spec : specs) {
      OpSpec s = spec;
      s.SetArg("interp_type", interp);
      ExpectSameBytes(RunOp(s, Device::kGpu, in), RunOp(s, Device::kCpu, in), spec.name() + " " + interp);
    }
  }
}

TEST(PolicyOps, Errors) {
  const TensorListCPU rgb = RandomBatch({Shape{4, 4, 3}}, DType::kUInt8, "HWC");
  EXPECT_THAT(RunError(Node("rand_augment", "ra").SetArg("m", 31), rgb),
              HasSubstr("op \"rand_augment\" (ra): argument \"m\": expected a value in [0, 31) (num_magnitude_bins 31), got 31"));
  EXPECT_THAT(RunError(Node("rand_augment", "ra").SetArg("num_magnitude_bins", 1).SetArg("m", 0), rgb),
              HasSubstr("op \"rand_augment\" (ra): argument \"num_magnitude_bins\": expected a value >= 2, got 1"));
  EXPECT_THAT(RunError(Node("rand_augment", "ra").SetArg("n", 9), rgb),
              HasSubstr("op \"rand_augment\" (ra): argument \"n\": expected a value in [1, 8], got 9"));
  EXPECT_THAT(RunError(Node("trivial_augment_wide", "ta").SetArg("num_magnitude_bins", 0), rgb),
              HasSubstr("op \"trivial_augment_wide\" (ta): argument \"num_magnitude_bins\": expected a value >= 2, got 0"));
  EXPECT_THAT(RunError(Node("auto_augment", "aa").SetArg("policy", std::string("cifar100")), rgb),
              HasSubstr("op \"auto_augment\" (aa): argument \"policy\": expected one of image_net, cifar10, svhn, "
                        "reduced_image_net, reduced_cifar10, got \"cifar100\""));
  EXPECT_THAT(RunError(Node("auto_augment", "aa").SetArg("fill_value", 300.f), rgb), HasSubstr("fill_value"));
  EXPECT_THAT(RunError(Node("auto_augment", "aa"), RandomBatch({Shape{4, 4, 3}}, DType::kFloat32, "HWC")),
              HasSubstr("op \"auto_augment\" (aa): input 0"));
  EXPECT_THAT(RunError(Node("trivial_augment_wide", "ta"), RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 2}}, DType::kUInt8, "HWC")),
              HasSubstr("op \"trivial_augment_wide\" (ta): input 0: sample 1 has 2 channels, expected 3 (RGB)"));
}

INSTANTIATE_TEST_SUITE_P(
    AugmentPolicies, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"rand_augment_cpu", Node("rand_augment", "ra").SetArg("n", 3), Device::kCpu, DType::kUInt8, true, "HWC", 3},
        ConformanceCase{"rand_augment_gpu", Node("rand_augment", "ra").SetArg("n", 3), Device::kGpu, DType::kUInt8, true, "HWC", 3},
        ConformanceCase{"auto_augment_gpu", Node("auto_augment", "aa"), Device::kGpu, DType::kUInt8, true, "HWC", 3},
        ConformanceCase{"trivial_augment_wide_gpu", Node("trivial_augment_wide", "ta"), Device::kGpu, DType::kUInt8, true,
                        "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
