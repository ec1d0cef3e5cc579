// The shape and layout rules of the tensor operators (operators/tensor/tensor_shapes.h), each
// with its error text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "operators/tensor/tensor_shapes.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::ops {
namespace {

using ::conveyor::testing::ErrorText;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TensorShapes, NormalizeAxis) {
  EXPECT_EQ(NormalizeAxis(-1, 3, "a"), 2);
  EXPECT_EQ(NormalizeAxis(0, 3, "a"), 0);
  EXPECT_EQ(NormalizeAxis(-3, 3, "a"), 0);
  EXPECT_THAT(ErrorText([] { NormalizeAxis(3, 3, "argument \"axis\""); }),
              HasSubstr("argument \"axis\": axis 3 is out of range for 3 dims (expected -3..2)"));
  EXPECT_THAT(ErrorText([] { NormalizeAxis(-4, 3, "a"); }), HasSubstr("axis -4 is out of range"));
  EXPECT_THAT(NormalizeAxes({-1, 0}, 3, "a"), ElementsAre(0, 2));
  EXPECT_THAT(ErrorText([] { NormalizeAxes({2, -1}, 3, "argument \"axes\""); }),
              HasSubstr("argument \"axes\": axis 2 is listed twice in [2, -1]"));
  EXPECT_THAT(AxesOfNames("CH", "HWC", "a"), ElementsAre(0, 2));
  EXPECT_THAT(ErrorText([] { AxesOfNames("X", "HWC", "argument \"axis_names\""); }),
              HasSubstr("argument \"axis_names\": axis 'X' is not in the input layout \"HWC\""));
}

TEST(TensorShapes, InferExtents) {
  EXPECT_EQ(InferExtents(Shape{4, 6}, {3, 8}), (Shape{3, 8}));
  EXPECT_EQ(InferExtents(Shape{4, 6}, {-1}), (Shape{24}));
  EXPECT_EQ(InferExtents(Shape{4, 6}, {2, -1, 3}), (Shape{2, 4, 3}));
  EXPECT_EQ(InferExtents(Shape{0, 6}, {-1, 3}), (Shape{0, 3}));
  EXPECT_EQ(InferExtents(Shape{0, 6}, {0, -1}), (Shape{0, 0}));
  EXPECT_EQ(InferExtents(Shape{}, {1, 1}), (Shape{1, 1}));
  EXPECT_THAT(ErrorText([] { InferExtents(Shape{4, 4}, {3, 5}); }),
              HasSubstr("shape [3, 5] has 15 elements, the input (4, 4) has 16"));
  EXPECT_THAT(ErrorText([] { InferExtents(Shape{4, 4}, {-1, 5}); }),
              HasSubstr("shape [-1, 5]: no extent for -1 gives the input's 16 elements (input shape (4, 4))"));
  EXPECT_THAT(ErrorText([] { InferExtents(Shape{4, 4}, {-1, -1}); }),
              HasSubstr("shape [-1, -1]: expected extents >= 0 and at most one -1"));
  EXPECT_THAT(ErrorText([] { InferExtents(Shape{4, 4}, {-2, 8}); }), HasSubstr("expected extents >= 0"));
  EXPECT_THAT(ErrorText([] { InferExtents(Shape{4, 4}, {0, -1}); }), HasSubstr("no extent for -1"));
  EXPECT_THAT(ErrorText([] { InferExtents(Shape{4}, {int64_t{1} << 40, int64_t{1} << 40}); }),
              HasSubstr("shape [1099511627776, 1099511627776] has more elements than an int64 counts"));
  EXPECT_THAT(ErrorText([] { InferExtents(Shape{1}, {1, 1, 1, 1, 1, 1, 1, 1, 1}); }),
              HasSubstr("the output would have 9 dims, at most 8 are supported"));
}

TEST(TensorShapes, RelativeAndSourceDims) {
  EXPECT_EQ(RelativeExtents(Shape{10, 20, 3}, {0.5, 2.0, 1.0}, {}), (std::vector<int64_t>{5, 40, 3}));
  EXPECT_EQ(RelativeExtents(Shape{10, 20, 3}, {1.0, -1.0}, {}), (std::vector<int64_t>{10, -1}));
  EXPECT_EQ(RelativeExtents(Shape{10, 20, 3}, {1.0, 1.0}, {2, 0}), (std::vector<int64_t>{3, 10}));
  EXPECT_EQ(RelativeExtents(Shape{3}, {0.5}, {}), (std::vector<int64_t>{2}));  // 1.5 rounds away from 0
  EXPECT_THAT(ErrorText([] { RelativeExtents(Shape{10, 20}, {1.0, 1.0, 1.0}, {}); }),
              HasSubstr("rel_shape entry 2 scales input dim 2, but the input (10, 20) has 2 dims"));
  EXPECT_THAT(ErrorText([] { RelativeExtents(Shape{10, 20}, {1.0}, {0, 1}); }),
              HasSubstr("rel_shape has 1 entries, src_dims 2; expected one source dim per entry"));
  EXPECT_EQ(SourceDimExtents(Shape{4, 5, 6}, {2, -1, 0, 1}), (std::vector<int64_t>{6, 1, 4, 5}));
  EXPECT_THAT(ErrorText([] { SourceDimExtents(Shape{4, 5}, {2}); }),
              HasSubstr("src_dims [2]: dim 2 is not in the input (4, 5) (expected -1 or 0..1)"));
}

TEST(TensorShapes, SqueezeExpandAndLayouts) {
  EXPECT_EQ(SqueezedShape(Shape{1, 4, 1, 5}, {0, 2}), (Shape{4, 5}));
  EXPECT_EQ(SqueezedShape(Shape{1}, {0}), Shape{});
  EXPECT_THAT(ErrorText([] { SqueezedShape(Shape{1, 4}, {1}); }),
              HasSubstr("axis 1 of shape (1, 4) has extent 4, expected 1 to squeeze it"));
  EXPECT_EQ(ExpandedShape(Shape{4, 5}, {0, 3}), (Shape{1, 4, 5, 1}));
  EXPECT_EQ(ExpandedShape(Shape{}, {0}), (Shape{1}));
  EXPECT_EQ(LayoutWithout("HWC", {2}), "HW");
  EXPECT_EQ(LayoutWithout("", {0}), "");
  EXPECT_EQ(LayoutWith("HW", {0, 3}, "FC"), "FHWC");
  EXPECT_EQ(LayoutWith("", {0}, "C"), "C");
}

TEST(TensorShapes, ConcatenateAndStack) {
  EXPECT_EQ(ConcatenatedShape({Shape{2, 3}, Shape{2, 5}, Shape{2, 0}}, 1), (Shape{2, 8}));
  EXPECT_EQ(ConcatenatedShape({Shape{2, 3}, Shape{4, 3}}, 0), (Shape{6, 3}));
  EXPECT_THAT(ErrorText([] { ConcatenatedShape({Shape{2, 3}, Shape{3, 3}}, 1); }),
              HasSubstr("input 1 has shape (3, 3), input 0 (2, 3); expected the same extents except on axis 1"));
  EXPECT_THAT(ErrorText([] { ConcatenatedShape({Shape{2, 3}, Shape{2, 3, 1}}, 0); }), HasSubstr("input 1 has shape (2, 3, 1)"));
  EXPECT_EQ(StackedShape({Shape{2, 3}, Shape{2, 3}, Shape{2, 3}}, 1), (Shape{2, 3, 3}));
  EXPECT_EQ(StackedShape({Shape{2, 3}}, 2), (Shape{2, 3, 1}));
  EXPECT_THAT(ErrorText([] { StackedShape({Shape{2, 3}, Shape{3, 2}}, 0); }),
              HasSubstr("input 1 has shape (3, 2), input 0 (2, 3); stacked inputs must have the same shape"));
}

}  // namespace
}  // namespace conveyor::ops
