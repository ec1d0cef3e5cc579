// hsv, hue, saturation, color_twist, grayscale, gamma, solarize, posterize: CPU results against
// per-pixel references in double computed another way (YIQ in polar form, a Cramer solve back to
// RGB; exact HSV where DALI's approximation is exact), per-sample arguments, errors, GPU vs CPU,
// conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Op(const std::string& op) { return OpSpec(op, op + "_node").AddInput("x").AddOutput("y"); }

// DALI's published RGB → YIQ rows (NTSC 1953).
constexpr double kYiq[3][3] = {{0.299, 0.587, 0.114}, {0.595716, -0.274453, -0.321263}, {0.211456, -0.522591, 0.311135}};

double Det(const double m[3][3]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// Reference hsv of one pixel: to YIQ, chroma (I, Q) as radius and angle, angle += hue, radius *=
// saturation, all *= value, then RGB by solving kYiq * rgb = yiq with Cramer's rule.
void HsvReference(const double rgb[3], double hue, double sat, double val, double out[3]) {
  double yiq[3];
  for (int r = 0; r < 3; ++r) yiq[r] = kYiq[r][0] * rgb[0] + kYiq[r][1] * rgb[1] + kYiq[r][2] * rgb[2];
  const double radius = std::hypot(yiq[1], yiq[2]) * sat * val;
  const double angle = std::atan2(yiq[2], yiq[1]) + hue * M_PI / 180;
  const double t[3] = {yiq[0] * val, radius * std::cos(angle), radius * std::sin(angle)};
  const double det = Det(kYiq);
  for (int c = 0; c < 3; ++c) {
    double m[3][3];
    for (int r = 0; r < 3; ++r) {
      for (int k = 0; k < 3; ++k) m[r][k] = k == c ? t[r] : kYiq[r][k];
    }
    out[c] = Det(m) / det;
  }
}

// Uint8 outputs: the reference clamped must round to the value (0.5 plus float slack); floats: close.
void ExpectNear(float got, double want, DType type, const std::string& where) {
  if (type == DType::kUInt8) {
    EXPECT_LE(std::abs(got - std::clamp(want, 0.0, 255.0)), 0.5 + 2e-3) << where << " want " << want;
  } else {
    EXPECT_LE(std::abs(got - want), 2e-5 * std::max(1.0, std::abs(want))) << where;
  }
}

struct HsvArgs {
  std::vector<float> hue, sat, val;
};

HsvArgs RandomHsvArgs(int n) {
  return {RandomVector<float>(static_cast<size_t>(n), -400.f, 400.f), RandomVector<float>(static_cast<size_t>(n), 0.f, 2.f),
          RandomVector<float>(static_cast<size_t>(n), 0.f, 1.5f)};
}

TEST(Hsv, MatchesPolarYiqReferenceInDouble) {
  constexpr int kN = 5;
  const std::vector<Shape> shapes = RandomHwcShapes(kN, 1, 20, 30, 3);
  const HsvArgs a = RandomHsvArgs(kN);
  const ArgInputs args = {{"hue", PerSampleScalars(a.hue)}, {"saturation", PerSampleScalars(a.sat)},
                          {"value", PerSampleScalars(a.val)}};
  const OpSpec spec = Op("hsv").SetArgInput("hue", "h").SetArgInput("saturation", "s").SetArgInput("value", "v");
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const TensorListCPU out = RunOp(spec, Device::kCpu, in, args);
    ASSERT_EQ(out.dtype(), type);
    for (int s = 0; s < kN; ++s) {
      for (int64_t p = 0; p < shapes[static_cast<size_t>(s)].num_elements() / 3; ++p) {
        const double rgb[3] = {At(in, s, 3 * p), At(in, s, 3 * p + 1), At(in, s, 3 * p + 2)};
        double want[3];
        HsvReference(rgb, a.hue[static_cast<size_t>(s)], a.sat[static_cast<size_t>(s)], a.val[static_cast<size_t>(s)], want);
        for (int c = 0; c < 3; ++c) {
          ExpectNear(At(out, s, 3 * p + c), want[c], type, "sample " + std::to_string(s) + " pixel " + std::to_string(p));
        }
      }
    }
  }
}

// Exact HSV in double (max/min hexcone model), for the cases where the linear approximation is exact.
void RgbToHsv(const double c[3], double& h, double& s, double& v) {
  const double mx = std::max({c[0], c[1], c[2]}), mn = std::min({c[0], c[1], c[2]}), d = mx - mn;
  v = mx;
  s = mx > 0 ? d / mx : 0;
  if (d == 0) { h = 0; return; }
  if (mx == c[0]) h = std::fmod((c[1] - c[2]) / d + 6, 6);
  else if (mx == c[1]) h = (c[2] - c[0]) / d + 2;
  else h = (c[0] - c[1]) / d + 4;
  h *= 60;
}
void HsvToRgb(double h, double s, double v, double c[3]) {
  for (int k = 0; k < 3; ++k) {
    const double n = std::fmod((k == 0 ? 5 : k == 1 ? 3 : 1) + h / 60, 6);
    c[k] = v - v * s * std::max(0.0, std::min({n, 4 - n, 1.0}));
  }
}

TEST(Hsv, ValueOnlyMatchesExactHsvRoundTrip) {
  // Scaling V alone is linear in RGB, so DALI's approximation equals true HSV there.
  const std::vector<Shape> shapes = RandomHwcShapes(3, 1, 16, 16, 3);
  const std::vector<float> val = RandomVector<float>(3, 0.25f, 1.75f);
  const TensorListCPU in = RandomBatch(shapes, DType::kFloat32, "HWC", 0.f, 1.f);
  const TensorListCPU out = RunOp(Op("hsv").SetArgInput("value", "v"), Device::kCpu, in, {{"value", PerSampleScalars(val)}});
  for (int s = 0; s < 3; ++s) {
    for (int64_t p = 0; p < shapes[static_cast<size_t>(s)].num_elements() / 3; ++p) {
      const double rgb[3] = {At(in, s, 3 * p), At(in, s, 3 * p + 1), At(in, s, 3 * p + 2)};
      double h, sat, v, want[3];
      RgbToHsv(rgb, h, sat, v);
      HsvToRgb(h, sat, v * val[static_cast<size_t>(s)], want);
      for (int c = 0; c < 3; ++c) EXPECT_NEAR(At(out, s, 3 * p + c), want[c], 1e-5) << "sample " << s;
    }
  }
}

TEST(Hsv, IdentityArgumentsKeepUint8BytesAndZeroSaturationIsLuma) {
  const TensorListCPU in = RandomBatch(RandomHwcShapes(2, 1, 30, 30, 3), DType::kUInt8, "HWC");
  ExpectSameBytes(RunOp(Op("hsv"), Device::kCpu, in), in, "identity");
  ExpectSameBytes(RunOp(Op("hsv").SetArg("hue", 360.0), Device::kCpu, in), in, "hue 360");
  const TensorListCPU gray = RunOp(Op("saturation").SetArg("saturation", 0.0), Device::kCpu, in);
  for (int s = 0; s < 2; ++s) {
    for (int64_t p = 0; p < in.shape(s).num_elements() / 3; ++p) {
      const double luma = 0.299 * At(in, s, 3 * p) + 0.587 * At(in, s, 3 * p + 1) + 0.114 * At(in, s, 3 * p + 2);
      for (int c = 0; c < 3; ++c) ExpectNear(At(gray, s, 3 * p + c), luma, DType::kUInt8, "gray");
    }
  }
  ExpectSameBytes(RunOp(Op("grayscale"), Device::kCpu, in), gray, "grayscale = saturation 0");
}

TEST(Hsv, HueAndSaturationOpsEqualHsvWithOneArgument) {
  const TensorListCPU in = RandomBatch(RandomHwcShapes(3, 1, 20, 20, 3), DType::kFloat32, "HWC", 0.f, 1.f);
  ExpectSameBytes(RunOp(Op("hue").SetArg("hue", 33.0), Device::kCpu, in),
                  RunOp(Op("hsv").SetArg("hue", 33.0), Device::kCpu, in), "hue");
  ExpectSameBytes(RunOp(Op("saturation").SetArg("saturation", 1.7), Device::kCpu, in),
                  RunOp(Op("hsv").SetArg("saturation", 1.7), Device::kCpu, in), "saturation");
}

TEST(ColorTwist, MatchesBrightnessContrastOverHsvInDouble) {
  constexpr int kN = 4;
  const std::vector<Shape> shapes = RandomHwcShapes(kN, 1, 12, 12, 3);
  const HsvArgs a = RandomHsvArgs(kN);
  const std::vector<float> b = RandomVector<float>(kN, 0.5f, 1.5f), k = RandomVector<float>(kN, 0.f, 2.f);
  const ArgInputs args = {{"hue", PerSampleScalars(a.hue)}, {"saturation", PerSampleScalars(a.sat)},
                          {"brightness", PerSampleScalars(b)}, {"contrast", PerSampleScalars(k)}};
  const OpSpec spec = Op("color_twist").SetArgInput("hue", "h").SetArgInput("saturation", "s")
                          .SetArgInput("brightness", "b").SetArgInput("contrast", "k");
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const TensorListCPU out = RunOp(spec, Device::kCpu, in, args);
    const double center = type == DType::kUInt8 ? 128 : 0.5;
    for (int s = 0; s < kN; ++s) {
      const size_t i = static_cast<size_t>(s);
      for (int64_t p = 0; p < shapes[i].num_elements() / 3; ++p) {
        const double rgb[3] = {At(in, s, 3 * p), At(in, s, 3 * p + 1), At(in, s, 3 * p + 2)};
        double h[3];
        HsvReference(rgb, a.hue[i], a.sat[i], 1.0, h);
        for (int c = 0; c < 3; ++c) {
          ExpectNear(At(out, s, 3 * p + c), b[i] * (center + k[i] * (h[c] - center)), type, "sample " + std::to_string(s));
        }
      }
    }
  }
}

TEST(Tone, GammaSolarizePosterizeFollowTheirFormulas) {
  const std::vector<Shape> shapes = RandomHwcShapes(3, 1, 20, 20, 3);
  const std::vector<float> gamma = RandomVector<float>(3, 0.3f, 3.f);
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const double max = type == DType::kUInt8 ? 255 : 1;
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    const TensorListCPU g = RunOp(Op("gamma").SetArgInput("gamma", "g").SetArg("gain", 0.9), Device::kCpu, in,
                                  {{"gamma", PerSampleScalars(gamma)}});
    const TensorListCPU sol = RunOp(Op("solarize"), Device::kCpu, in);
    for (int s = 0; s < 3; ++s) {
      for (int64_t j = 0; j < shapes[static_cast<size_t>(s)].num_elements(); ++j) {
        const double x = At(in, s, j);
        ExpectNear(At(g, s, j), 0.9 * max * std::pow(x / max, gamma[static_cast<size_t>(s)]), type, "gamma");
        EXPECT_EQ(At(sol, s, j), x >= max / 2 + (type == DType::kUInt8 ? 0.5 : 0) ? max - x : x) << "solarize";
      }
    }
  }
  const TensorListCPU in = RandomBatch(shapes, DType::kUInt8, "HWC");
  const TensorListCPU post = RunOp(Op("posterize").SetArgInput("bits", "b"), Device::kCpu, in,
                                   {{"bits", PerSampleScalars<int32_t>({0, 3, 8})}});
  for (int s = 0; s < 3; ++s) {
    const int keep = s == 1 ? 32 : 1;  // 2^(8 - bits) for bits 3 and 8 (bits 0 keeps nothing)
    for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
      const int x = static_cast<int>(At(in, s, j));
      EXPECT_EQ(At(post, s, j), s == 0 ? 0 : x / keep * keep) << "posterize sample " << s;
    }
  }
}

TEST(Color, Errors) {
  EXPECT_THAT(RunError(Op("hsv"), RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 4}}, DType::kUInt8, "HWC")),
              HasSubstr("op \"hsv\" (hsv_node): input 0: sample 1 has 4 channels, expected 3 (RGB)"));
  EXPECT_THAT(RunError(Op("color_twist"), RandomBatch({Shape{3, 4, 4}}, DType::kUInt8, "CHW")),
              HasSubstr("op \"color_twist\" (color_twist_node): input 0: expected layout HWC, got CHW"));
  EXPECT_THAT(RunError(Op("hue"), RandomBatch({Shape{4, 4, 3}}, DType::kInt16, "HWC")),
              HasSubstr("op \"hue\" (hue_node): input 0: expected dtype uint8, float16, bfloat16 or float32, got int16"));
  EXPECT_THAT(RunError(Op("hsv").SetArgInput("saturation", "s"), RandomBatch({Shape{2, 2, 3}, Shape{2, 2, 3}}, DType::kUInt8, "HWC"),
                       {{"saturation", PerSampleScalars<float>({1.f, -0.5f})}}),
              HasSubstr("op \"hsv\" (hsv_node): argument \"saturation\": expected a value >= 0, got -0.5 at sample 1"));
  EXPECT_THAT(RunError(Op("hsv").SetArgInput("hue", "h"), RandomBatch({Shape{2, 2, 3}}, DType::kUInt8, "HWC"),
                       {{"hue", PerSampleScalars<float>({NAN})}}),
              HasSubstr("argument \"hue\": expected a finite value, got nan at sample 0"));
  EXPECT_THAT(RunError(Op("gamma").SetArgInput("gamma", "g"), RandomBatch({Shape{2, 2, 3}}, DType::kUInt8, "HWC"),
                       {{"gamma", PerSampleScalars<float>({0.f})}}),
              HasSubstr("op \"gamma\" (gamma_node): argument \"gamma\": expected a value >= 1e-06, got 0 at sample 0"));
  EXPECT_THAT(RunError(Op("posterize"), RandomBatch({Shape{2, 2, 3}}, DType::kFloat32, "HWC")),
              HasSubstr("op \"posterize\" (posterize_node): input 0: expected dtype uint8, got float32"));
  EXPECT_THAT(RunError(Op("posterize").SetArgInput("bits", "b"), RandomBatch({Shape{2, 2, 3}}, DType::kUInt8, "HWC"),
                       {{"bits", PerSampleScalars<int32_t>({9})}}),
              HasSubstr("argument \"bits\": expected a value in [0, 8], got 9 at sample 0"));
  OpSpec bad = Op("hsv").SetArg("saturation", -1.0);
  EXPECT_THAT(ErrorText([&] { bad.Validate(); }), HasSubstr("argument \"saturation\""));
}

TEST(ColorGpu, MatchesCpu) {
  CONVEYOR_REQUIRE_GPU();
  constexpr int kN = 6;
  const std::vector<Shape> shapes = RandomHwcShapes(kN, 1, 70, 301, 3);
  const HsvArgs a = RandomHsvArgs(kN);
  const ArgInputs args = {{"hue", PerSampleScalars(a.hue)}, {"saturation", PerSampleScalars(a.sat)},
                          {"value", PerSampleScalars(a.val)}, {"gamma", PerSampleScalars(RandomVector<float>(kN, 0.3f, 3.f))}};
  const std::vector<std::pair<OpSpec, ArgInputs>> cases = {
      {Op("hsv").SetArgInput("hue", "h").SetArgInput("saturation", "s").SetArgInput("value", "v"), args},
      {Op("color_twist").SetArgInput("hue", "h").SetArg("contrast", 1.3).SetArg("brightness", 0.8), args},
      {Op("grayscale"), {}}, {Op("solarize"), {}}, {Op("hsv").SetArg("dtype", std::string("float16")), {}}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC", 0.f, 1.f);
    for (const auto& [spec, spec_args] : cases) {
      ArgInputs used;
      for (const auto& [name, v] : spec_args) if (spec.arg_inputs().count(name)) used.emplace(name, v);
      ExpectSameBytes(RunOp(spec, Device::kGpu, in, used), RunOp(spec, Device::kCpu, in, used), spec.op() + " " + std::string(DTypeName(type)));
    }
    // gamma: powf differs by libm (color.h): within 1 for uint8, 4e-7 relative for floats.
    const OpSpec g = Op("gamma").SetArgInput("gamma", "g");
    const ArgInputs ga = {{"gamma", args.at("gamma")}};
    const TensorListCPU gpu = RunOp(g, Device::kGpu, in, ga), cpu = RunOp(g, Device::kCpu, in, ga);
    for (int s = 0; s < kN; ++s) {
      for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
        EXPECT_NEAR(At(gpu, s, j), At(cpu, s, j), type == DType::kUInt8 ? 1.0 : 4e-7 * std::abs(At(cpu, s, j)) + 1e-30);
      }
    }
  }
  // uint8 tones go through a per-sample table on the GPU (byte_lut.cuh): the same bytes, per-sample
  // parameters included.
  const TensorListCPU u8 = RandomBatch(shapes, DType::kUInt8, "HWC");
  const ArgInputs tone = {{"threshold", PerSampleScalars(RandomVector<float>(kN, 0.f, 260.f))},
                          {"bits", PerSampleScalars<int32_t>({0, 1, 3, 5, 7, 8})}};
  const OpSpec sol = Op("solarize").SetArgInput("threshold", "t"), post = Op("posterize").SetArgInput("bits", "b");
  ExpectSameBytes(RunOp(sol, Device::kGpu, u8, {{"threshold", tone.at("threshold")}}),
                  RunOp(sol, Device::kCpu, u8, {{"threshold", tone.at("threshold")}}), "solarize per-sample thresholds");
  ExpectSameBytes(RunOp(post, Device::kGpu, u8, {{"bits", tone.at("bits")}}),
                  RunOp(post, Device::kCpu, u8, {{"bits", tone.at("bits")}}), "posterize per-sample bits");
}

ConformanceCase Cpu(const std::string& name, OpSpec spec) { return {name, std::move(spec), Device::kCpu, DType::kUInt8, true, "HWC", 3}; }
ConformanceCase Gpu(const std::string& name, OpSpec spec, double tol = 0) {
  return {name, std::move(spec), Device::kGpu, DType::kUInt8, true, "HWC", 3, tol};
}

INSTANTIATE_TEST_SUITE_P(
    Color, OperatorConformance,
    ::testing::Values(Cpu("hsv_cpu", Op("hsv").SetArg("hue", 20.0)), Gpu("hsv_gpu", Op("hsv").SetArg("saturation", 1.4)),
                      Cpu("hue_cpu", Op("hue").SetArg("hue", -50.0)), Gpu("hue_gpu", Op("hue").SetArg("hue", 90.0)),
                      Cpu("saturation_cpu", Op("saturation")), Gpu("saturation_gpu", Op("saturation").SetArg("saturation", 0.5)),
                      Cpu("color_twist_cpu", Op("color_twist").SetArg("contrast", 1.2)),
                      Gpu("color_twist_gpu", Op("color_twist").SetArg("brightness", 0.7)),
                      Cpu("grayscale_cpu", Op("grayscale")), Gpu("grayscale_gpu", Op("grayscale")),
                      Cpu("gamma_cpu", Op("gamma").SetArg("gamma", 2.2)), Gpu("gamma_gpu", Op("gamma").SetArg("gamma", 0.5), 1),
                      Cpu("solarize_cpu", Op("solarize")), Gpu("solarize_gpu", Op("solarize").SetArg("threshold", 100.0)),
                      Cpu("posterize_cpu", Op("posterize")), Gpu("posterize_gpu", Op("posterize").SetArg("bits", 2))),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
