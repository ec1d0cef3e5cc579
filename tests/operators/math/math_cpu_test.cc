// op: math on the CPU: values against references computed here (per dtype pair, with DALI's
// promotion), integer and float semantics, broadcasting, per-sample scalars, the output dtype.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "operators/math/expr_types.h"
#include "tests/operators/math/math_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAreArray;

// a op b in the promoted type, computed independently: int64 then wrapped, float32 (then rounded
// to a half type), or float64.
double Reference(char op, double a, double b, DType type) {
  if (!IsFloat(type)) {
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    const int64_t r = op == '+' ? static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y))
                      : op == '-' ? static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y))
                                  : static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
    return Wrapped(r, type);
  }
  if (type == DType::kFloat64) return op == '+' ? a + b : op == '-' ? a - b : a * b;
  const float x = static_cast<float>(a), y = static_cast<float>(b);
  return StoredFloat(op == '+' ? x + y : op == '-' ? x - y : x * y, type);
}

TEST(MathCpu, AddSubMulForEveryDTypePair) {
  const std::vector<Shape> shapes = {Shape{5, 3}, Shape{1, 1}, Shape{0, 2}, Shape{17}};
  for (DType ta : kAllDTypes) {
    for (DType tb : kAllDTypes) {
      const TensorListCPU a = RandomTyped(shapes, ta, "");
      const TensorListCPU b = RandomTyped(shapes, tb, "");
      const DType type = ops::PromoteTypes(ta, tb);
      for (char op : {'+', '-', '*'}) {
        if (ta == DType::kBool && tb == DType::kBool && op != '*') continue;  // an error (MathErrors)
        const TensorListCPU out = RunMulti(Math(std::string("a ") + op + " b", {"a", "b"}), Device::kCpu, {a, b});
        ASSERT_EQ(out.dtype(), type) << DTypeName(ta) << " " << op << " " << DTypeName(tb);
        ASSERT_EQ(out.shapes(), shapes);
        for (int s = 0; s < out.num_samples(); ++s) {
          for (int64_t j = 0; j < out.shape(s).num_elements(); ++j) {
            ASSERT_EQ(Element(out, s, j), Reference(op, Element(a, s, j), Element(b, s, j), type))
                << DTypeName(ta) << " " << op << " " << DTypeName(tb) << " sample " << s << " element " << j;
          }
        }
      }
    }
  }
}

std::vector<double> Eval(const std::string& expr, DType type, const std::vector<double>& x) {
  const TensorListCPU in = TypedBatch({Shape{static_cast<int64_t>(x.size())}}, type, {x});
  return Elements(RunOp(Math(expr), Device::kCpu, in), 0);
}

TEST(MathCpu, IntegerSemantics) {
  // Floor division and a modulo with the divisor's sign (Python); by zero: 0.
  EXPECT_THAT(Eval("x // 3", DType::kInt32, {7, -7, 6, -6, 0}), ElementsAreArray({2., -3., 2., -2., 0.}));
  EXPECT_THAT(Eval("x % 3", DType::kInt32, {7, -7, 6, -6}), ElementsAreArray({1., 2., 0., 0.}));
  EXPECT_THAT(Eval("x % -3", DType::kInt32, {7, -7}), ElementsAreArray({-2., -1.}));
  EXPECT_THAT(Eval("x // 0", DType::kInt16, {5, -5}), ElementsAreArray({0., 0.}));
  EXPECT_THAT(Eval("x % 0", DType::kInt16, {5, -5}), ElementsAreArray({0., 0.}));
  EXPECT_THAT(Eval("x // -1", DType::kInt64, {static_cast<double>(INT64_MIN)}),
              ElementsAreArray({static_cast<double>(INT64_MIN)}));  // wraps, no trap
  // uint8 stays uint8 and wraps; the int32 literal makes int32.
  EXPECT_THAT(Eval("x - x - x", DType::kUInt8, {1, 200}), ElementsAreArray({255., 56.}));
  EXPECT_THAT(Eval("x * 2", DType::kUInt8, {200}), ElementsAreArray({400.}));
  EXPECT_THAT(Eval("-x", DType::kUInt8, {1, 0}), ElementsAreArray({255., 0.}));
  EXPECT_THAT(Eval("abs(x)", DType::kInt8, {-128, -5, 7}), ElementsAreArray({-128., 5., 7.}));
  EXPECT_THAT(Eval("x ** 3", DType::kInt32, {2, -3, 1625}), ElementsAreArray({8., -27., static_cast<double>(static_cast<int32_t>(1625LL * 1625 * 1625))}));
  EXPECT_THAT(Eval("x ** -1", DType::kInt32, {1, -1, 2, 0}), ElementsAreArray({1., -1., 0., 0.}));
  EXPECT_THAT(Eval("x ** -2", DType::kInt32, {-1}), ElementsAreArray({1.}));
  EXPECT_THAT(Eval("floor(x) + ceil(x) + round(x)", DType::kInt32, {5, -5}), ElementsAreArray({15., -15.}));
  EXPECT_THAT(Eval("min(x, 3) + max(x, 3)", DType::kInt32, {1, 9}), ElementsAreArray({4., 12.}));
  EXPECT_THAT(Eval("x / 2", DType::kInt32, {7}), ElementsAreArray({3.5}));  // true division: float32
}

TEST(MathCpu, FloatSemantics) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(Eval("x // 2", DType::kFloat32, {7, -7, 7.5}), ElementsAreArray({3., -4., 3.}));
  EXPECT_THAT(Eval("x % 3", DType::kFloat64, {7.5, -7.5, 6}), ElementsAreArray({1.5, 1.5, 0.}));
  EXPECT_THAT(Eval("x % -3", DType::kFloat64, {7.5}), ElementsAreArray({-1.5}));
  EXPECT_THAT(Eval("round(x)", DType::kFloat32, {0.5, 1.5, 2.5, -0.5, -1.7}), ElementsAreArray({0., 2., 2., -0., -2.}));
  EXPECT_THAT(Eval("floor(x) * 10 + ceil(x)", DType::kFloat64, {1.25, -1.25}), ElementsAreArray({12., -21.}));
  EXPECT_THAT(Eval("sqrt(x)", DType::kInt32, {16, 2}), ElementsAreArray({4., static_cast<double>(std::sqrt(2.f))}));
  EXPECT_THAT(Eval("abs(x)", DType::kFloat16, {-2.5}), ElementsAreArray({2.5}));
  const std::vector<double> m = Eval("min(x, 1)", DType::kFloat32, {0, 2, nan});
  EXPECT_EQ(m[0], 0);
  EXPECT_EQ(m[1], 1);
  EXPECT_TRUE(std::isnan(m[2]));  // NaN in, NaN out
  EXPECT_TRUE(std::isnan(Eval("max(1, x)", DType::kFloat64, {nan})[0]));
  EXPECT_THAT(Eval("x / 0", DType::kFloat32, {1, -1}),
              ElementsAreArray({std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}));
  // Transcendentals: the C library's, within a float32 ulp or two of the double result.
  const std::vector<double> e = Eval("exp(x) + log(x + 10) + pow(x, 1.5)", DType::kFloat32, {0.5, 3});
  EXPECT_NEAR(e[0], std::exp(0.5) + std::log(10.5) + std::pow(0.5, 1.5), 1e-5);
  EXPECT_NEAR(e[1], std::exp(3.0) + std::log(13.0) + std::pow(3.0, 1.5), 1e-4);
  // A float literal is float32 (DALI): float64 * 0.1 multiplies by float32(0.1).
  EXPECT_THAT(Eval("x * 0.1", DType::kFloat64, {3}), ElementsAreArray({3 * static_cast<double>(0.1f)}));
  // float16 intermediates stay float32 until the store.
  const float h = HalfBitsToFloat(FloatToHalfBits(0.1f));
  EXPECT_THAT(Eval("x * 3 - x", DType::kFloat16, {0.1}), ElementsAreArray({StoredFloat(h * 3.f - h, DType::kFloat16)}));
}

TEST(MathCpu, ComparisonsClampAndWhere) {
  EXPECT_THAT(Eval("x > 2", DType::kUInt8, {1, 2, 3}), ElementsAreArray({0., 0., 1.}));
  EXPECT_THAT(Eval("(x == 2) * 5", DType::kInt16, {2, 3}), ElementsAreArray({5., 0.}));
  EXPECT_THAT(Eval("x <= 2.5", DType::kInt32, {2, 3}), ElementsAreArray({1., 0.}));
  EXPECT_THAT(Eval("x != x", DType::kFloat32, {std::numeric_limits<double>::quiet_NaN(), 1}), ElementsAreArray({1., 0.}));
  EXPECT_THAT(Eval("clamp(x * 2, 0, 255)", DType::kInt32, {-5, 100, 200}), ElementsAreArray({0., 200., 255.}));
  EXPECT_THAT(Eval("clamp(x, 0.5, 1)", DType::kFloat64, {0, 0.7, 2}), ElementsAreArray({0.5, 0.7, 1.}));
  EXPECT_THAT(Eval("where(x > 0, x, -x * 10)", DType::kInt32, {3, -2}), ElementsAreArray({3., 20.}));
  EXPECT_THAT(Eval("where(x, 1, 2)", DType::kFloat32, {0, 0.25}), ElementsAreArray({2., 1.}));
}

TEST(MathCpu, OutputDTypeSaturates) {
  const TensorListCPU in = TypedBatch({Shape{4}}, DType::kFloat32, {{-3, 1.5, 2.5, 1000}});
  const TensorListCPU u8 = RunOp(Math("x * 1").SetArg("dtype", "uint8"), Device::kCpu, in);
  EXPECT_EQ(u8.dtype(), DType::kUInt8);
  EXPECT_THAT(Elements(u8, 0), ElementsAreArray({0., 2., 2., 255.}));  // rounded half to even, clamped
  const TensorListCPU i8 = RunOp(Math("x * 200").SetArg("dtype", "int8"), Device::kCpu, TypedBatch({Shape{2}}, DType::kInt32, {{1, -1}}));
  EXPECT_THAT(Elements(i8, 0), ElementsAreArray({127., -128.}));
  const TensorListCPU b = RunOp(Math("x - 2").SetArg("dtype", "bool"), Device::kCpu, TypedBatch({Shape{2}}, DType::kInt32, {{2, 5}}));
  EXPECT_THAT(Elements(b, 0), ElementsAreArray({0., 1.}));
  const TensorListCPU h = RunOp(Math("x").SetArg("dtype", "float16"), Device::kCpu, TypedBatch({Shape{1}}, DType::kFloat64, {{0.1}}));
  EXPECT_THAT(Elements(h, 0), ElementsAreArray({StoredFloat(0.1f, DType::kFloat16)}));
}

TEST(MathCpu, BroadcastsAsNumPyDoes) {
  // [H, W, C] * [C] + [H, 1, 1]
  const TensorListCPU img = RandomTyped({Shape{4, 5, 3}, Shape{2, 1, 3}}, DType::kFloat32, "HWC");
  const TensorListCPU gain = RandomTyped({Shape{3}, Shape{3}}, DType::kFloat32, "C");
  const TensorListCPU row = RandomTyped({Shape{4, 1, 1}, Shape{2, 1, 1}}, DType::kFloat32, "");
  const TensorListCPU out = RunMulti(Math("img * gain + row", {"img", "gain", "row"}), Device::kCpu, {img, gain, row});
  ASSERT_EQ(out.shapes(), img.shapes());
  EXPECT_EQ(out.layout(), Layout("HWC"));
  for (int s = 0; s < 2; ++s) {
    const Shape& sh = img.shape(s);
    for (int64_t y = 0; y < sh[0]; ++y) {
      for (int64_t x = 0; x < sh[1]; ++x) {
        for (int64_t c = 0; c < 3; ++c) {
          const int64_t j = (y * sh[1] + x) * 3 + c;
          const float want = static_cast<float>(Element(img, s, j)) * static_cast<float>(Element(gain, s, c)) +
                             static_cast<float>(Element(row, s, y));
          ASSERT_EQ(Element(out, s, j), want) << s << " " << y << " " << x << " " << c;
        }
      }
    }
  }
  // [1, W] with [H, 1]: both repeat.
  const TensorListCPU a = TypedBatch({Shape{1, 3}}, DType::kInt32, {{1, 2, 3}});
  const TensorListCPU b = TypedBatch({Shape{2, 1}}, DType::kInt32, {{10, 20}});
  const TensorListCPU ab = RunMulti(Math("a + b", {"a", "b"}), Device::kCpu, {a, b});
  EXPECT_EQ(ab.shape(0), (Shape{2, 3}));
  EXPECT_THAT(Elements(ab, 0), ElementsAreArray({11., 12., 13., 21., 22., 23.}));
  // A per-sample scalar input ([] or [1]) meets any tensor; a zero extent stays zero.
  const TensorListCPU t = TypedBatch({Shape{2, 2}, Shape{0, 4}}, DType::kUInt8, {{1, 2, 3, 4}, {}});
  const TensorListCPU k = TypedBatch({Shape{}, Shape{1}}, DType::kUInt8, {{10}, {7}});
  const TensorListCPU tk = RunMulti(Math("t * k", {"t", "k"}), Device::kCpu, {t, k});
  EXPECT_EQ(tk.shapes(), (std::vector<Shape>{Shape{2, 2}, Shape{0, 4}}));
  EXPECT_THAT(Elements(tk, 0), ElementsAreArray({10., 20., 30., 40.}));
}

TEST(MathCpu, PerSampleScalarsAndInputNames) {
  const TensorListCPU in = TypedBatch({Shape{2}, Shape{2}}, DType::kUInt8, {{1, 2}, {3, 4}});
  const TensorListCPU out = RunOp(Math("(x - s0) * s1").SetArgInput("s0", "a").SetArg("s1", 2.0), Device::kCpu, in,
                                  {{"s0", PerSampleScalars<float>({0.5f, 1.0f})}});
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_THAT(Elements(out, 0), ElementsAreArray({1., 3.}));
  EXPECT_THAT(Elements(out, 1), ElementsAreArray({4., 6.}));
  const TensorListCPU renamed = RunOp(Math("v + 1", {"my-images"}).SetArg("input_names", std::vector<std::string>{"v"}),
                                      Device::kCpu, in);
  EXPECT_THAT(Elements(renamed, 1), ElementsAreArray({4., 5.}));
}

TEST(MathCpu, LargeSamplesSpreadOverTheThreadPool) {
  const TensorListCPU in = RandomTyped({Shape{300, 700}}, DType::kFloat32, "HW");  // > one 64Ki chunk
  const TensorListCPU out = RunMulti(Math("x * x - 1"), Device::kCpu, {in});
  for (int64_t j = 0; j < in.shape(0).num_elements(); j += 997) {
    const float v = static_cast<float>(Element(in, 0, j));
    ASSERT_EQ(Element(out, 0, j), v * v - 1.f) << j;
  }
  const float last = static_cast<float>(Element(in, 0, 209999));
  EXPECT_EQ(Element(out, 0, 209999), last * last - 1.f);
}

}  // namespace
}  // namespace conveyor::testing
