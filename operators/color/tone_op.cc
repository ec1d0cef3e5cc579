// grayscale, gamma, solarize and posterize: the per-element tone operators of the AutoAugment
// set (color.h). max_value: 255 for uint8, 1 for floats.
//
// | op        | input                                   | rule                                       |
// |-----------|-----------------------------------------|--------------------------------------------|
// | grayscale | HWC, 3 channels; uint8/f16/bf16/f32     | every channel = 0.299 R + 0.587 G + 0.114 B|
// | gamma     | HWC or HW; uint8/f16/bf16/f32           | out = gain * max * (in / max)^gamma        |
// | solarize  | HWC or HW; uint8/f16/bf16/f32           | out = in >= threshold ? max - in : in      |
// | posterize | HWC or HW; uint8                        | out = in & (0xFF << (8 - bits))            |
//
// gamma, gain, threshold and bits are per sample. GPU: one launch per batch, capturable.
#include "core/op/registry.h"
#include "operators/color/color_op.h"
#include "operators/color/sample_checks.h"

namespace conveyor::ops {
namespace {

float MaxValue(DType t) { return t == DType::kUInt8 ? 255.f : 1.f; }

const OpSchema kGrayscaleSchema = OpSchema("grayscale")
                                      .Doc("Converts RGB images to gray in 3 channels (BT.601 luma in each).")
                                      .Input("input", {"HWC"}, kColorTypes)
                                      .Output("output")
                                      .Backends({Device::kCpu, Device::kGpu})
                                      .Capturable();

const OpSchema kGammaSchema =
    OpSchema("gamma")
        .Doc("Gamma correction: out = gain * max_value * (in / max_value)^gamma (max_value 255 for uint8, 1 for "
             "floats; negative inputs count as 0).")
        .Input("input", {"HWC", "HW"}, kColorTypes)
        .Output("output")
        .Arg<float>("gamma", 1.0f, "Exponent (> 0; < 1 brightens).", PerSample::kAllowed)
        .Min(0)
        .Arg<float>("gain", 1.0f, "Multiplier applied after the power (≥ 0).", PerSample::kAllowed)
        .Min(0)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const OpSchema kSolarizeSchema =
    OpSchema("solarize")
        .Doc("Inverts every value at or above the threshold: out = in >= threshold ? max_value - in : in.")
        .Input("input", {"HWC", "HW"}, kColorTypes)
        .Output("output")
        .Arg<float>("threshold", -1.0f, "In the input's units; negative (default): 128 for uint8, 0.5 for floats.",
                    PerSample::kAllowed)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const OpSchema kPosterizeSchema = OpSchema("posterize")
                                      .Doc("Keeps the `bits` most significant bits of every uint8 value.")
                                      .Input("input", {"HWC", "HW"}, {DType::kUInt8})
                                      .Output("output")
                                      .Arg<int>("bits", 4, "Bits kept, 0..8.", PerSample::kAllowed)
                                      .Range(0, 8)
                                      .Backends({Device::kCpu, Device::kGpu})
                                      .Capturable();

class GrayscaleOp final : public ColorOp {
 public:
  explicit GrayscaleOp(const OpSpec& spec) : ColorOp(spec, /*rgb=*/true, /*has_dtype=*/false) {}

 protected:
  void BeginBatch(const Workspace&) override {}
  void Fill(const Workspace&, int, DType, ColorSample& s) override {
    double m[9];
    GrayscaleMatrix(m);
    SetMatrix(s, m, 0);
  }
};

class GammaOp final : public ColorOp {
 public:
  explicit GammaOp(const OpSpec& spec) : ColorOp(spec, /*rgb=*/false, /*has_dtype=*/false) {}

 protected:
  void BeginBatch(const Workspace& ws) override {
    gamma_.emplace(ws, "gamma", 0);
    gain_.emplace(ws, "gain", 0);
  }
  void Fill(const Workspace&, int i, DType in_type, ColorSample& s) override {
    const float gamma = (*gamma_)(i);
    if (gamma == 0) ThrowSampleRange(spec(), "gamma", gamma, i, 1e-6, std::numeric_limits<double>::infinity());
    s.mode = ColorMode::kGamma;
    s.p0 = gamma;
    s.p1 = 1.f / MaxValue(in_type);
    s.p2 = (*gain_)(i) * MaxValue(out_type());
  }

 private:
  std::optional<CheckedSampleArg> gamma_, gain_;
};

class SolarizeOp final : public ColorOp {
 public:
  explicit SolarizeOp(const OpSpec& spec) : ColorOp(spec, /*rgb=*/false, /*has_dtype=*/false) {}

 protected:
  void BeginBatch(const Workspace& ws) override { threshold_.emplace(ws, "threshold"); }
  void Fill(const Workspace&, int i, DType in_type, ColorSample& s) override {
    float threshold = (*threshold_)(i);
    if (threshold < 0) threshold = in_type == DType::kUInt8 ? 128.f : 0.5f;
    s.mode = ColorMode::kSolarize;
    s.p0 = threshold;
    s.p1 = MaxValue(in_type);
  }

 private:
  std::optional<CheckedSampleArg> threshold_;
};

class PosterizeOp final : public ColorOp {
 public:
  explicit PosterizeOp(const OpSpec& spec) : ColorOp(spec, /*rgb=*/false, /*has_dtype=*/false, {DType::kUInt8}) {}

 protected:
  void BeginBatch(const Workspace& ws) override { bits_.emplace(ws, "bits"); }
  void Fill(const Workspace&, int i, DType, ColorSample& s) override {
    const int bits = (*bits_)(i);
    if (bits < 0 || bits > 8) ThrowSampleRange(spec(), "bits", bits, i, 0, 8);
    s.mode = ColorMode::kPosterize;
    s.p0 = static_cast<float>((0xFF00u >> bits) & 0xFFu);
  }

 private:
  std::optional<SampleArg<int>> bits_;
};

const OperatorRegistration<GrayscaleOp> kGrayscaleRegistration(kGrayscaleSchema);
const OperatorRegistration<GammaOp> kGammaRegistration(kGammaSchema);
const OperatorRegistration<SolarizeOp> kSolarizeRegistration(kSolarizeSchema);
const OperatorRegistration<PosterizeOp> kPosterizeRegistration(kPosterizeSchema);

}  // namespace
}  // namespace conveyor::ops
