// DALI's type promotion table, written out in full here, and the result types of the operators
// and functions, through the compiler.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "operators/math/expr_compiler.h"
#include "operators/math/expr_types.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::ops {
namespace {

using ::conveyor::testing::ErrorText;
using ::testing::HasSubstr;

constexpr DType kOrder[] = {DType::kBool,  DType::kUInt8,   DType::kInt8,     DType::kUInt16,
                            DType::kInt16, DType::kInt32,   DType::kInt64,    DType::kFloat16,
                            DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// Row a, column b: PromoteTypes(a, b), in kOrder.
const char* const kTable[11][11] = {
    //  bool     uint8    int8     uint16   int16    int32    int64    f16        bf16        f32        f64
    {"bool", "uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"},
    {"uint8", "uint8", "int16", "uint16", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"},
    {"int8", "int16", "int8", "int32", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"},
    {"uint16", "uint16", "int32", "uint16", "int32", "int32", "int64", "float16", "bfloat16", "float32", "float64"},
    {"int16", "int16", "int16", "int32", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"},
    {"int32", "int32", "int32", "int32", "int32", "int32", "int64", "float16", "bfloat16", "float32", "float64"},
    {"int64", "int64", "int64", "int64", "int64", "int64", "int64", "float16", "bfloat16", "float32", "float64"},
    {"float16", "float16", "float16", "float16", "float16", "float16", "float16", "float16", "float32", "float32", "float64"},
    {"bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "float32", "bfloat16", "float32", "float64"},
    {"float32", "float32", "float32", "float32", "float32", "float32", "float32", "float32", "float32", "float32", "float64"},
    {"float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64"},
};

TEST(ExprTypes, PromotionTableAsDaliDocumentsIt) {
  for (int a = 0; a < 11; ++a) {
    for (int b = 0; b < 11; ++b) {
      EXPECT_EQ(DTypeName(PromoteTypes(kOrder[a], kOrder[b])), kTable[a][b])
          << DTypeName(kOrder[a]) << " with " << DTypeName(kOrder[b]);
    }
  }
}

// The output dtype `expr` compiles to with inputs a and b of the given dtypes.
DType ResultType(const std::string& expr, DType a, DType b = DType::kFloat32) {
  const ExprBindings bindings{{"a", "b"}, {"s0"}};
  const ExprTree tree = ParseExpression(expr);
  ResolveNames(tree, bindings);
  return CompileExpression(tree, bindings, {a, b}, std::nullopt).out_type;
}

TEST(ExprTypes, OperatorsAndFunctions) {
  EXPECT_EQ(ResultType("a + 1", DType::kUInt8), DType::kInt32);   // an int literal is int32
  EXPECT_EQ(ResultType("a * 0.5", DType::kUInt8), DType::kFloat32);  // a float literal float32
  EXPECT_EQ(ResultType("a * 0.5", DType::kFloat64), DType::kFloat64);
  EXPECT_EQ(ResultType("a + 3000000000", DType::kInt8), DType::kInt64);
  EXPECT_EQ(ResultType("a + b", DType::kUInt8, DType::kInt32), DType::kInt32);
  EXPECT_EQ(ResultType("a - b", DType::kUInt8, DType::kUInt8), DType::kUInt8);
  EXPECT_EQ(ResultType("a / b", DType::kInt32, DType::kInt32), DType::kFloat32);
  EXPECT_EQ(ResultType("a / b", DType::kFloat16, DType::kFloat16), DType::kFloat32);
  EXPECT_EQ(ResultType("a / b", DType::kInt64, DType::kFloat64), DType::kFloat64);
  EXPECT_EQ(ResultType("a // b", DType::kInt16, DType::kUInt8), DType::kInt16);
  EXPECT_EQ(ResultType("a % b", DType::kFloat16, DType::kInt8), DType::kFloat16);
  EXPECT_EQ(ResultType("a ** 2", DType::kInt16), DType::kInt32);
  EXPECT_EQ(ResultType("pow(a, b)", DType::kUInt8, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(ResultType("a < b", DType::kFloat64, DType::kInt8), DType::kBool);
  EXPECT_EQ(ResultType("a == b", DType::kBool, DType::kBool), DType::kBool);
  EXPECT_EQ(ResultType("-a", DType::kUInt16), DType::kUInt16);
  EXPECT_EQ(ResultType("abs(a)", DType::kBool), DType::kBool);
  EXPECT_EQ(ResultType("floor(a)", DType::kInt32), DType::kInt32);
  EXPECT_EQ(ResultType("round(a)", DType::kBFloat16), DType::kBFloat16);
  EXPECT_EQ(ResultType("sqrt(a)", DType::kInt64), DType::kFloat32);
  EXPECT_EQ(ResultType("exp(a)", DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(ResultType("log(a)", DType::kFloat64), DType::kFloat64);
  EXPECT_EQ(ResultType("a * s0", DType::kUInt8), DType::kFloat32);  // scalar arguments are float32
  EXPECT_EQ(ResultType("clamp(a, 0, 255)", DType::kUInt8), DType::kInt32);
  EXPECT_EQ(ResultType("clamp(a, 0.0, b)", DType::kInt8, DType::kFloat64), DType::kFloat64);
  EXPECT_EQ(ResultType("min(a, b)", DType::kBool, DType::kBool), DType::kBool);
  EXPECT_EQ(ResultType("a * b", DType::kBool, DType::kBool), DType::kBool);
  EXPECT_EQ(ResultType("where(a, b, 1)", DType::kFloat32, DType::kInt8), DType::kInt32);
  const ExprTree tree = ParseExpression("a + b");
  EXPECT_EQ(CompileExpression(tree, {{"a", "b"}, {}}, {DType::kUInt8, DType::kUInt8}, DType::kFloat16).out_type,
            DType::kFloat16);
}

std::string CompileError(const std::string& expr, DType a, DType b = DType::kFloat32) {
  return ErrorText([&] { ResultType(expr, a, b); });
}

TEST(ExprTypes, Errors) {
  EXPECT_THAT(CompileError("a + b", DType::kBool, DType::kBool),
              HasSubstr("at column 3 of \"a + b\": \"+\" of two bool operands; DALI allows only * (and min, max, "
                        "comparisons) between bools"));
  EXPECT_THAT(CompileError("1 + (a - b)", DType::kBool, DType::kBool), HasSubstr("at column 8 of \"1 + (a - b)\": \"-\" of two bool"));
  EXPECT_THAT(CompileError("pow(a, b)", DType::kBool, DType::kBool), HasSubstr("\"pow\" of two bool operands"));
  EXPECT_THAT(CompileError("a // b", DType::kBool, DType::kBool), HasSubstr("\"//\" of two bool operands"));
  EXPECT_THAT(CompileError("2 * -a", DType::kBool), HasSubstr("at column 5 of \"2 * -a\": unary \"-\" of a bool operand"));
  std::string long_sum = "a";
  for (int i = 0; i < 70; ++i) long_sum += " + a";
  EXPECT_THAT(CompileError(long_sum, DType::kFloat32),
              HasSubstr("the expression compiles to 141 instructions, at most 128"));
  std::string deep = "a";
  for (int i = 0; i < 20; ++i) deep = "a + (" + deep + ")";
  EXPECT_THAT(CompileError(deep, DType::kFloat32), HasSubstr("the expression needs 21 values at once, at most 16"));
  std::string consts = "a";
  for (int i = 0; i < 33; ++i) consts += " + " + std::to_string(i);
  EXPECT_THAT(CompileError(consts, DType::kFloat32), HasSubstr("the expression has more than 32 numbers"));
}

TEST(ExprTypes, NameErrors) {
  const ExprBindings bindings{{"images", "mask"}, {"s0", "s1"}};
  const auto resolve = [&](const std::string& expr) {
    return ErrorText([&] { ResolveNames(ParseExpression(expr), bindings); });
  };
  EXPECT_THAT(resolve("imgaes * mask"),
              HasSubstr("at column 1 of \"imgaes * mask\": unknown name \"imgaes\"; expected an input (images, mask) or a "
                        "scalar argument (s0, s1); did you mean \"images\"?"));
  EXPECT_THAT(resolve("sqr(images)"), HasSubstr("at column 1 of \"sqr(images)\": unknown function \"sqr\"; expected one of abs, "
                                                "ceil, clamp, exp, floor, log, max, min, pow, round, sqrt, where; did you mean \"sqrt\"?"));
  EXPECT_THAT(resolve("mask + clamp(images, 0)"), HasSubstr("at column 8 of \"mask + clamp(images, 0)\": clamp() takes 3 arguments, got 2"));
  EXPECT_THAT(resolve("exp(images, mask)"), HasSubstr("exp() takes 1 argument, got 2"));
  const ExprUse use = ResolveNames(ParseExpression("s1 * (mask + 1) * mask"), bindings);
  EXPECT_EQ(use.inputs, (std::vector<int>{0, 7}));
  EXPECT_EQ(use.scalars, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace conveyor::ops
