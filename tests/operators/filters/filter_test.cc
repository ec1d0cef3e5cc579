// filter on the CPU: against a direct correlation in double written here (borders by walking the
// reflections), for random images, per-sample filters, anchors and fill values, every border mode
// and dtype pair; identity, shift and box filters against results built in the test; every error.
// GPU vs CPU: filter_gpu_test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tests/conformance/conformance.h"
#include "tests/operators/filters/filter_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

// Index i of an extent n under `border` by repeated reflection; -1 for constant outside.
int Walk(int i, int n, const std::string& border) {
  if (border == "constant") return i >= 0 && i < n ? i : -1;
  if (border == "clamp") return std::clamp(i, 0, n - 1);
  if (border == "wrap") return ((i % n) + n) % n;
  if (n == 1) return 0;
  const bool repeat_edge = border == "reflect_1001";
  while (i < 0 || i >= n) i = i < 0 ? (repeat_edge ? -i - 1 : -i) : (repeat_edge ? 2 * n - 1 - i : 2 * n - 2 - i);
  return i;
}

struct SampleFilter {
  std::vector<float> w;
  int fh, fw, ay, ax;
  double fill;
};

// out(y, x, c) = Σ_i Σ_j w[i][j] in(y + i - ay, x + j - ax, c) in double; also Σ |terms| for the tolerance.
std::pair<double, double> Reference(const TensorListCPU& in, int s, const SampleFilter& f, const std::string& border,
                                    int y, int x, int c) {
  const Shape& shape = in.shape(s);
  const int h = static_cast<int>(shape[0]), w = static_cast<int>(shape[1]);
  const int ch = shape.ndim() == 3 ? static_cast<int>(shape[2]) : 1;
  double acc = 0, magnitude = 0;
  for (int i = 0; i < f.fh; ++i) {
    for (int j = 0; j < f.fw; ++j) {
      const int sy = Walk(y + i - f.ay, h, border), sx = Walk(x + j - f.ax, w, border);
      const double v = sy < 0 || sx < 0 ? f.fill : At(in, s, (static_cast<int64_t>(sy) * w + sx) * ch + c);
      acc += static_cast<double>(f.w[static_cast<size_t>(i * f.fw + j)]) * v;
      magnitude += std::abs(f.w[static_cast<size_t>(i * f.fw + j)] * v);
    }
  }
  return {acc, magnitude};
}

void ExpectMatchesReference(const TensorListCPU& in, const TensorListCPU& out, const std::vector<SampleFilter>& filters,
                            const std::string& border) {
  ASSERT_EQ(out.shapes(), in.shapes());
  for (int s = 0; s < in.num_samples(); ++s) {
    const Shape& shape = in.shape(s);
    const int h = static_cast<int>(shape[0]), w = static_cast<int>(shape[1]);
    const int ch = shape.ndim() == 3 ? static_cast<int>(shape[2]) : 1;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        for (int c = 0; c < ch; ++c) {
          const auto [want, magnitude] = Reference(in, s, filters[static_cast<size_t>(s)], border, y, x, c);
          const float got = At(out, s, (static_cast<int64_t>(y) * w + x) * ch + c);
          const bool u8 = out.dtype() == DType::kUInt8;
          const double expected = u8 ? std::clamp(want, 0.0, 255.0) : want;
          const double tol = (u8 ? 0.5 : 0.0) + 1e-5 * magnitude + 1e-6;
          ASSERT_LE(std::abs(got - expected), tol) << border << " sample " << s << " (" << y << ", " << x << ", " << c
                                                   << ") " << DTypeName(in.dtype()) << " -> " << DTypeName(out.dtype());
        }
      }
    }
  }
}

// The filters, resolved anchors and fills the reference applies (anchor -1: extent / 2).
std::vector<SampleFilter> Resolve(const TensorListCPU& filters, const TensorListCPU& anchors, const std::vector<float>& fills) {
  std::vector<SampleFilter> out;
  for (int s = 0; s < filters.num_samples(); ++s) {
    SampleFilter f;
    f.fh = static_cast<int>(filters.shape(s)[0]);
    f.fw = static_cast<int>(filters.shape(s)[1]);
    f.w = SampleValues(filters, s);
    const auto* a = static_cast<const int32_t*>(anchors.raw_sample(s));
    f.ay = a[0] == -1 ? f.fh / 2 : a[0];
    f.ax = a[1] == -1 ? f.fw / 2 : a[1];
    f.fill = fills[static_cast<size_t>(s)];
    out.push_back(f);
  }
  return out;
}

TEST(Filter, MatchesDirectCorrelationForEveryBorderAndDtype) {
  const std::vector<std::pair<DType, std::string>> pairs = {
      {DType::kUInt8, "same"}, {DType::kUInt8, "float32"}, {DType::kFloat32, "same"}};
  for (const std::string& border : kFilterBorders) {
    for (const auto& [type, dtype] : pairs) {
      for (int64_t channels : {1, 3, 4}) {
        std::vector<Shape> shapes = RandomHwcShapes(4, 1, 14, 14, channels);
        shapes.push_back(Shape{1, 9, channels});  // one row: every vertical tap goes through the border
        shapes.push_back(Shape{2, 3, channels});  // smaller than the filter: repeated reflection
        const int n = static_cast<int>(shapes.size());
        const TensorListCPU in = RandomBatch(shapes, type, "HWC", -2.f, 2.f);
        const TensorListCPU filters = RandomFilters(n, 7);
        const TensorListCPU anchors = RandomAnchors(filters);
        std::vector<float> fills = RandomVector<float>(static_cast<size_t>(n), 0.f, 255.f);
        if (type == DType::kUInt8) {
          for (float& f : fills) f = std::rint(f);
        }
        const OpSpec spec = FilterSpec().SetArgInput("filter", "k").SetArgInput("anchor", "a")
                                .SetArgInput("fill_value", "v").SetArg("border", border).SetArg("dtype", dtype);
        const TensorListCPU out = RunOp(spec, Device::kCpu, in,
                                        {{"filter", filters}, {"anchor", anchors}, {"fill_value", PerSampleScalars(fills)}});
        std::vector<float> used = fills;
        if (border != "constant") std::fill(used.begin(), used.end(), 0.f);
        ExpectMatchesReference(in, out, Resolve(filters, anchors, used), border);
        if (HasFailure()) return;
      }
    }
  }
  // HW (no channel axis), a constant non-square filter.
  const TensorListCPU hw = RandomBatch({Shape{7, 11}, Shape{3, 2}}, DType::kFloat32, "HW");
  const std::vector<float> w = RandomVector<float>(6, -1.f, 1.f);
  const TensorListCPU out = RunOp(FilterSpec().SetArg("filter", std::vector<double>(w.begin(), w.end()))
                                      .SetArg("filter_shape", std::vector<int64_t>{2, 3}),
                                  Device::kCpu, hw);
  ExpectMatchesReference(hw, out, {{w, 2, 3, 1, 1, 0}, {w, 2, 3, 1, 1, 0}}, "reflect_101");
}

TEST(Filter, IdentityKeepsTheImage) {
  std::vector<double> identity(25, 0.0);
  identity[12] = 1;
  for (const std::string& border : kFilterBorders) {
    for (DType type : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU in = RandomBatch({Shape{9, 13, 3}, Shape{1, 1, 1}, Shape{4, 2, 4}}, type, "HWC");
      ExpectSameBytes(RunOp(FilterSpec().SetArg("filter", identity).SetArg("border", border), Device::kCpu, in), in,
                      border);
    }
  }
}

// [1, 0, 0] at anchor 2 reads two columns to the left: out(y, x) = in(y, x - 2), so columns 0 and 1
// come from the border: the columns (or fill) each mode names, written out here for w = 6.
TEST(Filter, ShiftShowsEachBorderMode) {
  const std::map<std::string, std::pair<int, int>> from = {
      {"reflect_101", {2, 1}}, {"reflect_1001", {1, 0}}, {"wrap", {4, 5}}, {"clamp", {0, 0}}, {"constant", {-1, -1}}};
  const TensorListCPU in = RandomBatch({Shape{3, 6, 2}}, DType::kFloat32, "HWC");
  for (const auto& [border, columns] : from) {
    const TensorListCPU out = RunOp(FilterSpec()
                                        .SetArg("filter", std::vector<double>{1, 0, 0})
                                        .SetArg("filter_shape", std::vector<int64_t>{1, 3})
                                        .SetArg("anchor", std::vector<int64_t>{0, 2})
                                        .SetArg("border", border)
                                        .SetArg("fill_value", 7.5),
                                    Device::kCpu, in);
    for (int y = 0; y < 3; ++y) {
      for (int x = 0; x < 6; ++x) {
        const int sx = x >= 2 ? x - 2 : (x == 0 ? columns.first : columns.second);
        for (int c = 0; c < 2; ++c) {
          const float want = sx < 0 ? 7.5f : At(in, 0, (y * 6 + sx) * 2 + c);
          ASSERT_EQ(At(out, 0, (y * 6 + x) * 2 + c), want) << border << " (" << y << ", " << x << ", " << c << ")";
        }
      }
    }
  }
}

TEST(Filter, BoxSumsTheNeighbourhoodAndUint8Saturates) {
  // 3x3 of ones with border constant 0 over values 0..28: the plain sum of the in-image neighbours
  // (at most 252, exact in float).
  const int h = 8, w = 11;
  const std::vector<uint8_t> values = RandomVector<uint8_t>(static_cast<size_t>(h * w), 0, 28);
  const TensorListCPU in = MakeBatch<uint8_t>({Shape{h, w, 1}}, {values}, "HWC");
  const TensorListCPU out =
      RunOp(FilterSpec().SetArg("filter", std::vector<double>(9, 1.0)).SetArg("border", "constant"), Device::kCpu, in);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int sum = 0;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          if (y + dy >= 0 && y + dy < h && x + dx >= 0 && x + dx < w) sum += values[static_cast<size_t>((y + dy) * w + x + dx)];
        }
      }
      ASSERT_EQ(At(out, 0, y * w + x), sum) << y << ", " << x;
    }
  }
  // A mean filter keeps a flat float image flat; sums beyond 255 and negative sums saturate in uint8.
  const TensorListCPU flat = MakeBatch<float>({Shape{5, 7, 1}}, {std::vector<float>(35, 0.25f)}, "HWC");
  for (float v : SampleValues(RunOp(FilterSpec().SetArg("filter", std::vector<double>(9, 1.0 / 9)), Device::kCpu, flat), 0)) {
    ASSERT_NEAR(v, 0.25f, 1e-6);
  }
  const TensorListCPU bright = MakeBatch<uint8_t>({Shape{4, 4, 1}}, {std::vector<uint8_t>(16, 200)}, "HWC");
  for (float v : SampleValues(RunOp(FilterSpec().SetArg("filter", std::vector<double>{2.0}), Device::kCpu, bright), 0)) {
    ASSERT_EQ(v, 255.f);
  }
  for (float v : SampleValues(RunOp(FilterSpec().SetArg("filter", std::vector<double>{-1.0}), Device::kCpu, bright), 0)) {
    ASSERT_EQ(v, 0.f);
  }
  // dtype float32 keeps the fraction that a uint8 output rounds away: 201 / 4 = 50.25 (uint8: 50).
  const TensorListCPU odd = MakeBatch<uint8_t>({Shape{2, 2, 1}}, {std::vector<uint8_t>(4, 201)}, "HWC");
  const OpSpec quarter = FilterSpec().SetArg("filter", std::vector<double>{0.25});
  const TensorListCPU f = RunOp(OpSpec(quarter).SetArg("dtype", "float32"), Device::kCpu, odd);
  ASSERT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(SampleValues(f, 0), std::vector<float>(4, 50.25f));
  EXPECT_EQ(SampleValues(RunOp(quarter, Device::kCpu, odd), 0), std::vector<float>(4, 50.f));
}

TEST(Filter, ConstantAndFedFiltersAgree) {
  const std::vector<float> w = RandomVector<float>(15, -1.f, 1.f);
  const std::vector<double> wd(w.begin(), w.end());
  const TensorListCPU in = RandomBatch({Shape{10, 12, 3}, Shape{5, 4, 3}}, DType::kUInt8, "HWC");
  const TensorListCPU constant = RunOp(FilterSpec().SetArg("filter", wd).SetArg("filter_shape", std::vector<int64_t>{3, 5}),
                                       Device::kCpu, in);
  const TensorListCPU fed2d = RunOp(FilterSpec().SetArgInput("filter", "k"), Device::kCpu, in,
                                    {{"filter", MakeBatch<float>({Shape{3, 5}, Shape{3, 5}}, {w, w})}});
  const TensorListCPU fed1d = RunOp(FilterSpec().SetArgInput("filter", "k").SetArg("filter_shape", std::vector<int64_t>{3, 5}),
                                    Device::kCpu, in, {{"filter", PerSampleLists<float>({w, w})}});
  ExpectSameBytes(fed2d, constant, "fed [3, 5]");
  ExpectSameBytes(fed1d, constant, "fed flat with filter_shape");
}

TEST(Filter, Errors) {
  const TensorListCPU two = RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 3}}, DType::kUInt8, "HWC");
  const OpSpec box = FilterSpec().SetArg("filter", std::vector<double>(9, 1.0));
  const OpSpec fed = FilterSpec().SetArgInput("filter", "k");
  const auto flat = [](int count, const std::vector<int64_t>& shape) {
    return FilterSpec().SetArg("filter", std::vector<double>(static_cast<size_t>(count), 1.0)).SetArg("filter_shape", shape);
  };
  // Per-sample filters of these shapes and dtype, all ones.
  const auto ones = [](const std::vector<Shape>& shapes, auto one) {
    std::vector<std::vector<decltype(one)>> values;
    for (const Shape& shape : shapes) values.emplace_back(static_cast<size_t>(shape.num_elements()), one);
    return ArgInputs{{"filter", MakeBatch(shapes, values)}};
  };
  EXPECT_THAT(RunError(FilterSpec().SetArg("filter", std::vector<double>(5, 1.0)), two),
              HasSubstr("op \"filter\" (f): argument \"filter\": expected a square number of values (or filter_shape "
                        "[fh, fw]), got 5"));
  EXPECT_THAT(RunError(flat(4, {2, 3}), two),
              HasSubstr("argument \"filter\": expected 6 values (filter_shape [2, 3]), got 4"));
  EXPECT_THAT(RunError(flat(4, {2, 2, 1}), two),
              HasSubstr("argument \"filter_shape\": expected 2 values [fh, fw] or none, got 3"));
  EXPECT_THAT(RunError(FilterSpec().SetArg("filter", std::vector<double>(32 * 32, 1.0)), two),
              HasSubstr("argument \"filter\": expected extents 1 to 31 (the GPU kernel's shared-memory window is sized "
                        "for 31x31), got 32x32"));
  EXPECT_THAT(RunError(fed, two, ones({Shape{3, 3}, Shape{1, 40}}, 1.f)),
              HasSubstr("argument \"filter\": expected extents 1 to 31 (the GPU kernel's shared-memory window is sized "
                        "for 31x31), got 1x40 at sample 1"));
  EXPECT_THAT(RunError(fed, two, ones({Shape{3, 3}, Shape{3, 3}}, int32_t{1})),
              HasSubstr("op \"filter\" (f): argument \"filter\" (\"$k\"): expected a float32 [fh, fw] tensor per sample, "
                        "got int32 (3, 3) at sample 0"));
  EXPECT_THAT(RunError(fed, two, ones({Shape{3, 3}, Shape{1, 3, 3}}, 1.f)),
              HasSubstr("expected a float32 [fh, fw] tensor per sample, got float32 (1, 3, 3) at sample 1"));
  EXPECT_THAT(RunError(fed, two, ones({Shape{3, 3}}, 1.f)),
              HasSubstr("argument \"filter\" (\"$k\") has 1 samples, the batch 2"));
  EXPECT_THAT(RunError(OpSpec(box).SetArgInput("anchor", "a"), two, {{"anchor", PerSampleLists<int32_t>({{1, 1}, {0, 3}})}}),
              HasSubstr("op \"filter\" (f): argument \"anchor\": expected -1 or a value in [0, 2] (the filter's extent 3 "
                        "along x), got 3 at sample 1"));
  EXPECT_THAT(RunError(OpSpec(box).SetArg("anchor", std::vector<int64_t>{1, 1, 1}), two),
              HasSubstr("argument \"anchor\": expected 1 or 2 values ([ay, ax]), got 3 at sample 0"));
  EXPECT_THAT(RunError(OpSpec(box).SetArg("border", "constant").SetArg("fill_value", 300.0), two),
              HasSubstr("op \"filter\" (f): argument \"fill_value\": expected a value in [0, 255], got 300 at sample 0"));
  EXPECT_THAT(RunError(OpSpec(box).SetArg("dtype", "uint8"), RandomBatch({Shape{4, 4, 3}}, DType::kFloat32, "HWC")),
              HasSubstr("op \"filter\" (f): argument \"dtype\": expected same or float32 for a float32 input (the "
                        "output is float32 or the input's dtype, as DALI), got uint8"));
  EXPECT_THAT(RunError(OpSpec(box).SetArg("border", "mirror"), two), HasSubstr("\"border\""));
  EXPECT_THAT(RunError(OpSpec(box).SetArg("border", "mirror"), two), HasSubstr("reflect_1001"));
  EXPECT_THAT(RunError(box, RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 5}}, DType::kUInt8, "HWC")),
              HasSubstr("op \"filter\" (f): input 0: sample 1 has 5 channels, expected 1 to 4"));
  EXPECT_THAT(RunError(box, RandomBatch({Shape{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"filter\" (f): input 0: expected layout HWC or HW, got CHW"));
  EXPECT_THAT(RunError(box, RandomBatch({Shape{4, 4, 3}}, DType::kFloat16, "HWC")),
              HasSubstr("input 0: expected dtype uint8 or float32, got float16"));
}

INSTANTIATE_TEST_SUITE_P(
    Filter, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", FilterSpec().SetArg("filter", std::vector<double>(9, 1.0 / 9)), Device::kCpu,
                                      DType::kUInt8, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
