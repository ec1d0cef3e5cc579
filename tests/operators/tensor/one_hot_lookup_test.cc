// one_hot and lookup_table on the CPU against references written out here, DALI's examples, and
// every error message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operators/tensor/tensor_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr DType kIndexTypes[] = {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kInt32, DType::kInt64};

OpSpec OneHot(int64_t classes) { return OpSpec("one_hot", "oh").AddInput("x").AddOutput("y").SetArg("num_classes", classes); }
OpSpec Lookup() { return OpSpec("lookup_table", "lut").AddInput("x").AddOutput("y"); }

// Class indices in [-2, classes + 2): some out of range on both sides.
TensorListCPU RandomIndices(const std::vector<Shape>& shapes, DType type, int64_t classes, Layout layout = {}) {
  std::vector<std::vector<double>> values;
  for (const Shape& s : shapes) {
    std::vector<double> v;
    for (int64_t x : RandomVector<int64_t>(static_cast<size_t>(s.num_elements()), -2, classes + 1)) {
      v.push_back(type == DType::kUInt8 || type == DType::kUInt16 ? static_cast<double>(x < 0 ? classes + 1 : x) : x);
    }
    values.push_back(v);
  }
  return TypedBatch(shapes, type, values, std::move(layout));
}

// out[o, c, i] = in[o, i] == c ? on : off, with the class axis at `axis`.
void ExpectOneHot(const TensorListCPU& out, const TensorListCPU& in, int64_t classes, int axis, double on, double off) {
  for (int s = 0; s < in.num_samples(); ++s) {
    const Shape& shape = in.shape(s);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < shape.ndim(); ++d) (d < axis ? outer : inner) *= shape[d];
    ASSERT_EQ(out.shape(s).num_elements(), outer * classes * inner) << "sample " << s;
    ASSERT_EQ(out.shape(s)[axis], classes);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t c = 0; c < classes; ++c) {
        for (int64_t i = 0; i < inner; ++i) {
          const double want = Element(in, s, o * inner + i) == static_cast<double>(c) ? on : off;
          ASSERT_EQ(Element(out, s, (o * classes + c) * inner + i), want) << "sample " << s << " at " << o << ", " << c << ", " << i;
        }
      }
    }
  }
}

TEST(OneHot, EveryIndexTypeAndAxis) {
  for (DType type : kIndexTypes) {
    const TensorListCPU in = RandomIndices({Shape{3, 4}, Shape{1, 5}, Shape{0, 2}}, type, 6, "HW");
    for (int axis : {0, 1, 2}) {
      const TensorListCPU out = RunOp(OneHot(6).SetArg("axis", axis), Device::kCpu, in);
      EXPECT_EQ(out.dtype(), DType::kFloat32);
      EXPECT_EQ(out.layout(), Layout());
      ExpectOneHot(out, in, 6, axis, 1, 0);
    }
    ExpectOneHot(RunOp(OneHot(6), Device::kCpu, in), in, 6, 2, 1, 0);  // default: the class axis last
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(OneHot, ValuesDTypeAndLayout) {
  const TensorListCPU in = RandomIndices({Shape{5, 2}}, DType::kInt32, 4, "HW");
  // on/off saturate to the dtype: 300 → 127, -300 → -128 in int8.
  const TensorListCPU i8 = RunOp(OneHot(4).SetArg("dtype", DType::kInt8).SetArg("on_value", 300.0).SetArg("off_value", -300.0),
                                 Device::kCpu, in);
  EXPECT_EQ(i8.dtype(), DType::kInt8);
  ExpectOneHot(i8, in, 4, 2, 127, -128);
  const TensorListCPU half = RunOp(OneHot(4).SetArg("dtype", DType::kFloat16).SetArg("on_value", 0.1).SetArg("axis", 1)
                                       .SetArg("axis_name", "K"),
                                   Device::kCpu, in);
  ExpectOneHot(half, in, 4, 1, HalfBitsToFloat(FloatToHalfBits(0.1f)), 0);
  EXPECT_EQ(half.layout(), Layout("HKW"));
}

TEST(OneHot, OneElementSamplesAreScalarsUnlessAxisIsGiven) {
  const TensorListCPU in = TypedBatch({Shape{1, 1}, Shape{}, Shape{1}}, DType::kInt64, {{2}, {0}, {7}});
  const TensorListCPU out = RunOp(OneHot(3).SetArg("axis_name", "C"), Device::kCpu, in);
  ASSERT_EQ(out.shapes(), (std::vector<Shape>{Shape{3}, Shape{3}, Shape{3}}));
  EXPECT_EQ(out.layout(), Layout("C"));
  EXPECT_THAT(Elements(out, 0), ElementsAreArray({0., 0., 1.}));
  EXPECT_THAT(Elements(out, 1), ElementsAreArray({1., 0., 0.}));
  EXPECT_THAT(Elements(out, 2), ElementsAreArray({0., 0., 0.}));  // 7 is no class of 3
  const TensorListCPU kept = RunOp(OneHot(3).SetArg("axis", -1), Device::kCpu, in);
  EXPECT_EQ(kept.shapes(), (std::vector<Shape>{Shape{1, 1, 3}, Shape{3}, Shape{1, 3}}));
}

TEST(OneHot, Errors) {
  EXPECT_THAT(ConstructError(OneHot(0)), HasSubstr("argument \"num_classes\": expected a value in [1, 2147483647], got 0"));
  EXPECT_THAT(ConstructError(OneHot(2).SetArg("axis_name", "AB")),
              HasSubstr("op \"one_hot\" (oh): argument \"axis_name\": expected one letter, got \"AB\""));
  EXPECT_THAT(RunError(OneHot(2), RandomTyped({Shape{2}}, DType::kFloat32, "")),
              HasSubstr("op \"one_hot\" (oh): input 0: expected dtype uint8, int8, uint16, int16, int32 or int64, got float32"));
  const TensorListCPU in = RandomIndices({Shape{2, 3}, Shape{2, 2}}, DType::kInt32, 2, "");
  EXPECT_THAT(RunError(OneHot(2).SetArg("axis", 3), in),
              HasSubstr("op \"one_hot\" (oh): sample 0: argument \"axis\": axis 3 is out of range for 3 dims (expected -3..2)"));
  EXPECT_THAT(RunError(OneHot(2).SetArg("axis_name", "C"), in),
              HasSubstr("argument \"axis_name\": \"C\" needs an input layout to insert into; input 0 has none"));
  EXPECT_THAT(RunError(OneHot(2).SetArg("axis_name", "H"), RandomIndices({Shape{2, 3}}, DType::kInt32, 2, "HW")),
              HasSubstr("argument \"axis_name\": layout \"HWH\": axis 'H' appears twice"));
}

TEST(LookupTable, DalisExample) {
  const OpSpec spec = Lookup()
                          .SetArg("keys", std::vector<int64_t>{0, 2, 3, 4, 5, 3})
                          .SetArg("values", std::vector<double>{0.2, 0.4, 0.5, 0.6, 0.7, 0.10})
                          .SetArg("default_value", 0.99);
  const TensorListCPU in = TypedBatch({Shape{8}, Shape{3}}, DType::kInt32, {{1, 4, 1, 0, 100, 2, 3, 4}, {-1, 5, 6}}, "X");
  const TensorListCPU out = RunOp(spec, Device::kCpu, in);
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_EQ(out.layout(), Layout("X"));
  const auto f = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  EXPECT_THAT(Elements(out, 0), ElementsAreArray({f(0.99), f(0.6), f(0.99), f(0.2), f(0.99), f(0.4), f(0.10), f(0.6)}));
  EXPECT_THAT(Elements(out, 1), ElementsAreArray({f(0.99), f(0.7), f(0.99)}));
}

TEST(LookupTable, EveryKeyTypeAndOutputDType) {
  const std::vector<int64_t> keys = {0, 1, 3, 7, 200};
  const std::vector<double> values = {-5.5, 300, 2.25, -1e6, 42};
  for (DType type : kIndexTypes) {
    const TensorListCPU in = RandomIndices({Shape{6, 7}, Shape{0}, Shape{1}}, type, 9);
    for (DType out_type : {DType::kUInt8, DType::kInt16, DType::kFloat16, DType::kFloat64}) {
      const TensorListCPU out =
          RunOp(Lookup().SetArg("keys", keys).SetArg("values", values).SetArg("default_value", -7.0).SetArg("dtype", out_type),
                Device::kCpu, in);
      ASSERT_EQ(out.dtype(), out_type);
      ASSERT_EQ(out.shapes(), in.shapes());
      // The expected value through the table, then saturated to the dtype (written out per dtype).
      const auto saturate = [&](double v) {
        switch (out_type) {
          case DType::kUInt8: return std::clamp(std::nearbyint(v), 0.0, 255.0);
          case DType::kInt16: return std::clamp(std::nearbyint(v), -32768.0, 32767.0);
          case DType::kFloat16: return static_cast<double>(HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v))));
          default: return v;
        }
      };
      for (int s = 0; s < in.num_samples(); ++s) {
        for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
          const double key = Element(in, s, j);
          double want = -7.0;
          for (size_t k = 0; k < keys.size(); ++k) want = key == static_cast<double>(keys[k]) ? values[k] : want;
          ASSERT_EQ(Element(out, s, j), saturate(want)) << DTypeName(type) << " -> " << DTypeName(out_type) << " key " << key;
        }
      }
    }
  }
}

TEST(LookupTable, Errors) {
  EXPECT_THAT(ConstructError(Lookup().SetArg("keys", std::vector<int64_t>{1, 2}).SetArg("values", std::vector<double>{1})),
              HasSubstr("op \"lookup_table\" (lut): argument \"values\": expected one value per key (2), got 1"));
  EXPECT_THAT(ConstructError(Lookup().SetArg("keys", std::vector<int64_t>{1, 65536}).SetArg("values", std::vector<double>{1, 2})),
              HasSubstr("argument \"keys\": expected keys in [0, 65535], got 65536 at index 1"));
  EXPECT_THAT(ConstructError(Lookup().SetArg("keys", std::vector<int64_t>{-1}).SetArg("values", std::vector<double>{1})),
              HasSubstr("argument \"keys\": expected keys in [0, 65535], got -1 at index 0"));
  EXPECT_THAT(RunError(Lookup(), RandomTyped({Shape{3}}, DType::kFloat16, "")),
              HasSubstr("op \"lookup_table\" (lut): input 0: expected dtype uint8, int8, uint16, int16, int32 or int64, got float16"));
}

}  // namespace
}  // namespace conveyor::testing
