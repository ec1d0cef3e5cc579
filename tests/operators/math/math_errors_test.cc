// Every message op: math gives, with the node, the argument, the column of expr and the sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operators/math/math_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

TEST(MathErrors, SyntaxAndNamesAtConstruction) {
  EXPECT_THAT(ConstructError(Math("(x - ) * 2")),
              HasSubstr("op \"math\" (m): argument \"expr\": at column 6 of \"(x - ) * 2\": expected a number, a name or \"(\", got \")\""));
  EXPECT_THAT(ConstructError(Math("xx * 2")),
              HasSubstr("op \"math\" (m): argument \"expr\": at column 1 of \"xx * 2\": unknown name \"xx\"; expected an input (x) "
                        "or a scalar argument (s0, s1, s2, s3); did you mean \"x\"?"));
  EXPECT_THAT(ConstructError(Math("clip(x, 0, 1)")),
              HasSubstr("argument \"expr\": at column 1 of \"clip(x, 0, 1)\": unknown function \"clip\""));
  EXPECT_THAT(ConstructError(Math("min(x)")), HasSubstr("at column 1 of \"min(x)\": min() takes 2 arguments, got 1"));
  EXPECT_THAT(ConstructError(Math("x * s2")),
              HasSubstr("op \"math\" (m): argument \"expr\": at column 5 of \"x * s2\": uses s2, which is not set; give "
                        "argument \"s2\" a value or feed it per sample ($node)"));
  EXPECT_THAT(ConstructError(Math("2 * 3")),
              HasSubstr("op \"math\" (m): argument \"expr\": input 0 (\"x\") is not used by \"2 * 3\"; every input must appear "
                        "(input_names renames them)"));
  EXPECT_THAT(ConstructError(Math("2", {"s0"})),
              HasSubstr("op \"math\" (m): input 0 is named \"s0\", which is a scalar argument's name; name the inputs with "
                        "letters, digits and _ (input_names)"));
  EXPECT_THAT(ConstructError(Math("2", {"my-images"})), HasSubstr("input 0 is named \"my-images\", which expr cannot name"));
  EXPECT_THAT(ConstructError(Math("v", {"x"}).SetArg("input_names", std::vector<std::string>{"1v"})),
              HasSubstr("argument \"input_names\": input 0 is named \"1v\", which expr cannot name"));
  EXPECT_THAT(ConstructError(Math("v").SetArg("input_names", std::vector<std::string>{"v", "w"})),
              HasSubstr("op \"math\" (m): argument \"input_names\": expected one name per input (1), got 2"));
  EXPECT_THAT(ConstructError(Math("x").SetArg("dtype", "float8")),
              HasSubstr("argument \"dtype\": expected one of auto, bool, uint8"));
  EXPECT_THAT(ErrorText([] { RunMulti(Math("a", {"a", "b", "c", "d", "e", "f", "g", "h", "i"}), Device::kCpu, {}); }),
              HasSubstr("op \"math\" (m): expected at most 8 inputs, got 9"));
}

TEST(MathErrors, TypesWhenTheInputsArrive) {
  const TensorListCPU flags = TypedBatch({Shape{2}}, DType::kBool, {{1, 0}});
  EXPECT_THAT(RunMultiError(Math("a + b", {"a", "b"}), {flags, flags}),
              HasSubstr("op \"math\" (m): argument \"expr\": at column 3 of \"a + b\": \"+\" of two bool operands; DALI allows "
                        "only * (and min, max, comparisons) between bools"));
  EXPECT_THAT(RunError(Math("1 - -x"), flags), HasSubstr("argument \"expr\": at column 5 of \"1 - -x\": unary \"-\" of a bool operand"));
}

TEST(MathErrors, BroadcastNamesTheSampleTheInputsAndTheColumn) {
  const TensorListCPU a = RandomTyped({Shape{4, 5}, Shape{4, 5}}, DType::kFloat32, "");
  const TensorListCPU b = RandomTyped({Shape{1, 5}, Shape{3, 5}}, DType::kFloat32, "");
  EXPECT_THAT(RunMultiError(Math("a * (1 + b)", {"a", "b"}), {a, b}),
              HasSubstr("op \"math\" (m): sample 1: cannot broadcast input 1 \"b\" (column 10) of shape (3, 5) with shape (4, 5) "
                        "of the inputs before it: dim 0 is 3 here, 4 there"));
  EXPECT_THAT(RunMultiError(Math("a * b", {"a", "b"}), {a, RandomTyped({Shape{1}}, DType::kFloat32, "")}),
              HasSubstr("op \"math\" (m): input 1 \"b\" (column 5) has 1 samples, input 0 2"));
  const TensorListCPU c = RandomTyped({Shape{4, 5}, Shape{4, 2}}, DType::kFloat32, "");
  EXPECT_THAT(RunMultiError(Math("a + c", {"a", "c"}), {a, c}),
              HasSubstr("sample 1: cannot broadcast input 1 \"c\" (column 5) of shape (4, 2) with shape (4, 5) of the inputs before "
                        "it: dim 1 is 2 here, 5 there"));
}

}  // namespace
}  // namespace conveyor::testing
