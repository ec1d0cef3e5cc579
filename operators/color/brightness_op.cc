// brightness and contrast: DALI's split of brightness_contrast, on image_common's affine kernel
// (the same factors as brightness_contrast with the other argument at its identity).
//   brightness: out = brightness_shift * max_value + brightness * in
//   contrast:   out = contrast_center + contrast * (in - contrast_center)
// max_value: 255 for uint8 output, 1 for floats; contrast_center < 0 (default): 128 for uint8
// input, 0.5 for floats.
//
// | input                       | output (`dtype`, default: input's)     | per sample                   |
// |-----------------------------|----------------------------------------|------------------------------|
// | any layout; uint8, float16, | uint8 (clamped, RNE), float16,         | brightness, brightness_shift |
// | bfloat16, float32           | bfloat16, float32                      | / contrast, contrast_center  |
//
// CPU and GPU bit-identical (fmaf on host-computed floats). GPU: one launch per batch, capturable.
#include "core/op/registry.h"
#include "operators/color/sample_checks.h"
#include "operators/image_common/affine_op.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

OpSchema& Common(OpSchema& s) {
  return s.Arg<std::string>("dtype", "input", "Output dtype: input (default), uint8, float16, bfloat16 or float32.")
      .Choices({"input", "uint8", "float16", "bfloat16", "float32"})
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
}

OpSchema MakeBrightnessSchema() {
  OpSchema s = OpSchema("brightness")
                   .Doc("Brightness: out = brightness_shift * max_value + brightness * in (DALI's brightness).")
                   .Input("input", {}, kTypes)
                   .Output("output");
  s.Arg<float>("brightness", 1.0f, "Multiplier (≥ 0).", PerSample::kAllowed)
      .Min(0)
      .Arg<float>("brightness_shift", 0.0f, "Additive shift in units of max_value (255 for uint8, 1 for floats).",
                  PerSample::kAllowed);
  return Common(s);
}

OpSchema MakeContrastSchema() {
  OpSchema s = OpSchema("contrast")
                   .Doc("Contrast: out = contrast_center + contrast * (in - contrast_center) (DALI's contrast).")
                   .Input("input", {}, kTypes)
                   .Output("output");
  s.Arg<float>("contrast", 1.0f, "Contrast factor (≥ 0).", PerSample::kAllowed)
      .Min(0)
      .Arg<float>("contrast_center", -1.0f,
                  "Value that contrast leaves unchanged; negative (default): 128 for uint8 input, 0.5 for floats.",
                  PerSample::kAllowed);
  return Common(s);
}

const OpSchema kBrightnessSchema = MakeBrightnessSchema();
const OpSchema kContrastSchema = MakeContrastSchema();

template <bool kContrast>
class SplitOp final : public AffineOp {
 public:
  explicit SplitOp(const OpSpec& spec) : AffineOp(spec), dtype_name_(spec.Arg<std::string>("dtype")) {}

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    CheckInput(spec(), d, 0, {}, kTypes);
    out_type_ = dtype_name_ == "input" ? d.dtype : ParseDType(dtype_name_);
    const float max_value = out_type_ == DType::kUInt8 ? 255.f : 1.f;
    const float default_center = d.dtype == DType::kUInt8 ? 128.f : 0.5f;
    const CheckedSampleArg factor(ws, kContrast ? "contrast" : "brightness", 0);
    const CheckedSampleArg offset(ws, kContrast ? "contrast_center" : "brightness_shift");
    samples_.assign(d.shapes.size(), AffineSample{});
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      AffineSample& a = samples_[i];
      a.count = d.shapes[i].num_elements();
      a.channels = 1;
      a.mul[0] = factor(si);
      if constexpr (kContrast) {
        float center = offset(si);
        if (center < 0) center = default_center;
        a.add[0] = center * (1.f - a.mul[0]);
      } else {
        a.add[0] = offset(si) * max_value;
      }
    }
    d.dtype = out_type_;
    return {d};
  }

 private:
  std::string dtype_name_;
};

const OperatorRegistration<SplitOp<false>> kBrightnessRegistration(kBrightnessSchema);
const OperatorRegistration<SplitOp<true>> kContrastRegistration(kContrastSchema);

}  // namespace
}  // namespace conveyor::ops
