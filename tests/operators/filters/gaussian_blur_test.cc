// gaussian_blur: CPU results against a direct (non-separable) 2-D convolution in double over a
// mirror-padded copy, DALI's window/sigma rules, errors, GPU vs CPU (bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Blur() { return OpSpec("gaussian_blur", "blur").AddInput("x").AddOutput("y"); }

// Reflect-101 by walking: bounce off each edge without repeating it.
int Mirror(int i, int n) {
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  i = ((i % period) + period) % period;
  return i < n ? i : period - i;
}

// out(y, x, c) = Σ_dy Σ_dx g(dy) g(dx) in(mirror(y + dy), mirror(x + dx), c), g normalized, in double.
double Reference(const TensorListCPU& in, int s, int h, int w, int ch, int y, int x, int c, double sigma, int radius) {
  std::vector<double> g;
  double sum = 0;
  for (int k = -radius; k <= radius; ++k) g.push_back(std::exp(-0.5 * k * k / (sigma * sigma)));
  for (double v : g) sum += v;
  double acc = 0;
  for (int dy = -radius; dy <= radius; ++dy) {
    for (int dx = -radius; dx <= radius; ++dx) {
      acc += g[static_cast<size_t>(dy + radius)] * g[static_cast<size_t>(dx + radius)] / (sum * sum) *
             At(in, s, (static_cast<int64_t>(Mirror(y + dy, h)) * w + Mirror(x + dx, w)) * ch + c);
    }
  }
  return acc;
}

void ExpectMatchesReference(const TensorListCPU& in, const TensorListCPU& out, const std::vector<float>& sigma) {
  for (int s = 0; s < in.num_samples(); ++s) {
    const Shape& shape = in.shape(s);
    const int h = static_cast<int>(shape[0]), w = static_cast<int>(shape[1]);
    const int ch = shape.ndim() == 3 ? static_cast<int>(shape[2]) : 1;
    const double sg = sigma[static_cast<size_t>(s)];
    const int radius = static_cast<int>(std::ceil(3 * sg));
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        for (int c = 0; c < ch; ++c) {
          const double want = Reference(in, s, h, w, ch, y, x, c, sg, radius);
          const float got = At(out, s, (static_cast<int64_t>(y) * w + x) * ch + c);
          const double tol = in.dtype() == DType::kUInt8 ? 0.5 + 2e-3 : 2e-5 * std::max(1.0, std::abs(want));
          ASSERT_LE(std::abs(got - want), tol) << "sample " << s << " (" << y << ", " << x << ", " << c << ") sigma " << sg;
        }
      }
    }
  }
}

TEST(GaussianBlur, MatchesDirect2DConvolutionInDouble) {
  for (int64_t channels : {1, 3, 4}) {
    std::vector<Shape> shapes = RandomHwcShapes(4, 1, 24, 24, channels);
    shapes.push_back(Shape{1, 9, channels});  // one row: every vertical tap reflects onto it
    shapes.push_back(Shape{2, 3, channels});  // smaller than the radius: repeated reflection
    const std::vector<float> sigma = RandomVector<float>(shapes.size(), 0.3f, 3.f);
    for (DType type : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU in = RandomBatch(shapes, type, "HWC", -1.f, 1.f);
      ExpectMatchesReference(in, RunOp(Blur().SetArgInput("sigma", "s"), Device::kCpu, in, {{"sigma", PerSampleScalars(sigma)}}),
                             sigma);
    }
  }
  const TensorListCPU hw = RandomBatch({Shape{7, 11}}, DType::kFloat32, "HW");
  ExpectMatchesReference(hw, RunOp(Blur().SetArg("sigma", 1.5), Device::kCpu, hw), {1.5f});
}

TEST(GaussianBlur, WindowAndSigmaFollowDali) {
  const TensorListCPU in = RandomBatch({Shape{20, 30, 3}}, DType::kFloat32, "HWC");
  // sigma 1 alone: window 2 * ceil(3) + 1 = 7.
  ExpectSameBytes(RunOp(Blur().SetArg("sigma", 1.0), Device::kCpu, in),
                  RunOp(Blur().SetArg("sigma", 1.0).SetArg("window_size", 7), Device::kCpu, in), "window from sigma");
  // window 5 alone: sigma (2 - 1) * 0.3 + 0.8 = 1.1.
  // (Near, not equal: the argument 1.1 arrives as a float, the derived sigma is a double.)
  const TensorListCPU derived = RunOp(Blur().SetArg("window_size", 5), Device::kCpu, in);
  const TensorListCPU given = RunOp(Blur().SetArg("sigma", 1.1).SetArg("window_size", 5), Device::kCpu, in);
  for (int64_t j = 0; j < in.shape(0).num_elements(); ++j) ASSERT_NEAR(At(derived, 0, j), At(given, 0, j), 1e-5) << j;
  // A constant image stays constant (the weights sum to 1).
  TensorListCPU flat = MakeBatch<uint8_t>({Shape{5, 6, 1}}, {std::vector<uint8_t>(30, 77)}, "HWC");
  ExpectSameBytes(RunOp(Blur().SetArg("sigma", 2.0), Device::kCpu, flat), flat, "constant");
}

TEST(GaussianBlur, Errors) {
  const TensorListCPU two = RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 3}}, DType::kUInt8, "HWC");
  EXPECT_THAT(RunError(Blur(), two), HasSubstr("op \"gaussian_blur\" (blur): sample 0: expected sigma > 0 or window_size > 0, got both 0"));
  EXPECT_THAT(RunError(Blur().SetArgInput("window_size", "w"), two, {{"window_size", PerSampleScalars<int32_t>({3, 4})}}),
              HasSubstr("argument \"window_size\": expected 0 or an odd value in [1, 65], got 4 at sample 1"));
  EXPECT_THAT(RunError(Blur().SetArgInput("sigma", "s"), two, {{"sigma", PerSampleScalars<float>({1.f, 11.f})}}),
              HasSubstr("argument \"sigma\": expected a value <= 10.6667 (window 2 * ceil(3 sigma) + 1 <= 65), got 11 at sample 1"));
  EXPECT_THAT(RunError(Blur().SetArgInput("sigma", "s"), two, {{"sigma", PerSampleScalars<float>({-1.f, 1.f})}}),
              HasSubstr("op \"gaussian_blur\" (blur): argument \"sigma\": expected a value >= 0, got -1 at sample 0"));
  EXPECT_THAT(RunError(Blur().SetArg("sigma", 1.0), RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 5}}, DType::kUInt8, "HWC")),
              HasSubstr("op \"gaussian_blur\" (blur): input 0: sample 1 has 5 channels, expected 1 to 4"));
  EXPECT_THAT(RunError(Blur().SetArg("sigma", 1.0), RandomBatch({Shape{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"gaussian_blur\" (blur): input 0: expected layout HWC or HW, got CHW"));
  EXPECT_THAT(RunError(Blur().SetArg("sigma", 1.0), RandomBatch({Shape{3, 4, 4}}, DType::kInt32, "HWC")),
              HasSubstr("input 0: expected dtype uint8, float16, bfloat16 or float32, got int32"));
}

TEST(GaussianBlurGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Shape> shapes = RandomHwcShapes(6, 1, 90, 200, 3);
  shapes.push_back(Shape{1, 1, 3});
  shapes.push_back(Shape{300, 17, 3});
  const std::vector<float> sigma = RandomVector<float>(shapes.size(), 0.2f, 10.f);
  for (DType type : {DType::kUInt8, DType::kFloat32, DType::kFloat16}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const OpSpec spec = Blur().SetArgInput("sigma", "s");
    const ArgInputs args = {{"sigma", PerSampleScalars(sigma)}};
    ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args), std::string(DTypeName(type)));
  }
  const TensorListCPU gray = RandomBatch({Shape{33, 65, 1}, Shape{5, 5, 1}}, DType::kUInt8, "HWC");
  ExpectSameBytes(RunOp(Blur().SetArg("window_size", 65), Device::kGpu, gray),
                  RunOp(Blur().SetArg("window_size", 65), Device::kCpu, gray), "window 65");
}

INSTANTIATE_TEST_SUITE_P(
    GaussianBlur, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Blur().SetArg("sigma", 1.5), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Blur().SetArg("sigma", 2.5), Device::kGpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu_f32", Blur().SetArg("window_size", 9), Device::kGpu, DType::kFloat32, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
