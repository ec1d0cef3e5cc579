// cat and stack on the CPU against an index-by-index reference, layouts, and every error message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operators/tensor/tensor_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Join(const std::string& op, int inputs) {
  OpSpec spec(op, op == "cat" ? "c" : "st");
  for (int k = 0; k < inputs; ++k) spec.AddInput("x" + std::to_string(k));
  return spec.AddOutput("y");
}

std::vector<int64_t> Coords(int64_t j, const Shape& shape) {
  std::vector<int64_t> c(static_cast<size_t>(shape.ndim()));
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    c[static_cast<size_t>(d)] = j % shape[d];
    j /= shape[d];
  }
  return c;
}

int64_t Flat(const std::vector<int64_t>& c, const Shape& shape) {
  int64_t j = 0;
  for (int d = 0; d < shape.ndim(); ++d) j = j * shape[d] + c[static_cast<size_t>(d)];
  return j;
}

// out[c] = in_k[c with c[axis] - (extents of inputs before k)].
void ExpectConcatenated(const TensorListCPU& out, const std::vector<TensorListCPU>& ins, int axis) {
  for (int s = 0; s < out.num_samples(); ++s) {
    for (int64_t j = 0; j < out.shape(s).num_elements(); ++j) {
      std::vector<int64_t> c = Coords(j, out.shape(s));
      size_t k = 0;
      while (c[static_cast<size_t>(axis)] >= ins[k].shape(s)[axis]) c[static_cast<size_t>(axis)] -= ins[k++].shape(s)[axis];
      ASSERT_EQ(Element(out, s, j), Element(ins[k], s, Flat(c, ins[k].shape(s)))) << "sample " << s << " element " << j;
    }
  }
}

// out[c] = in_{c[axis]}[c without axis].
void ExpectStacked(const TensorListCPU& out, const std::vector<TensorListCPU>& ins, int axis) {
  for (int s = 0; s < out.num_samples(); ++s) {
    ASSERT_EQ(out.shape(s)[axis], static_cast<int64_t>(ins.size()));
    for (int64_t j = 0; j < out.shape(s).num_elements(); ++j) {
      std::vector<int64_t> c = Coords(j, out.shape(s));
      const size_t k = static_cast<size_t>(c[static_cast<size_t>(axis)]);
      c.erase(c.begin() + axis);
      ASSERT_EQ(Element(out, s, j), Element(ins[k], s, Flat(c, ins[k].shape(s)))) << "sample " << s << " element " << j;
    }
  }
}

TEST(Cat, MatchesTheIndexReferenceOnEveryAxis) {
  for (DType type : {DType::kUInt8, DType::kInt16, DType::kFloat32, DType::kFloat64}) {
    for (int axis : {0, 1, 2}) {
      std::vector<TensorListCPU> ins;
      for (int k = 0; k < 3; ++k) {
        std::vector<Shape> shapes = {Shape{3, 4, 2}, Shape{1, 5, 3}, Shape{2, 0, 1}};
        for (Shape& s : shapes) s[axis] += k;  // each input its own extent on the axis
        ins.push_back(RandomTyped(shapes, type, "HWC"));
      }
      const TensorListCPU out = RunMulti(Join("cat", 3).SetArg("axis", axis), Device::kCpu, ins);
      EXPECT_EQ(out.layout(), Layout("HWC"));
      EXPECT_EQ(out.dtype(), type);
      ExpectConcatenated(out, ins, axis);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(Cat, NegativeAxisAxisNameAndOneInput) {
  std::vector<TensorListCPU> ins = {RandomTyped({Shape{2, 3}}, DType::kInt32, "HW"), RandomTyped({Shape{2, 5}}, DType::kInt32, "")};
  const TensorListCPU by_index = RunMulti(Join("cat", 2).SetArg("axis", -1), Device::kCpu, ins);
  ExpectConcatenated(by_index, ins, 1);
  EXPECT_EQ(by_index.layout(), Layout("HW"));  // the one layout the inputs have
  ExpectSameBytes(RunMulti(Join("cat", 2).SetArg("axis_name", "W"), Device::kCpu, ins), by_index, "axis_name W");
  const std::vector<TensorListCPU> one = {RandomTyped({Shape{4, 1}}, DType::kBool, "")};
  ExpectSameBytes(RunMulti(Join("cat", 1), Device::kCpu, one), one[0], "one input");
}

TEST(Cat, ThroughTheHarnessWithTheSchemasInputs) {
  OpHarness h(Join("cat", 2).SetArg("axis", 1), Device::kCpu);
  const TensorListCPU a = RandomTyped({Shape{2, 3}, Shape{1, 1}}, DType::kFloat32, "HW");
  const TensorListCPU b = RandomTyped({Shape{2, 2}, Shape{1, 4}}, DType::kFloat32, "HW");
  h.SetInput(0, a);
  h.SetInput(1, b);
  h.Run();
  ExpectConcatenated(h.OutputToHost(0), {a, b}, 1);
}

// With core's OpSchema::RepeatLastInput (docs/operators_tensor.md, "Repeated inputs") specs and
// YAML give any number of inputs; before it, the schema declares two.
TEST(Cat, AnyNumberOfInputsThroughTheSchema) {
  std::vector<TensorListCPU> ins;
  OpHarness h(Join("cat", 5), Device::kCpu);
  for (int k = 0; k < 5; ++k) {
    ins.push_back(RandomTyped({Shape{k + 1, 2}}, DType::kUInt16, "HW"));
    h.SetInput(k, ins.back());
  }
  h.Run();
  ExpectConcatenated(h.OutputToHost(0), ins, 0);
  EXPECT_THAT(ConstructError(Join("cat", 0)), HasSubstr("expected 1 to 64 inputs (input repeats), got 0"));
}

TEST(Stack, MatchesTheIndexReferenceOnEveryAxis) {
  for (DType type : {DType::kBool, DType::kInt8, DType::kFloat16, DType::kInt64}) {
    for (int axis : {0, 1, 2, -1}) {
      const std::vector<Shape> shapes = {Shape{3, 4}, Shape{1, 7}, Shape{0, 2}};
      std::vector<TensorListCPU> ins;
      for (int k = 0; k < 4; ++k) ins.push_back(RandomTyped(shapes, type, "HW"));
      const TensorListCPU out = RunMulti(Join("stack", 4).SetArg("axis", axis).SetArg("axis_name", "N"), Device::kCpu, ins);
      const int a = axis < 0 ? axis + 3 : axis;
      EXPECT_EQ(out.layout(), Layout(a == 0 ? "NHW" : a == 1 ? "HNW" : "HWN"));
      ExpectStacked(out, ins, a);
      if (::testing::Test::HasFailure()) return;
    }
  }
  const std::vector<TensorListCPU> scalars = {RandomTyped({Shape{}}, DType::kFloat32, ""), RandomTyped({Shape{}}, DType::kFloat32, "")};
  const TensorListCPU pair = RunMulti(Join("stack", 2), Device::kCpu, scalars);
  EXPECT_EQ(pair.shape(0), Shape{2});
  EXPECT_EQ(pair.layout(), Layout());
  ExpectStacked(pair, scalars, 0);
}

TEST(CatStack, Errors) {
  const TensorListCPU f = RandomTyped({Shape{2, 3}, Shape{2, 3}}, DType::kFloat32, "HW");
  EXPECT_THAT(RunMultiError(Join("cat", 2), {f, RandomTyped({Shape{2, 3}, Shape{2, 3}}, DType::kInt32, "HW")}),
              HasSubstr("op \"cat\" (c): input 1 has dtype int32, input 0 float32; expected one dtype"));
  EXPECT_THAT(RunMultiError(Join("cat", 2), {f, RandomTyped({Shape{2, 3}}, DType::kFloat32, "HW")}),
              HasSubstr("op \"cat\" (c): input 1 has 1 samples, input 0 2"));
  EXPECT_THAT(RunMultiError(Join("cat", 2), {f, RandomTyped({Shape{2, 3}, Shape{2, 3}}, DType::kFloat32, "WH")}),
              HasSubstr("op \"cat\" (c): input 1 has layout WH, input 0 HW; expected one layout"));
  EXPECT_THAT(RunMultiError(Join("cat", 2).SetArg("axis", 1), {f, RandomTyped({Shape{2, 3}, Shape{3, 3}}, DType::kFloat32, "HW")}),
              HasSubstr("op \"cat\" (c): sample 1: input 1 has shape (3, 3), input 0 (2, 3); expected the same extents except on axis 1"));
  EXPECT_THAT(RunMultiError(Join("cat", 2).SetArg("axis", 2), {f, f}),
              HasSubstr("sample 0: argument \"axis\": axis 2 is out of range for 2 dims (expected -2..1)"));
  EXPECT_THAT(RunMultiError(Join("cat", 2).SetArg("axis_name", "C"), {f, f}),
              HasSubstr("sample 0: argument \"axis_name\": axis 'C' is not in the input layout \"HW\""));
  const TensorListCPU bare = RandomTyped({Shape{2, 3}}, DType::kFloat32, "");
  EXPECT_THAT(RunMultiError(Join("cat", 2).SetArg("axis_name", "W"), {bare, bare}),
              HasSubstr("argument \"axis_name\": \"W\" needs an input layout; no input has one"));
  EXPECT_THAT(ConstructError(Join("cat", 2).SetArg("axis", 1).SetArg("axis_name", "W")),
              HasSubstr("op \"cat\" (c): argument \"axis_name\": give axis or axis_name, not both"));
  EXPECT_THAT(RunMultiError(Join("stack", 2), {f, RandomTyped({Shape{2, 3}, Shape{3, 2}}, DType::kFloat32, "HW")}),
              HasSubstr("op \"stack\" (st): sample 1: input 1 has shape (3, 2), input 0 (2, 3); stacked inputs must have the same shape"));
  EXPECT_THAT(RunMultiError(Join("stack", 2).SetArg("axis", 3), {f, f}),
              HasSubstr("sample 0: argument \"axis\": axis 3 is out of range for 3 dims (expected -3..2)"));
  EXPECT_THAT(ConstructError(Join("stack", 2).SetArg("axis_name", "NM")),
              HasSubstr("op \"stack\" (st): argument \"axis_name\": expected one letter, got \"NM\""));
  EXPECT_THAT(RunMultiError(Join("stack", 2).SetArg("axis_name", "N"), {bare, bare}),
              HasSubstr("op \"stack\" (st): argument \"axis_name\": \"N\" needs an input layout to insert into; no input has one"));
  EXPECT_THAT(RunMultiError(Join("stack", 2).SetArg("axis_name", "H"), {f, f}),
              HasSubstr("op \"stack\" (st): argument \"axis_name\": layout \"HHW\": axis 'H' appears twice"));
}

}  // namespace
}  // namespace conveyor::testing
