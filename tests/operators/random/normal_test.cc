// random.normal: distribution moments on many draws, reproducibility and independence of the key,
// per-sample mean/stddev, errors, GPU vs CPU within the stated tolerance (normal.h), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Normal(int64_t n) { return OpSpec("random.normal", "rn").AddOutput("y").SetArg("shape", std::vector<int64_t>{n}); }

TensorListCPU Draw(const OpSpec& spec, Device device, int batch, const ArgInputs& args = {}, uint64_t seed = 1234,
                   int64_t iteration = 0) {
  OpHarness h(spec, device, batch);
  for (const auto& [name, values] : args) h.SetArgInput(name, values);
  h.set_seed(seed);
  h.set_iteration(iteration);
  if (device == Device::kGpu) {
    cuda::Stream stream = cuda::Stream::Create();
    h.Run(stream.view());
    return h.OutputToHost(0);
  }
  h.Run();
  return h.OutputToHost(0);
}

TEST(RandomNormal, MomentsMatchMeanAndStddev) {
  const TensorListCPU out = Draw(Normal(200000).SetArg("mean", 3.0).SetArg("stddev", 2.0), Device::kCpu, 1);
  const std::vector<float> v = SampleValues(out, 0);
  double sum = 0, sq = 0, within1 = 0;
  for (float x : v) {
    sum += x;
    sq += (x - 3.0) * (x - 3.0);
    within1 += std::abs(x - 3.0) < 2.0;
  }
  const double n = static_cast<double>(v.size());
  EXPECT_NEAR(sum / n, 3.0, 0.02);              // standard error 2 / sqrt(2e5) = 0.0045
  EXPECT_NEAR(std::sqrt(sq / n), 2.0, 0.02);
  EXPECT_NEAR(within1 / n, 0.6827, 0.005);     // one sigma
}

TEST(RandomNormal, ReproducibleAndKeyed) {
  const OpSpec spec = Normal(64);
  const std::vector<float> a = SampleValues(Draw(spec, Device::kCpu, 2), 0);
  EXPECT_EQ(a, SampleValues(Draw(spec, Device::kCpu, 2), 0));
  EXPECT_NE(a, SampleValues(Draw(spec, Device::kCpu, 2), 1));                      // another sample
  EXPECT_NE(a, SampleValues(Draw(spec, Device::kCpu, 2, {}, 1234, 1), 0));         // another iteration
  EXPECT_NE(a, SampleValues(Draw(spec, Device::kCpu, 2, {}, 99), 0));              // another seed
}

TEST(RandomNormal, PerSampleStddevAndFloat16) {
  const TensorListCPU out = Draw(Normal(16).SetArgInput("stddev", "s").SetArg("mean", 5.0).SetArg("dtype", DType::kFloat16),
                                 Device::kCpu, 2, {{"stddev", PerSampleScalars<float>({0.f, 1.f})}});
  EXPECT_EQ(out.dtype(), DType::kFloat16);
  for (float x : SampleValues(out, 0)) EXPECT_EQ(x, 5.f);  // stddev 0: exactly the mean
  int differ = 0;
  for (float x : SampleValues(out, 1)) differ += x != 5.f;
  EXPECT_GT(differ, 10);
}

TEST(RandomNormal, Errors) {
  EXPECT_THAT(ErrorText([] { Draw(Normal(4).SetArgInput("stddev", "s"), Device::kCpu, 2, {{"stddev", PerSampleScalars<float>({1.f, -1.f})}}); }),
              HasSubstr("op \"random.normal\" (rn): argument \"stddev\": expected a value >= 0, got -1.000000 at sample 1"));
  EXPECT_THAT(ErrorText([] { Draw(Normal(4).SetArg("dtype", DType::kInt32), Device::kCpu, 1); }),
              HasSubstr("argument \"dtype\": expected float32 or float16, got int32"));
}

// Tolerance from normal.h: logf/cosf differ between glibc and CUDA by a couple of ulp.
TEST(RandomNormalGpu, MatchesCpuWithinLibmTolerance) {
  CONVEYOR_REQUIRE_GPU();
  const OpSpec spec = Normal(50000).SetArgInput("mean", "m").SetArgInput("stddev", "s");
  const ArgInputs args = {{"mean", PerSampleScalars<float>({0.f, -3.f, 10.f})}, {"stddev", PerSampleScalars<float>({1.f, 0.5f, 4.f})}};
  const TensorListCPU g = Draw(spec, Device::kGpu, 3, args), c = Draw(spec, Device::kCpu, 3, args);
  const float stddev[3] = {1.f, 0.5f, 4.f}, mean[3] = {0.f, -3.f, 10.f};
  for (int s = 0; s < 3; ++s) {
    const std::vector<float> a = SampleValues(g, s), b = SampleValues(c, s);
    ASSERT_EQ(a.size(), b.size());
    float worst = 0;
    for (size_t j = 0; j < a.size(); ++j) worst = std::max(worst, std::abs(a[j] - b[j]));
    EXPECT_LE(worst, 1e-5f * stddev[s] + 1e-6f * std::abs(mean[s])) << "sample " << s;
  }
}

INSTANTIATE_TEST_SUITE_P(RandomNormal, OperatorConformance,
                         ::testing::Values(ConformanceCase{"cpu", Normal(15), Device::kCpu},
                                           ConformanceCase{"gpu", Normal(15), Device::kGpu, DType::kFloat32, true, "HW", 0,
                                                           1e-5}),
                         CaseName);

}  // namespace
}  // namespace conveyor::testing
