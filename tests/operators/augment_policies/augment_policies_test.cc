// auto_augment, rand_augment, trivial_augment_wide: each step equals the standalone operator with
// the same parameter (CPU), the operators equal the steps replayed from the same draws, GPU equals
// CPU bit for bit (random sizes, mixed choices), errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

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

TEST(PolicySteps, EqualTheStandaloneOperators) {
  const TensorListCPU in = RandomBatch({Shape{37, 53, 3}}, DType::kUInt8, "HWC");
  const float center = ContrastCenter(static_cast<const uint8_t*>(in.raw_sample(0)), 37 * 53);
  struct Case {
    OpChoice choice;
    OpSpec spec;
  };
  const std::vector<double> fill = {128};
  const std::vector<Case> cases = {
      {{AugOp::kBrightness, 1.27f}, Node("brightness", "b").SetArg("brightness", 1.27f)},
      {{AugOp::kColor, 0.4f}, Node("saturation", "s").SetArg("saturation", 0.4f)},
      {{AugOp::kContrast, 1.6f}, Node("contrast", "c").SetArg("contrast", 1.6f).SetArg("contrast_center", center)},
      {{AugOp::kSharpness, 0.3f}, Node("sharpness", "sh").SetArg("factor", 0.3f)},
      {{AugOp::kPosterize, 5.f}, Node("posterize", "p").SetArg("bits", 5)},
      {{AugOp::kSolarize, 101.f}, Node("solarize", "so").SetArg("threshold", 101.f)},
      {{AugOp::kInvert, 0.f}, Node("solarize", "inv").SetArg("threshold", 0.f)},
      {{AugOp::kAutoContrast, 0.f}, Node("auto_contrast", "ac")},
      {{AugOp::kEqualize, 0.f}, Node("equalize", "eq")},
      {{AugOp::kRotate, -17.f}, Node("rotate", "r").SetArg("angle", -17.f).SetArg("keep_size", true)
                                    .SetArg("fill_value", fill).SetArg("interp_type", std::string("nearest"))},
      {{AugOp::kShearX, 0.21f}, Node("warp_affine", "wx").SetArg("matrix", std::vector<double>{1, 0.21f, 0, 0, 1, 0})
                                    .SetArg("fill_value", fill).SetArg("interp_type", std::string("nearest"))},
      {{AugOp::kShearY, -0.3f}, Node("warp_affine", "wy").SetArg("matrix", std::vector<double>{1, 0, 0, -0.3f, 1, 0})
                                    .SetArg("fill_value", fill).SetArg("interp_type", std::string("nearest"))},
      {{AugOp::kTranslateX, 7.f}, Node("warp_affine", "tx").SetArg("matrix", std::vector<double>{1, 0, -7, 0, 1, 0})
                                      .SetArg("fill_value", fill).SetArg("interp_type", std::string("nearest"))},
      {{AugOp::kTranslateY, -4.f}, Node("warp_affine", "ty").SetArg("matrix", std::vector<double>{1, 0, 0, 0, 1, 4})
                                       .SetArg("fill_value", fill).SetArg("interp_type", std::string("nearest"))},
  };
  for (const Case& c : cases) {
    ExpectSameBytes(Step(in, c.choice), RunOp(c.spec, Device::kCpu, in), AugOpName(c.choice.op));
  }
  ExpectSameBytes(Step(in, {AugOp::kIdentity, 0.f}), in, "identity");
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
  ExpectReplay(Node("auto_augment", "aa"),
               [](Philox& r, int64_t h, int64_t w) { return DrawAutoAugmentImageNet(r, h, w); });
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
    for (const OpSpec& spec : {Node("rand_augment", "ra1").SetArg("n", 3).SetArg("m", 17),
                               Node("rand_augment", "ra2"), Node("trivial_augment_wide", "ta"),
                               Node("auto_augment", "aa")}) {
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
  EXPECT_THAT(RunError(Node("auto_augment", "aa").SetArg("policy", std::string("cifar10")), rgb),
              HasSubstr("cifar10"));
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
