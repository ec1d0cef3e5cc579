// hsv, hue, saturation and color_twist: DALI's linear approximation of HSV adjustments, one 3x3
// matrix per sample (color.h, HsvMatrix): RGB → YIQ, (I, Q) rotated by `hue` degrees and scaled
// by `saturation`, everything scaled by `value`, back to RGB. color_twist then applies
// brightness/contrast: out = brightness * (contrast_center + contrast * (M in - contrast_center)).
//
// | input                       | output (`dtype`, default: input's) | per sample                   |
// |-----------------------------|------------------------------------|------------------------------|
// | HWC, 3 channels (RGB),      | uint8 (clamped, RNE), float16,     | hue, saturation, value,      |
// | uint8/float16/bfloat16/f32  | bfloat16, float32                  | brightness, contrast         |
//
// The matrix is computed in double on the host and applied as an fmaf chain: CPU and GPU are
// bit-identical. GPU: one launch per batch, capturable.
#include "core/op/registry.h"
#include "operators/color/color_op.h"
#include "operators/color/sample_checks.h"

namespace conveyor::ops {
namespace {

OpSchema ColorSchema(const std::string& name, const std::string& doc) {
  return OpSchema(name).Doc(doc).Input("input", {"HWC"}, kColorTypes).Output("output");
}

OpSchema& WithDtype(OpSchema& s) {
  return s.Arg<std::string>("dtype", "input", "Output dtype: input (default), uint8, float16, bfloat16 or float32.")
      .Choices({"input", "uint8", "float16", "bfloat16", "float32"})
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
}

OpSchema MakeHsvSchema() {
  OpSchema s = ColorSchema("hsv",
                           "Adjusts hue (additive, degrees), saturation and value (multipliers) of RGB images by "
                           "DALI's linear approximation: a rotation and scaling in YIQ space.");
  s.Arg<float>("hue", 0.0f, "Hue delta in degrees (any value; wraps around).", PerSample::kAllowed)
      .Arg<float>("saturation", 1.0f, "Saturation multiplier (≥ 0).", PerSample::kAllowed)
      .Min(0)
      .Arg<float>("value", 1.0f, "Value multiplier (≥ 0).", PerSample::kAllowed)
      .Min(0);
  return WithDtype(s);
}

OpSchema MakeHueSchema() {
  OpSchema s = ColorSchema("hue", "Rotates the hue of RGB images by `hue` degrees (hsv with hue only).");
  s.Arg<float>("hue", 0.0f, "Hue delta in degrees.", PerSample::kAllowed);
  return WithDtype(s);
}

OpSchema MakeSaturationSchema() {
  OpSchema s = ColorSchema("saturation", "Scales the saturation of RGB images (hsv with saturation only).");
  s.Arg<float>("saturation", 1.0f, "Saturation multiplier (≥ 0; 0: gray).", PerSample::kAllowed).Min(0);
  return WithDtype(s);
}

OpSchema MakeColorTwistSchema() {
  OpSchema s = ColorSchema("color_twist",
                           "Hue, saturation, brightness and contrast in one matrix: out = brightness * "
                           "(contrast_center + contrast * (hsv(in) - contrast_center)).");
  s.Arg<float>("brightness", 1.0f, "Brightness multiplier (≥ 0).", PerSample::kAllowed)
      .Min(0)
      .Arg<float>("contrast", 1.0f, "Contrast factor around contrast_center (≥ 0).", PerSample::kAllowed)
      .Min(0)
      .Arg<float>("hue", 0.0f, "Hue delta in degrees.", PerSample::kAllowed)
      .Arg<float>("saturation", 1.0f, "Saturation multiplier (≥ 0).", PerSample::kAllowed)
      .Min(0)
      .Arg<float>("contrast_center", -1.0f,
                  "Value that contrast leaves unchanged; negative (default): 128 for uint8 input, 0.5 for floats.",
                  PerSample::kAllowed);
  return WithDtype(s);
}

const OpSchema kHsvSchema = MakeHsvSchema();
const OpSchema kHueSchema = MakeHueSchema();
const OpSchema kSaturationSchema = MakeSaturationSchema();
const OpSchema kColorTwistSchema = MakeColorTwistSchema();

// Which of the hsv arguments an operator has; absent ones take their identity values.
enum HsvArgs : int { kHue = 1, kSaturation = 2, kValue = 4, kTwist = 8 };

template <int kArgs>
class HsvOp final : public ColorOp {
 public:
  explicit HsvOp(const OpSpec& spec) : ColorOp(spec, /*rgb=*/true, /*has_dtype=*/true) {}

 protected:
  void BeginBatch(const Workspace& ws) override {
    // Absent arguments read as their identity values.
    if (kArgs & kHue) hue_.emplace(ws, "hue");
    if (kArgs & kSaturation) sat_.emplace(ws, "saturation", 0);
    if (kArgs & kValue) val_.emplace(ws, "value", 0);
    if (kArgs & kTwist) {
      brightness_.emplace(ws, "brightness", 0);
      contrast_.emplace(ws, "contrast", 0);
      center_.emplace(ws, "contrast_center");
    }
  }

  void Fill(const Workspace&, int i, DType in_type, ColorSample& s) override {
    const double hue = hue_ ? (*hue_)(i) : 0.0;  // finite: checked by CheckedSampleArg
    double m[9];
    HsvMatrix(hue, sat_ ? (*sat_)(i) : 1.0, val_ ? (*val_)(i) : 1.0, m);
    double offset = 0;
    if constexpr ((kArgs & kTwist) != 0) {
      const double b = (*brightness_)(i), k = (*contrast_)(i);
      double center = (*center_)(i);
      if (center < 0) center = in_type == DType::kUInt8 ? 128.0 : 0.5;
      for (double& v : m) v *= b * k;
      offset = b * center * (1 - k);
    }
    SetMatrix(s, m, offset);
  }

 private:
  std::optional<CheckedSampleArg> hue_, sat_, val_, brightness_, contrast_, center_;
};

const OperatorRegistration<HsvOp<kHue | kSaturation | kValue>> kHsvRegistration(kHsvSchema);
const OperatorRegistration<HsvOp<kHue>> kHueRegistration(kHueSchema);
const OperatorRegistration<HsvOp<kSaturation>> kSaturationRegistration(kSaturationSchema);
const OperatorRegistration<HsvOp<kHue | kSaturation | kTwist>> kColorTwistRegistration(kColorTwistSchema);

}  // namespace
}  // namespace conveyor::ops
