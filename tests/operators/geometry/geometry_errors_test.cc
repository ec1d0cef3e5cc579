// Every message of the geometry operators: what was expected, what arrived, and where (node,
// argument or input, sample).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "tests/operators/geometry/geometry_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
const std::vector<double> kIdentity = {1, 0, 0, 0, 1, 0};

TensorListCPU Images(const std::vector<Shape>& shapes, DType type = DType::kUInt8, Layout layout = "HWC") {
  return RandomBatch(shapes, type, std::move(layout));
}

std::string TransformError(const OpSpec& spec, const ArgInputs& args = {}) {
  return ErrorText([&] {
    OpHarness h(spec, Device::kCpu, 2);
    for (const auto& [name, values] : args) h.SetArgInput(name, values);
    h.Run();
  });
}

TEST(WarpErrors, Input) {
  const OpSpec warp = Warp().SetArg("matrix", kIdentity);
  EXPECT_THAT(RunError(warp, Images({Shape{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"warp_affine\" (warp): input 0: expected layout HWC, got CHW"));
  EXPECT_THAT(RunError(warp, Images({Shape{3, 4}}, DType::kUInt8, "")),
              HasSubstr("op \"warp_affine\" (warp): input 0: expected layout HWC, got none"));
  EXPECT_THAT(RunError(warp, Images({Shape{3, 4, 3}}, DType::kInt32)),
              HasSubstr("op \"warp_affine\" (warp): input 0: expected dtype uint8 or float32, got int32"));
  EXPECT_THAT(RunError(warp, Images({Shape{3, 4, 3}, Shape{4, 5, 9}})),
              HasSubstr("op \"warp_affine\" (warp): input 0: sample 1: expected at most 8 channels, got 9 (shape (4, 5, 9))"));
  EXPECT_THAT(RunError(warp, Images({Shape{1, 2097153, 1}})),
              HasSubstr("op \"warp_affine\" (warp): input 0: sample 0: expected sides of at most 2097152, got shape (1, 2097153, 1)"));
}

TEST(WarpErrors, Matrix) {
  const TensorListCPU two = Images({Shape{4, 4, 3}, Shape{5, 5, 3}});
  EXPECT_THAT(RunError(Warp(), two), HasSubstr("op \"warp_affine\" (warp): missing required argument \"matrix\""));
  EXPECT_THAT(RunError(Warp().SetArg("matrix", std::vector<double>{1, 0, 0, 1}), two),
              HasSubstr("op \"warp_affine\" (warp): argument \"matrix\": expected 6 values (a [2, 3] matrix, row-major), got 4 at sample 0"));
  EXPECT_THAT(RunError(Warp().SetArgInput("matrix", "m"), two, {{"matrix", PerSampleLists<float>({{1, 0, 0, 0, 1, 0}, {1, 0, 0, 0, 1}})}}),
              HasSubstr("argument \"matrix\": expected 6 values (a [2, 3] matrix, row-major), got 5 at sample 1"));
  EXPECT_THAT(RunError(Warp().SetArgInput("matrix", "m"), two, {{"matrix", PerSampleLists<float>({{1, 0, 0, 0, 1, 0}, {1, kNaN, 0, 0, 1, 0}})}}),
              HasSubstr("argument \"matrix\": expected finite values, got [[1, nan, 0], [0, 1, 0]] at sample 1"));
  EXPECT_THAT(RunError(Warp().SetArg("matrix", std::vector<double>{1, 2, 0, 2, 4, 0}).SetArg("inverse_map", false), two),
              HasSubstr("op \"warp_affine\" (warp): argument \"matrix\": expected an invertible matrix (inverse_map: false maps "
                        "input to output), got [[1, 2, 0], [2, 4, 0]] at sample 0"));
}

TEST(WarpErrors, Arguments) {
  const TensorListCPU two = Images({Shape{4, 4, 3}, Shape{5, 5, 3}});
  const OpSpec warp = Warp().SetArg("matrix", kIdentity);
  EXPECT_THAT(RunError(OpSpec(warp).SetArg("interp_type", std::string("bilinear")), two),
              HasSubstr("op \"warp_affine\" (warp): argument \"interp_type\": expected one of nearest, linear, cubic"));
  EXPECT_THAT(RunError(OpSpec(warp).SetArg("dtype", std::string("int32")), two),
              HasSubstr("argument \"dtype\": expected one of same, uint8, float32, got \"int32\""));
  EXPECT_THAT(RunError(OpSpec(warp).SetArg("fill_value", std::vector<double>{1, 2}), two),
              HasSubstr("op \"warp_affine\" (warp): argument \"fill_value\": expected 1 or 3 values (one per channel), got 2 at sample 0"));
  EXPECT_THAT(RunError(OpSpec(warp).SetArgInput("fill_value", "f"), two, {{"fill_value", PerSampleLists<float>({{1}, {2, kNaN, 3}})}}),
              HasSubstr("argument \"fill_value\": expected finite values, got nan for channel 1 at sample 1"));
  EXPECT_THAT(RunError(OpSpec(warp).SetArg("size", std::vector<double>{1, 2, 3}), two),
              HasSubstr("op \"warp_affine\" (warp): argument \"size\": expected [] or 2 values [h, w], got 3 at sample 0"));
  EXPECT_THAT(RunError(OpSpec(warp).SetArgInput("size", "s"), two, {{"size", PerSampleLists<float>({{2, 2}, {-1, 2}})}}),
              HasSubstr("argument \"size\": expected sides in [0, 4194304], got -1 for h at sample 1"));
  EXPECT_THAT(RunError(OpSpec(warp).SetArg("size", std::vector<double>{5, 1e7}), two),
              HasSubstr("argument \"size\": expected sides in [0, 4194304], got 1e+07 for w at sample 0"));
}

TEST(RotateErrors, Arguments) {
  const TensorListCPU two = Images({Shape{4, 4, 3}, Shape{5, 5, 3}});
  EXPECT_THAT(RunError(Rotate(), two), HasSubstr("op \"rotate\" (rot): missing required argument \"angle\""));
  EXPECT_THAT(RunError(Rotate().SetArg("angle", 10.0).SetArg("keep_size", true).SetArg("size", std::vector<double>{3, 3}), two),
              HasSubstr("op \"rotate\" (rot): arguments \"keep_size\" and \"size\": expected at most one of them, got keep_size: "
                        "true and a size"));
  EXPECT_THAT(RunError(Rotate().SetArgInput("angle", "a"), two, {{"angle", PerSampleScalars<float>({1, kNaN})}}),
              HasSubstr("op \"rotate\" (rot): argument \"angle\": expected a finite value, got nan at sample 1"));
  EXPECT_THAT(RunError(Rotate().SetArg("angle", 10.0), Images({Shape{4, 4}}, DType::kFloat32, "HW")),
              HasSubstr("op \"rotate\" (rot): input 0: expected layout HWC, got HW"));
}

TEST(JitterErrors, InputAndArguments) {
  const TensorListCPU two = Images({Shape{4, 4, 3}, Shape{5, 5, 3}});
  EXPECT_THAT(RunError(Jitter(), Images({Shape{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"jitter\" (jit): input 0: expected layout HWC or HW, got CHW"));
  EXPECT_THAT(RunError(Jitter(), Images({Shape{3, 4, 4}}, DType::kInt32)),
              HasSubstr("op \"jitter\" (jit): input 0: expected dtype uint8, float16, bfloat16 or float32, got int32"));
  EXPECT_THAT(RunError(Jitter().SetArgInput("nDegree", "n"), two, {{"nDegree", PerSampleScalars<int32_t>({-1, 2})}}),
              HasSubstr("op \"jitter\" (jit): argument \"nDegree\": expected a value in [0, 1048576], got -1 at sample 0"));
  EXPECT_THAT(RunError(Jitter().SetArgInput("mask", "m"), two, {{"mask", PerSampleScalars<int32_t>({1, 2})}}),
              HasSubstr("op \"jitter\" (jit): argument \"mask\": expected a value in [0, 1], got 2 at sample 1"));
  EXPECT_THAT(RunError(Jitter().SetArg("mask", 3), two), HasSubstr("argument \"mask\": expected a value in [0, 1], got 3"));
}

TEST(TransformErrors, Arguments) {
  EXPECT_THAT(TransformError(Transform("translation").SetArg("offset", std::vector<double>{1, 2, 3})),
              HasSubstr("op \"transforms.translation\" (translation): argument \"offset\": expected 2 values (x, y), got 3 at sample 0"));
  EXPECT_THAT(TransformError(Transform("translation").SetArgInput("offset", "o"), {{"offset", PerSampleLists<float>({{1, 2}, {kNaN, 0}})}}),
              HasSubstr("argument \"offset\": expected a finite value, got nan at sample 1"));
  EXPECT_THAT(TransformError(Transform("scale").SetArg("scale", std::vector<double>{1, 2}).SetArg("center", std::vector<double>{1})),
              HasSubstr("op \"transforms.scale\" (scale): argument \"center\": expected 2 values (x, y), got 1 at sample 0"));
  EXPECT_THAT(TransformError(Transform("rotation").SetArgInput("angle", "a"), {{"angle", PerSampleScalars<float>({kNaN, 1})}}),
              HasSubstr("op \"transforms.rotation\" (rotation): argument \"angle\": expected a finite value, got nan at sample 0"));
  EXPECT_THAT(TransformError(Transform("shear")),
              HasSubstr("op \"transforms.shear\" (shear): arguments \"shear\" and \"angles\": expected exactly one of them, got neither"));
  EXPECT_THAT(TransformError(Transform("shear").SetArg("shear", std::vector<double>{1, 0}).SetArg("angles", std::vector<double>{1, 0})),
              HasSubstr("arguments \"shear\" and \"angles\": expected exactly one of them, got both"));
  EXPECT_THAT(TransformError(Transform("shear").SetArg("angles", std::vector<double>{10, 90})),
              HasSubstr("op \"transforms.shear\" (shear): argument \"angles\": expected angles in (-90, 90) degrees, got 90 at sample 0"));
  EXPECT_THAT(TransformError(Transform("crop").SetArg("from_start", std::vector<double>{0, 2}).SetArg("from_end", std::vector<double>{1, 2})),
              HasSubstr("op \"transforms.crop\" (crop): arguments \"from_start\" and \"from_end\": expected a non-empty box, got 2 to 2 "
                        "along y at sample 0"));
  EXPECT_THAT(TransformError(Transform("crop").SetArg("to_end", std::vector<double>{1, 2, 3})),
              HasSubstr("op \"transforms.crop\" (crop): argument \"to_end\": expected 1 value (both axes) or 2 (x, y), got 3 at "
                        "sample 0"));
}

TEST(TransformErrors, InputTransform) {
  const OpSpec t = Transform("translation").SetArg("offset", std::vector<double>{1, 2});
  EXPECT_THAT(TransformError(OpSpec(t).SetArg("transform", std::vector<double>{1, 0, 0, 1})),
              HasSubstr("op \"transforms.translation\" (translation): argument \"transform\": expected 6 values (a [2, 3] matrix, "
                        "row-major), got 4 at sample 0"));
  EXPECT_THAT(TransformError(OpSpec(t).SetArgInput("transform", "t"),
                             {{"transform", PerSampleLists<float>({{1, 0, 0, 0, 1, 0}, {1, 0, 0, 0, 1, kNaN}})}}),
              HasSubstr("argument \"transform\": expected finite values, got [[1, 0, 0], [0, 1, nan]] at sample 1"));
}

TEST(TransformErrors, Combine) {
  const OpSpec combine = OpSpec("transforms.combine", "comb").AddInput("a").AddInput("b").AddOutput("m");
  const auto error = [&](const TensorListCPU& a, const TensorListCPU& b) {
    return ErrorText([&] {
      OpHarness h(combine, Device::kCpu, a.num_samples());
      h.SetInput(0, a);
      h.SetInput(1, b);
      h.Run();
    });
  };
  const TensorListCPU good = PerSampleMatrices({{1, 0, 0, 0, 1, 0}, {1, 0, 0, 0, 1, 0}});
  EXPECT_THAT(error(good, RandomBatch({Shape{2, 3}, Shape{2, 3}}, DType::kInt32, "")),
              HasSubstr("op \"transforms.combine\" (comb): input 1 (input_1): expected dtype float32, got int32"));
  EXPECT_THAT(error(RandomBatch({Shape{2, 3}, Shape{3, 3}}, DType::kFloat32, ""), good),
              HasSubstr("op \"transforms.combine\" (comb): input 0 (input_0): sample 1 has shape (3, 3), expected (2, 3) or (6,) (a 2-D "
                        "affine matrix)"));
  EXPECT_THAT(error(good, PerSampleMatrices({{1, 0, 0, 0, 1, 0}})),
              HasSubstr("op \"transforms.combine\" (comb): input 1 (input_1): expected 2 samples (as input 0), got 1"));
}

}  // namespace
}  // namespace conveyor::testing
