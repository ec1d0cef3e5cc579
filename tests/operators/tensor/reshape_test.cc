// reshape, squeeze and expand_dims on the CPU: shapes and layouts as DALI defines them, the bytes
// unchanged, every error message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operators/tensor/tensor_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Reshape() { return OpSpec("reshape", "r").AddInput("x").AddOutput("y"); }
OpSpec Squeeze() { return OpSpec("squeeze", "sq").AddInput("x").AddOutput("y"); }
OpSpec ExpandDims() { return OpSpec("expand_dims", "ex").AddInput("x").AddOutput("y"); }

// The output holds the input's bytes under `shapes` and `layout`.
void ExpectReinterpreted(const TensorListCPU& out, const TensorListCPU& in, const std::vector<Shape>& shapes,
                         const Layout& layout) {
  ASSERT_EQ(out.shapes(), shapes);
  EXPECT_EQ(out.dtype(), in.dtype());
  EXPECT_EQ(out.layout(), layout);
  for (int s = 0; s < in.num_samples(); ++s) EXPECT_EQ(Elements(out, s), Elements(in, s)) << "sample " << s;
}

TEST(Reshape, ShapeWithAnInferredExtent) {
  const TensorListCPU in = RandomTyped({Shape{4, 6, 3}, Shape{2, 2, 3}}, DType::kUInt8, "HWC");
  ExpectReinterpreted(RunOp(Reshape().SetArg("shape", std::vector<int64_t>{-1, 3}), Device::kCpu, in), in,
                      {Shape{24, 3}, Shape{4, 3}}, Layout());
  // Same dim count: the layout stays (DALI); `layout` replaces it.
  const TensorListCPU image = RandomTyped({Shape{4, 6, 3}}, DType::kFloat32, "HWC");
  ExpectReinterpreted(RunOp(Reshape().SetArg("shape", std::vector<int64_t>{2, -1, 3}), Device::kCpu, image), image,
                      {Shape{2, 12, 3}}, "HWC");
  const TensorListCPU flat = RandomTyped({Shape{4, 6, 3}}, DType::kInt16, "HWC");
  ExpectReinterpreted(RunOp(Reshape().SetArg("shape", std::vector<int64_t>{72}).SetArg("layout", "X"), Device::kCpu, flat),
                      flat, {Shape{72}}, "X");
}

TEST(Reshape, PerSampleShape) {
  const TensorListCPU in = RandomTyped({Shape{4, 6}, Shape{5, 2}, Shape{0, 3}}, DType::kFloat64, "HW");
  const TensorListCPU out = RunOp(Reshape().SetArgInput("shape", "shapes"), Device::kCpu, in,
                                  {{"shape", PerSampleLists<int64_t>({{3, 8}, {-1}, {3, -1}})}});
  ExpectReinterpreted(out, in, {Shape{3, 8}, Shape{10}, Shape{3, 0}}, Layout());
}

TEST(Reshape, RelativeShapeAndSourceDims) {
  const TensorListCPU in = RandomTyped({Shape{4, 6, 3}, Shape{2, 5, 3}}, DType::kInt32, "HWC");
  // Flatten H and W: [H, W*C]; then DALI's src_dims: [C, H, W] extents from the same bytes.
  ExpectReinterpreted(RunOp(Reshape().SetArg("rel_shape", std::vector<double>{1, -1}), Device::kCpu, in), in,
                      {Shape{4, 18}, Shape{2, 15}}, Layout());
  ExpectReinterpreted(RunOp(Reshape().SetArg("src_dims", std::vector<int64_t>{2, 0, 1}), Device::kCpu, in), in,
                      {Shape{3, 4, 6}, Shape{3, 2, 5}}, "HWC");
  ExpectReinterpreted(RunOp(Reshape().SetArg("src_dims", std::vector<int64_t>{-1, 0, 1, 2}), Device::kCpu, in), in,
                      {Shape{1, 4, 6, 3}, Shape{1, 2, 5, 3}}, Layout());
  ExpectReinterpreted(RunOp(Reshape().SetArg("rel_shape", std::vector<double>{1, -1}).SetArg("src_dims", std::vector<int64_t>{2, 0}),
                            Device::kCpu, in),
                      in, {Shape{3, 24}, Shape{3, 10}}, Layout());
  const TensorListCPU half = RandomTyped({Shape{4, 6}}, DType::kFloat16, "HW");
  ExpectReinterpreted(RunOp(Reshape().SetArgInput("rel_shape", "r"), Device::kCpu, half,
                            {{"rel_shape", PerSampleLists<float>({{0.5f, 2.f}})}}),
                      half, {Shape{2, 12}}, "HW");
}

TEST(Reshape, Errors) {
  EXPECT_THAT(ConstructError(Reshape()),
              HasSubstr("op \"reshape\" (r): argument \"shape\": expected one of shape, rel_shape or src_dims"));
  EXPECT_THAT(ConstructError(Reshape().SetArg("shape", std::vector<int64_t>{2}).SetArg("rel_shape", std::vector<double>{1})),
              HasSubstr("argument \"rel_shape\": give shape or rel_shape, not both"));
  EXPECT_THAT(ConstructError(Reshape().SetArg("shape", std::vector<int64_t>{2}).SetArg("src_dims", std::vector<int64_t>{0})),
              HasSubstr("argument \"src_dims\": goes with rel_shape or alone, not with shape"));
  EXPECT_THAT(ConstructError(Reshape().SetArg("shape", std::vector<int64_t>{2, 3}).SetArg("layout", "HH")),
              HasSubstr("argument \"layout\": layout \"HH\": axis 'H' appears twice"));
  EXPECT_THAT(ConstructError(Reshape().SetArg("shape", std::vector<int64_t>{2, 3}).SetArg("layout", "HWC")),
              HasSubstr("argument \"layout\": \"HWC\" has 3 axes, the output 2"));
  const TensorListCPU in = RandomTyped({Shape{4, 4}, Shape{3, 5}}, DType::kUInt8, "HW");
  EXPECT_THAT(RunError(Reshape().SetArg("shape", std::vector<int64_t>{16}), in),
              HasSubstr("op \"reshape\" (r): sample 1: shape [16] has 16 elements, the input (3, 5) has 15"));
  EXPECT_THAT(RunError(Reshape().SetArgInput("shape", "s"), in, {{"shape", PerSampleLists<int64_t>({{16}, {2, 8}})}}),
              HasSubstr("sample 1: shape [2, 8] has 16 elements, the input (3, 5) has 15"));
  EXPECT_THAT(RunError(Reshape().SetArgInput("shape", "s").SetArg("layout", "X"), in,
                       {{"shape", PerSampleLists<int64_t>({{16}, {3, 5}})}}),
              HasSubstr("sample 1: argument \"layout\": \"X\" has 1 axes, the output shape (3, 5) 2"));
  EXPECT_THAT(RunError(Reshape().SetArg("rel_shape", std::vector<double>{1, 1, 1}), in),
              HasSubstr("sample 0: rel_shape entry 2 scales input dim 2, but the input (4, 4) has 2 dims"));
}

TEST(Squeeze, ByIndexAndByName) {
  const TensorListCPU in = RandomTyped({Shape{1, 5, 1}, Shape{1, 2, 1}}, DType::kFloat32, "FWC");
  ExpectReinterpreted(RunOp(Squeeze().SetArg("axes", std::vector<int64_t>{0, -1}), Device::kCpu, in), in,
                      {Shape{5}, Shape{2}}, "W");
  ExpectReinterpreted(RunOp(Squeeze().SetArg("axis_names", "C"), Device::kCpu, in), in, {Shape{1, 5}, Shape{1, 2}}, "FW");
  const TensorListCPU bare = RandomTyped({Shape{3, 1}}, DType::kBool, "");
  ExpectReinterpreted(RunOp(Squeeze().SetArg("axes", std::vector<int64_t>{1}), Device::kCpu, bare), bare, {Shape{3}}, Layout());
}

TEST(Squeeze, Errors) {
  EXPECT_THAT(ConstructError(Squeeze()), HasSubstr("op \"squeeze\" (sq): argument \"axes\": expected axes or axis_names (one of them), got neither"));
  EXPECT_THAT(ConstructError(Squeeze().SetArg("axes", std::vector<int64_t>{0}).SetArg("axis_names", "C")),
              HasSubstr("got both"));
  const TensorListCPU in = RandomTyped({Shape{1, 5}, Shape{2, 5}}, DType::kUInt8, "HW");
  EXPECT_THAT(RunError(Squeeze().SetArg("axes", std::vector<int64_t>{0}), in),
              HasSubstr("op \"squeeze\" (sq): sample 1: axis 0 of shape (2, 5) has extent 2, expected 1 to squeeze it"));
  EXPECT_THAT(RunError(Squeeze().SetArg("axes", std::vector<int64_t>{2}), in),
              HasSubstr("sample 0: argument \"axes\": axis 2 is out of range for 2 dims (expected -2..1)"));
  EXPECT_THAT(RunError(Squeeze().SetArg("axes", std::vector<int64_t>{0, -2}), in),
              HasSubstr("argument \"axes\": axis 0 is listed twice in [0, -2]"));
  EXPECT_THAT(RunError(Squeeze().SetArg("axis_names", "C"), in),
              HasSubstr("op \"squeeze\" (sq): argument \"axis_names\": axis 'C' is not in the input layout \"HW\""));
  EXPECT_THAT(RunError(Squeeze().SetArg("axis_names", "H"), RandomTyped({Shape{1, 5}}, DType::kUInt8, "")),
              HasSubstr("argument \"axis_names\": \"H\" needs an input layout; input 0 has none (use axes)"));
}

TEST(ExpandDims, InsertsAxesAndNames) {
  const TensorListCPU in = RandomTyped({Shape{4, 5}, Shape{2, 3}}, DType::kInt64, "HW");
  ExpectReinterpreted(RunOp(ExpandDims().SetArg("axes", std::vector<int64_t>{0, 3}).SetArg("new_axis_names", "FC"),
                            Device::kCpu, in),
                      in, {Shape{1, 4, 5, 1}, Shape{1, 2, 3, 1}}, "FHWC");
  ExpectReinterpreted(RunOp(ExpandDims().SetArg("axes", std::vector<int64_t>{-1}), Device::kCpu, in), in,
                      {Shape{4, 5, 1}, Shape{2, 3, 1}}, Layout());
  const TensorListCPU scalars = RandomTyped({Shape{}, Shape{}}, DType::kInt32, "");
  ExpectReinterpreted(RunOp(ExpandDims().SetArg("axes", std::vector<int64_t>{0}).SetArg("new_axis_names", "N"), Device::kCpu,
                            scalars),
                      scalars, {Shape{1}, Shape{1}}, "N");
}

TEST(ExpandDims, Errors) {
  EXPECT_THAT(ConstructError(ExpandDims().SetArg("axes", std::vector<int64_t>{})),
              HasSubstr("op \"expand_dims\" (ex): argument \"axes\": expected at least one axis, got []"));
  EXPECT_THAT(ConstructError(ExpandDims().SetArg("axes", std::vector<int64_t>{0}).SetArg("new_axis_names", "AB")),
              HasSubstr("argument \"new_axis_names\": \"AB\" has 2 letters, expected one per axis (1)"));
  const TensorListCPU in = RandomTyped({Shape{4, 5}}, DType::kUInt8, "HW");
  EXPECT_THAT(RunError(ExpandDims().SetArg("axes", std::vector<int64_t>{3}), in),
              HasSubstr("sample 0: argument \"axes\": axis 3 is out of range for 3 dims (expected -3..2)"));
  EXPECT_THAT(RunError(ExpandDims().SetArg("axes", std::vector<int64_t>{0}).SetArg("new_axis_names", "H"), in),
              HasSubstr("argument \"new_axis_names\": layout \"HHW\": axis 'H' appears twice"));
  EXPECT_THAT(RunError(ExpandDims().SetArg("axes", std::vector<int64_t>{0}).SetArg("new_axis_names", "F"),
                       RandomTyped({Shape{4, 5}}, DType::kUInt8, "")),
              HasSubstr("argument \"new_axis_names\": \"F\" needs an input layout to insert into; input 0 has none"));
  const TensorListCPU deep = RandomTyped({Shape{1, 1, 1, 1, 1, 1, 1, 1}}, DType::kUInt8, "");
  EXPECT_THAT(RunError(ExpandDims().SetArg("axes", std::vector<int64_t>{0}), deep),
              HasSubstr("sample 0: the output would have 9 dims, at most 8 are supported"));
}

}  // namespace
}  // namespace conveyor::testing
