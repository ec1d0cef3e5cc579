// noise.gaussian, noise.salt_and_pepper and noise.shot: CPU results against the draws re-derived in the test
// from Philox (Box–Muller in double), statistics over many values, per-sample arguments, errors,
// shot-noise moments, GPU vs CPU (gaussian and shot within the documented tolerance, salt-and-pepper
// bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/op/philox.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kHarnessSeed = 1234;  // OpHarness's default seed; iteration 0

OpSpec Gauss() { return OpSpec("noise.gaussian", "gn").AddInput("x").AddOutput("y"); }
OpSpec Shot() { return OpSpec("noise.shot", "shot").AddInput("x").AddOutput("y"); }
OpSpec Sp() { return OpSpec("noise.salt_and_pepper", "sp").AddInput("x").AddOutput("y"); }

// Element j of sample s: uniforms 2j and 2j+1 of the sample's sequence, Box–Muller in double.
double StandardNormalAt(const std::string& node, int s, int64_t j) {
  Philox rng(kHarnessSeed, NodeId(node), 0, static_cast<uint32_t>(s));
  rng.Seek(2 * static_cast<uint64_t>(j));
  const double u1 = ((rng.NextU32() >> 8) + 1.0) / 16777216.0, u2 = (rng.NextU32() >> 8) / 16777216.0;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

TEST(NoiseGaussian, MatchesPhiloxBoxMullerInDouble) {
  const std::vector<Shape> shapes = RandomHwcShapes(4, 1, 30, 30, 3);
  const std::vector<float> stddev = RandomVector<float>(4, 0.f, 20.f), mean = RandomVector<float>(4, -5.f, 5.f);
  const ArgInputs args = {{"stddev", PerSampleScalars(stddev)}, {"mean", PerSampleScalars(mean)}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC");
    const OpSpec spec = Gauss().SetArgInput("stddev", "s").SetArgInput("mean", "m");
    const TensorListCPU out = RunOp(spec, Device::kCpu, in, args);
    ExpectSameBytes(RunOp(spec, Device::kCpu, in, args), out, "deterministic");
    for (int s = 0; s < 4; ++s) {
      const size_t i = static_cast<size_t>(s);
      for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
        const double want = At(in, s, j) + mean[i] + stddev[i] * StandardNormalAt("gn", s, j);
        if (type == DType::kUInt8) {
          ASSERT_LE(std::abs(At(out, s, j) - std::clamp(want, 0.0, 255.0)), 0.5 + 1e-3) << s << " " << j;
        } else {
          ASSERT_NEAR(At(out, s, j), want, 1e-5 * (std::abs(want) + stddev[i] * 6)) << s << " " << j;
        }
      }
    }
  }
}

TEST(NoiseGaussian, MomentsMatchMeanAndStddev) {
  const TensorListCPU in = RandomBatch({Shape{200, 300, 3}, Shape{200, 300, 3}}, DType::kFloat32, "HWC");
  const TensorListCPU out = RunOp(Gauss().SetArgInput("stddev", "s"), Device::kCpu, in,
                                  {{"stddev", PerSampleScalars<float>({0.5f, 3.f})}});
  for (int s = 0; s < 2; ++s) {
    double sum = 0, sq = 0;
    const int64_t n = in.shape(s).num_elements();
    for (int64_t j = 0; j < n; ++j) {
      const double d = At(out, s, j) - At(in, s, j);
      sum += d;
      sq += d * d;
    }
    const double sd = s == 0 ? 0.5 : 3.0, m = sum / n;
    EXPECT_NEAR(m, 0, 5 * sd / std::sqrt(n)) << s;
    EXPECT_NEAR(std::sqrt(sq / n - m * m), sd, 0.01 * sd) << s;
  }
}

TEST(NoiseSaltAndPepper, MatchesPhiloxDrawsPerPixel) {
  const std::vector<Shape> shapes = RandomHwcShapes(3, 10, 60, 60, 3);
  const std::vector<float> prob = {0.f, 0.3f, 1.f};
  const TensorListCPU in = RandomBatch(shapes, DType::kUInt8, "HWC");
  const TensorListCPU out = RunOp(Sp().SetArgInput("prob", "p").SetArg("salt_vs_pepper", 0.25), Device::kCpu, in,
                                  {{"prob", PerSampleScalars(prob)}});
  for (int s = 0; s < 3; ++s) {
    int64_t replaced = 0;
    const int64_t pixels = in.shape(s).num_elements() / 3;
    for (int64_t p = 0; p < pixels; ++p) {
      Philox rng(kHarnessSeed, NodeId("sp"), 0, static_cast<uint32_t>(s));
      rng.Seek(2 * static_cast<uint64_t>(p));
      const double u1 = (rng.NextU32() >> 8) / 16777216.0, u2 = (rng.NextU32() >> 8) / 16777216.0;
      const bool noisy = u1 < prob[static_cast<size_t>(s)];
      replaced += noisy;
      for (int c = 0; c < 3; ++c) {
        const float want = noisy ? (u2 < 0.25 ? 255.f : 0.f) : At(in, s, 3 * p + c);
        ASSERT_EQ(At(out, s, 3 * p + c), want) << "sample " << s << " pixel " << p;
      }
    }
    if (s == 1) EXPECT_NEAR(static_cast<double>(replaced) / pixels, 0.3, 5 * std::sqrt(0.21 / pixels));
  }
}

TEST(NoiseSaltAndPepper, PerChannelAndValues) {
  const TensorListCPU in = RandomBatch({Shape{100, 100, 3}}, DType::kFloat32, "HWC", 0.2f, 0.8f);
  const TensorListCPU out = RunOp(Sp().SetArg("prob", 0.5).SetArg("per_channel", true).SetArg("salt_val", 0.9), Device::kCpu, in);
  int64_t mixed = 0, salt = 0, pepper = 0;
  for (int64_t p = 0; p < 10000; ++p) {
    int changed = 0;
    for (int c = 0; c < 3; ++c) {
      const float v = At(out, 0, 3 * p + c);
      changed += v != At(in, 0, 3 * p + c);
      salt += v == 0.9f;
      pepper += v == -1.f;
    }
    mixed += changed == 1 || changed == 2;
  }
  EXPECT_GT(mixed, 4000);  // per channel: pixels partly replaced (expected 7500)
  EXPECT_NEAR(static_cast<double>(salt) / (salt + pepper), 0.5, 0.03);
}

TEST(NoiseShot, MomentsArePoissonAndPerSampleFactor) {
  // Constant images: out / factor ~ Poisson(in / factor), mean in and variance in * factor.
  // λ = 3 (inversion), 8 (inversion), 150 (normal approximation).
  const std::vector<float> level = {3.f, 40.f, 150.f}, factor = {1.f, 5.f, 1.f};
  TensorListCPU in;
  in.Resize({Shape{200, 200}, Shape{200, 200}, Shape{200, 200}}, DType::kFloat32);
  in.set_layout("HW");
  for (int s = 0; s < 3; ++s) {
    float* p = static_cast<float*>(in.raw_sample(s));
    std::fill(p, p + 40000, level[static_cast<size_t>(s)]);
  }
  const TensorListCPU out = RunOp(Shot().SetArgInput("factor", "f"), Device::kCpu, in, {{"factor", PerSampleScalars(factor)}});
  for (int s = 0; s < 3; ++s) {
    const double f = factor[static_cast<size_t>(s)], lambda = level[static_cast<size_t>(s)] / f;
    double sum = 0, sq = 0;
    for (int64_t j = 0; j < 40000; ++j) {
      const double k = At(out, s, j) / f;
      ASSERT_EQ(k, std::floor(k)) << "a whole number of counts";
      sum += k;
      sq += k * k;
    }
    const double mean = sum / 40000, var = sq / 40000 - mean * mean;
    EXPECT_NEAR(mean, lambda, 5 * std::sqrt(lambda / 40000)) << s;
    EXPECT_NEAR(var, lambda, 0.05 * lambda) << s;
  }
  ExpectSameBytes(RunOp(Shot().SetArgInput("factor", "f"), Device::kCpu, in, {{"factor", PerSampleScalars(factor)}}), out,
                  "deterministic");
}

TEST(Noise, Errors) {
  EXPECT_THAT(RunError(Shot().SetArgInput("factor", "f"), RandomBatch({Shape{4, 4, 3}}, DType::kUInt8, "HWC"),
                       {{"factor", PerSampleScalars<float>({0.f})}}),
              HasSubstr("op \"noise.shot\" (shot): argument \"factor\": expected a value > 0, got 0 at sample 0"));
  const TensorListCPU two = RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 3}}, DType::kUInt8, "HWC");
  EXPECT_THAT(RunError(Gauss().SetArgInput("stddev", "s"), two, {{"stddev", PerSampleScalars<float>({1.f, -2.f})}}),
              HasSubstr("op \"noise.gaussian\" (gn): argument \"stddev\": expected a value >= 0, got -2 at sample 1"));
  EXPECT_THAT(RunError(Sp().SetArgInput("prob", "p"), two, {{"prob", PerSampleScalars<float>({1.5f, 0.f})}}),
              HasSubstr("op \"noise.salt_and_pepper\" (sp): argument \"prob\": expected a value in [0, 1], got 1.5 at sample 0"));
  EXPECT_THAT(RunError(Gauss(), RandomBatch({Shape{4}}, DType::kInt32, "")),
              HasSubstr("op \"noise.gaussian\" (gn): input 0: expected dtype uint8, float16, bfloat16 or float32, got int32"));
  OpSpec bad = Sp().SetArg("salt_vs_pepper", 2.0);
  EXPECT_THAT(ErrorText([&] { bad.Validate(); }), HasSubstr("argument \"salt_vs_pepper\""));
}

TEST(NoiseGpu, MatchesCpu) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = RandomHwcShapes(5, 1, 80, 300, 3);
  const ArgInputs args = {{"stddev", PerSampleScalars(RandomVector<float>(5, 0.f, 30.f))}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const OpSpec g = Gauss().SetArgInput("stddev", "s");
    const TensorListCPU gpu = RunOp(g, Device::kGpu, in, args), cpu = RunOp(g, Device::kCpu, in, args);
    for (int s = 0; s < 5; ++s) {
      for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
        ASSERT_NEAR(At(gpu, s, j), At(cpu, s, j), type == DType::kUInt8 ? 1.0 : 1e-5 * 30 * 6) << s << " " << j;
      }
    }
    const OpSpec shot = Shot().SetArg("factor", type == DType::kUInt8 ? 4.0 : 0.01);
    const TensorListCPU gs = RunOp(shot, Device::kGpu, in), cs = RunOp(shot, Device::kCpu, in);
    int64_t apart = 0, total = 0;
    for (int s = 0; s < 5; ++s) {
      for (int64_t j = 0; j < in.shape(s).num_elements(); ++j, ++total) {
        const double d = std::abs(At(gs, s, j) - At(cs, s, j));
        ASSERT_LE(d, type == DType::kUInt8 ? 5.0 : 0.0100001) << "one count step at most";
        apart += d > 0;
      }
    }
    EXPECT_LE(apart, total / 1000 + 1) << "values a CDF step apart (expf) must be rare";
    for (bool per_channel : {false, true}) {
      const OpSpec sp = Sp().SetArg("prob", 0.2).SetArg("per_channel", per_channel);
      ExpectSameBytes(RunOp(sp, Device::kGpu, in), RunOp(sp, Device::kCpu, in), "salt_and_pepper");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Noise, OperatorConformance,
    ::testing::Values(ConformanceCase{"gaussian_cpu", Gauss().SetArg("stddev", 10.0), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gaussian_gpu", Gauss().SetArg("stddev", 10.0), Device::kGpu, DType::kUInt8, true, "HWC", 3, 1.0},
                      ConformanceCase{"gaussian_gpu_f32", Gauss().SetArg("stddev", 0.5), Device::kGpu, DType::kFloat32, true, "HW", 0, 1e-4},
                      ConformanceCase{"shot_cpu", Shot(), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"shot_gpu", Shot().SetArg("factor", 2.0), Device::kGpu, DType::kUInt8, true, "HWC", 3, 3.0},
                      ConformanceCase{"sp_cpu", Sp(), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"sp_gpu", Sp().SetArg("prob", 0.3), Device::kGpu, DType::kUInt8, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
