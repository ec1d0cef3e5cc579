// The expression parser: precedence and associativity (trees written back as S-expressions),
// literals, and every syntax error with its column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "operators/math/expr_parser.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::ops {
namespace {

using ::conveyor::testing::ErrorText;
using ::testing::HasSubstr;

std::string Dump(const ExprTree& t, int i) {
  const ExprNode& n = t.at(i);
  switch (n.kind) {
    case ExprNode::Kind::kInt: return std::to_string(n.int_value);
    case ExprNode::Kind::kFloat: return "f" + n.text;
    case ExprNode::Kind::kName: return n.text;
    default: break;
  }
  std::string s = "(" + (n.kind == ExprNode::Kind::kUnary ? std::string("neg") : n.text);
  for (int a : n.args) s += " " + Dump(t, a);
  return s + ")";
}

std::string Parse(const std::string& text) {
  const ExprTree t = ParseExpression(text);
  return Dump(t, t.root);
}

std::string ParseError(const std::string& text) {
  return ErrorText([&] { ParseExpression(text); });
}

TEST(ExprParser, PrecedenceAndAssociativity) {
  EXPECT_EQ(Parse("(x - 0.5) * 2"), "(* (- x f0.5) 2)");
  EXPECT_EQ(Parse("a + b * c - d / e"), "(- (+ a (* b c)) (/ d e))");
  EXPECT_EQ(Parse("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(Parse("a // b % c * d"), "(* (% (// a b) c) d)");
  EXPECT_EQ(Parse("-a ** 2"), "(neg (** a 2))");
  EXPECT_EQ(Parse("a ** b ** c"), "(** a (** b c))");
  EXPECT_EQ(Parse("a ** -b"), "(** a (neg b))");
  EXPECT_EQ(Parse("--a"), "(neg (neg a))");
  EXPECT_EQ(Parse("+a"), "a");
  EXPECT_EQ(Parse("a + b < c * 2"), "(< (+ a b) (* c 2))");
  EXPECT_EQ(Parse("a>=b"), "(>= a b)");
  EXPECT_EQ(Parse("clamp(a * b + 3, 0, 255)"), "(clamp (+ (* a b) 3) 0 255)");
  EXPECT_EQ(Parse("where(x > 0, x, -x)"), "(where (> x 0) x (neg x))");
  EXPECT_EQ(Parse("  max ( a , min(b,c) )  "), "(max a (min b c))");
}

TEST(ExprParser, Literals) {
  const ExprTree t = ParseExpression("12 + 3.5e2 + .25 + 7. + 1E-3 + 9223372036854775807");
  std::vector<const ExprNode*> numbers;
  for (const ExprNode& n : t.nodes) {
    if (n.kind == ExprNode::Kind::kInt || n.kind == ExprNode::Kind::kFloat) numbers.push_back(&n);
  }
  ASSERT_EQ(numbers.size(), 6u);
  EXPECT_EQ(numbers[0]->kind, ExprNode::Kind::kInt);
  EXPECT_EQ(numbers[0]->int_value, 12);
  EXPECT_EQ(numbers[1]->float_value, 350.0);
  EXPECT_EQ(numbers[2]->float_value, 0.25);
  EXPECT_EQ(numbers[3]->kind, ExprNode::Kind::kFloat);
  EXPECT_EQ(numbers[3]->float_value, 7.0);
  EXPECT_EQ(numbers[4]->float_value, 1e-3);
  EXPECT_EQ(numbers[5]->int_value, INT64_MAX);
  EXPECT_EQ(numbers[1]->column, 6);
}

TEST(ExprParser, ColumnsPointAtTheToken) {
  const ExprTree t = ParseExpression("a *  (b - c)");
  EXPECT_EQ(t.at(t.root).column, 3);   // "*"
  EXPECT_EQ(t.at(t.at(t.root).args[1]).column, 9);  // "-"
}

TEST(ExprParser, Errors) {
  EXPECT_THAT(ParseError(""), HasSubstr("at column 1 of \"\": the expression is empty"));
  EXPECT_THAT(ParseError("   "), HasSubstr("at column 4 of \"   \": the expression is empty"));
  EXPECT_THAT(ParseError("(x - ) * 2"), HasSubstr("at column 6 of \"(x - ) * 2\": expected a number, a name or \"(\", got \")\""));
  EXPECT_THAT(ParseError("x +"), HasSubstr("at column 4 of \"x +\": expected a number, a name or \"(\", got the end of the expression"));
  EXPECT_THAT(ParseError("(x + 1"), HasSubstr("at column 7 of \"(x + 1\": expected \")\" to close the \"(\" at column 1, got the end of the expression"));
  EXPECT_THAT(ParseError("x y"), HasSubstr("at column 3 of \"x y\": expected an operator or the end of the expression, got \"y\""));
  EXPECT_THAT(ParseError("x & 1"), HasSubstr("at column 3 of \"x & 1\": unexpected character '&'; expected a number, a name, ( ) , or one of"));
  EXPECT_THAT(ParseError("a < b < c"), HasSubstr("at column 7 of \"a < b < c\": comparisons do not chain; compare two values at a time"));
  EXPECT_THAT(ParseError("1e+"), HasSubstr("at column 1 of \"1e+\": number \"1e+\": expected digits after the exponent"));
  EXPECT_THAT(ParseError("2x"), HasSubstr("at column 2 of \"2x\": unexpected 'x' after the number \"2\""));
  EXPECT_THAT(ParseError("99999999999999999999"), HasSubstr("at column 1 of \"99999999999999999999\": the integer 99999999999999999999 does not fit int64"));
  EXPECT_THAT(ParseError("1e999"), HasSubstr("at column 1 of \"1e999\": the number 1e999 is out of range"));
  EXPECT_THAT(ParseError("min()"), HasSubstr("at column 5 of \"min()\": min(): expected an argument, got \")\""));
  EXPECT_THAT(ParseError("min(a b)"), HasSubstr("at column 7 of \"min(a b)\": expected \",\" or \")\" in the arguments of min(), got \"b\""));
  EXPECT_THAT(ParseError("a = b"), HasSubstr("unexpected character '='"));
}

TEST(ExprParser, PathologicalInputIsAnErrorNotACrash) {
  EXPECT_THAT(ParseError(std::string(100, '(') + "x" + std::string(100, ')')),
              HasSubstr("the expression nests deeper than 64 levels"));
  EXPECT_THAT(ParseError(std::string(100, '-') + "x"), HasSubstr("the expression nests deeper than 64 levels"));
  std::string sum = "x";
  for (int i = 0; i < 200; ++i) sum += " + x";
  EXPECT_THAT(ParseError(sum), HasSubstr("the expression has more than 256 numbers, names and operators"));
}

}  // namespace
}  // namespace conveyor::ops
