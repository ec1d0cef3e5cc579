// transforms.* matrices against hand-computed ones: each generator, centres, per-sample values,
// composition with `transform` in both orders, transforms.combine; conformance (CPU cases).
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/geometry/geometry_testing.h"

namespace conveyor::testing {
namespace {

// Runs a transforms.* spec (no inputs) for `n` samples.
TensorListCPU RunTransform(const OpSpec& spec, int n = 1, const ArgInputs& args = {}) {
  OpHarness h(spec, Device::kCpu, n);
  for (const auto& [name, values] : args) h.SetArgInput(name, values);
  h.set_batch_size(n);
  h.Run();
  return h.OutputToHost(0);
}

void ExpectMatrix(const TensorListCPU& out, int s, const Matrix& want, const std::string& what, double tol = 1e-6) {
  ASSERT_EQ(out.dtype(), DType::kFloat32) << what;
  ASSERT_EQ(out.shape(s), (Shape{2, 3})) << what;
  for (int j = 0; j < 6; ++j) EXPECT_NEAR(At(out, s, j), want[static_cast<size_t>(j)], tol) << what << ": element " << j;
}

TEST(Transforms, Translation) {
  ExpectMatrix(RunTransform(Transform("translation").SetArg("offset", std::vector<double>{3, -2})), 0, {1, 0, 3, 0, 1, -2},
               "constant");
  const TensorListCPU per = RunTransform(Transform("translation").SetArgInput("offset", "o"), 2,
                                         {{"offset", PerSampleLists<float>({{1, 2}, {-4, 0.5}})}});
  ExpectMatrix(per, 0, {1, 0, 1, 0, 1, 2}, "sample 0");
  ExpectMatrix(per, 1, {1, 0, -4, 0, 1, 0.5}, "sample 1");
}

TEST(Transforms, ScaleAboutACenter) {
  ExpectMatrix(RunTransform(Transform("scale").SetArg("scale", std::vector<double>{2, 3})), 0, {2, 0, 0, 0, 3, 0}, "origin");
  // x' = 2 (x - 10) + 10, y' = 3 (y - 20) + 20.
  ExpectMatrix(RunTransform(Transform("scale").SetArg("scale", std::vector<double>{2, 3}).SetArg("center", std::vector<double>{10, 20})),
               0, {2, 0, -10, 0, 3, -40}, "center");
}

TEST(Transforms, RotationAboutACenter) {
  ExpectMatrix(RunTransform(Transform("rotation").SetArg("angle", 90.0)), 0, {0, -1, 0, 1, 0, 0}, "quarter", 0);
  const double a = 30 * M_PI / 180, c = std::cos(a), s = std::sin(a);
  // About (5, 7): p' = R (p - c) + c.
  ExpectMatrix(RunTransform(Transform("rotation").SetArg("angle", 30.0).SetArg("center", std::vector<double>{5, 7})), 0,
               {c, -s, 5 - c * 5 + s * 7, s, c, 7 - s * 5 - c * 7}, "30 about (5, 7)");
  const TensorListCPU per = RunTransform(Transform("rotation").SetArgInput("angle", "a"), 2, {{"angle", PerSampleScalars<float>({180, -90})}});
  ExpectMatrix(per, 0, {-1, 0, 0, 0, -1, 0}, "180", 0);
  ExpectMatrix(per, 1, {0, 1, 0, -1, 0, 0}, "-90", 0);
}

TEST(Transforms, ShearByFactorsOrAngles) {
  // x' = x + 0.5 (y - 2), y' = 0.25 (x - 4) + y about (4, 2).
  ExpectMatrix(RunTransform(Transform("shear").SetArg("shear", std::vector<double>{0.5, 0.25}).SetArg("center", std::vector<double>{4, 2})),
               0, {1, 0.5, -1, 0.25, 1, -1}, "factors");
  ExpectMatrix(RunTransform(Transform("shear").SetArg("angles", std::vector<double>{45, -30})), 0,
               {1, 1, 0, -std::tan(M_PI / 6), 1, 0}, "angles");
}

TEST(Transforms, CropMapsOneBoxOntoAnother) {
  // [0, 1] x [0, 1] onto [10, 30] x [20, 60].
  ExpectMatrix(RunTransform(Transform("crop").SetArg("to_start", std::vector<double>{10, 20}).SetArg("to_end", std::vector<double>{30, 60})),
               0, {20, 0, 10, 0, 40, 20}, "unit box");
  // A crop window [100, 300) x [50, 150) of an image, into normalized window coordinates.
  ExpectMatrix(RunTransform(Transform("crop").SetArg("from_start", std::vector<double>{100, 50}).SetArg("from_end", std::vector<double>{300, 150})),
               0, {1.0 / 200, 0, -0.5, 0, 1.0 / 100, -0.5}, "window");
  // absolute swaps reversed ends; without it the axis flips.
  const OpSpec reversed = Transform("crop").SetArg("from_start", std::vector<double>{1}).SetArg("from_end", std::vector<double>{0});
  ExpectMatrix(RunTransform(reversed), 0, {-1, 0, 1, 0, -1, 1}, "flipped");
  ExpectMatrix(RunTransform(OpSpec(reversed).SetArg("absolute", true)), 0, {1, 0, 0, 0, 1, 0}, "absolute");
}

TEST(Transforms, ComposeWithAnInputTransformInEitherOrder) {
  const TensorListCPU scale2 = PerSampleMatrices({{2, 0, 0, 0, 2, 0}, {1, 0, 0, 0, 3, 0}});
  const OpSpec translate = Transform("translation").SetArg("offset", std::vector<double>{1, 2}).SetArgInput("transform", "t");
  // Default: the translation after the scale, x' = 2 x + 1.
  const TensorListCPU after = RunTransform(translate, 2, {{"transform", scale2}});
  ExpectMatrix(after, 0, {2, 0, 1, 0, 2, 2}, "after");
  ExpectMatrix(after, 1, {1, 0, 1, 0, 3, 2}, "after, sample 1");
  // reverse_order: the translation first, x' = 2 (x + 1).
  const TensorListCPU before = RunTransform(OpSpec(translate).SetArg("reverse_order", true), 2, {{"transform", scale2}});
  ExpectMatrix(before, 0, {2, 0, 2, 0, 2, 4}, "before");
  ExpectMatrix(before, 1, {1, 0, 1, 0, 3, 6}, "before, sample 1");
  // A constant transform composes the same way.
  ExpectMatrix(RunTransform(Transform("rotation").SetArg("angle", 90.0).SetArg("transform", std::vector<double>{1, 0, 5, 0, 1, 0})), 0,
               {0, -1, 0, 1, 0, 5}, "constant transform");
}

TEST(Transforms, CombineAppliesItsInputsInOrder) {
  const TensorListCPU scale = PerSampleMatrices({{2, 0, 0, 0, 2, 0}});
  const TensorListCPU shift = MakeBatch<float>({Shape{6}}, {{1, 0, 1, 0, 1, 2}});  // a [6] sample is taken too
  const OpSpec combine = OpSpec("transforms.combine", "comb").AddInput("a").AddInput("b").AddOutput("m");
  for (const bool reverse : {false, true}) {
    OpHarness h(OpSpec(combine).SetArg("reverse_order", reverse), Device::kCpu, 1);
    h.SetInput(0, scale);
    h.SetInput(1, shift);
    h.Run();
    ExpectMatrix(h.OutputToHost(0), 0, reverse ? Matrix{2, 0, 2, 0, 2, 4} : Matrix{2, 0, 1, 0, 2, 2}, reverse ? "reverse" : "default");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Transforms, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"translation", Transform("translation").SetArg("offset", std::vector<double>{1, 2}), Device::kCpu},
        ConformanceCase{"scale", Transform("scale").SetArg("scale", std::vector<double>{1, 2}), Device::kCpu},
        ConformanceCase{"rotation", Transform("rotation").SetArg("angle", 10.0), Device::kCpu},
        ConformanceCase{"shear", Transform("shear").SetArg("angles", std::vector<double>{10, 0}), Device::kCpu},
        ConformanceCase{"crop", Transform("crop"), Device::kCpu},
        // Its inputs must be [2, 3] matrices: the suite's zero-sized samples are not matrices.
        ConformanceCase{"combine", OpSpec("transforms.combine", "comb").AddInput("a").AddInput("b").AddOutput("m"),
                        Device::kCpu, DType::kFloat32, true, "HW", 0, 0, false}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
