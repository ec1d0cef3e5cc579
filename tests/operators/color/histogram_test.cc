// auto_contrast and equalize: CPU results against references computed from sorted values and
// counted CDFs in the test, edge cases (constant channels), errors, GPU vs CPU, conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Op(const std::string& op) { return OpSpec(op, op + "_node").AddInput("x").AddOutput("y"); }

// The values of channel c of sample s.
std::vector<int> Channel(const TensorListCPU& t, int s, int64_t c, int64_t channels) {
  std::vector<int> v;
  for (int64_t j = c; j < t.shape(s).num_elements(); j += channels) v.push_back(static_cast<int>(At(t, s, j)));
  return v;
}

TEST(AutoContrast, StretchesEachChannelToFullRange) {
  // Random images squeezed into [40, 200) per channel so that stretching matters.
  TensorListCPU in = RandomBatch(RandomHwcShapes(4, 2, 30, 30, 3), DType::kUInt8, "HWC");
  for (int s = 0; s < 4; ++s) {
    uint8_t* p = static_cast<uint8_t*>(in.raw_sample(s));
    for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) p[j] = static_cast<uint8_t>(40 + p[j] * 160 / 256);
  }
  const TensorListCPU out = RunOp(Op("auto_contrast"), Device::kCpu, in);
  for (int s = 0; s < 4; ++s) {
    for (int64_t c = 0; c < 3; ++c) {
      const std::vector<int> x = Channel(in, s, c, 3), y = Channel(out, s, c, 3);
      const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
      for (size_t k = 0; k < x.size(); ++k) {
        const double want = *hi > *lo ? std::floor((x[k] - *lo) * 255.0 / (*hi - *lo)) : x[k];
        // float32 scale vs exact: an exact integer may land just below it (torchvision alike).
        ASSERT_LE(std::abs(y[k] - want), 1.0) << "sample " << s << " channel " << c;
        if (x[k] == *lo && *hi > *lo) EXPECT_EQ(y[k], 0);
        if (x[k] == *hi && *hi > *lo) EXPECT_EQ(y[k], 255);
      }
    }
  }
  // A constant channel stays as it is.
  const TensorListCPU flat = MakeBatch<uint8_t>({Shape{2, 2, 1}}, {{9, 9, 9, 9}}, "HWC");
  ExpectSameBytes(RunOp(Op("auto_contrast"), Device::kCpu, flat), flat, "constant");
}

// torchvision's equalize from counts in a std::map (value → count).
std::vector<int> EqualizeReference(const std::vector<int>& x) {
  std::map<int, int64_t> counts;
  for (int v : x) ++counts[v];
  const int64_t step = (static_cast<int64_t>(x.size()) - counts.rbegin()->second) / 255;
  if (step == 0) return x;
  std::vector<int> y;
  for (int v : x) {
    int64_t below = 0;
    for (const auto& [value, n] : counts) below += value < v ? n : 0;
    y.push_back(v == 0 ? 0 : static_cast<int>(std::min<int64_t>(255, (below + step / 2) / step)));
  }
  return y;
}

TEST(Equalize, MatchesCdfReference) {
  const TensorListCPU in = RandomBatch({Shape{40, 50, 3}, Shape{17, 33, 1}, Shape{3, 3, 2}}, DType::kUInt8, "HWC");
  const TensorListCPU out = RunOp(Op("equalize"), Device::kCpu, in);
  for (int s = 0; s < 3; ++s) {
    const int64_t ch = in.shape(s)[2];
    for (int64_t c = 0; c < ch; ++c) {
      EXPECT_EQ(Channel(out, s, c, ch), EqualizeReference(Channel(in, s, c, ch))) << "sample " << s << " channel " << c;
    }
  }
}

TEST(Histogram, Errors) {
  EXPECT_THAT(RunError(Op("equalize"), RandomBatch({Shape{4, 4, 3}}, DType::kFloat32, "HWC")),
              HasSubstr("op \"equalize\" (equalize_node): input 0: expected dtype uint8, got float32"));
  EXPECT_THAT(RunError(Op("auto_contrast"), RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 6}}, DType::kUInt8, "HWC")),
              HasSubstr("op \"auto_contrast\" (auto_contrast_node): input 0: sample 1 has 6 channels, expected 1 to 4"));
  EXPECT_THAT(RunError(Op("auto_contrast"), RandomBatch({Shape{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("input 0: expected layout HWC or HW, got CHW"));
}

TEST(HistogramGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU in = RandomBatch(RandomHwcShapes(6, 1, 300, 400, 3), DType::kUInt8, "HWC");
  for (const char* op : {"auto_contrast", "equalize"}) {
    ExpectSameBytes(RunOp(Op(op), Device::kGpu, in), RunOp(Op(op), Device::kCpu, in), op);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Histogram, OperatorConformance,
    ::testing::Values(ConformanceCase{"auto_contrast_cpu", Op("auto_contrast"), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"auto_contrast_gpu", Op("auto_contrast"), Device::kGpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"equalize_cpu", Op("equalize"), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"equalize_gpu", Op("equalize"), Device::kGpu, DType::kUInt8, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
