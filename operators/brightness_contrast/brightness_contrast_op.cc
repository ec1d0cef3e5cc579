// brightness_contrast, DALI's formula:
//   out = brightness_shift * max_value + brightness * (contrast_center + contrast * (in - contrast_center))
// max_value: 255 for uint8 output, 1 for float outputs; contrast_center default: 128 for uint8
// input (as DALI), 0.5 for float inputs.
//
// | input                      | output (`dtype`, default: the input's) | per sample                  |
// |----------------------------|----------------------------------------|-----------------------------|
// | any layout, uint8, float16,| uint8 (clamped, RNE), float16,         | brightness, brightness_shift|
// | bfloat16, float32          | bfloat16, float32                      | contrast, contrast_center   |
//
// Computed as fmaf(in, brightness * contrast, brightness_shift * max + brightness * center *
// (1 - contrast)) with the factors in float on the host (image_common/affine.h): CPU and GPU
// bit-identical. GPU: one launch per batch, capturable.
#include "core/op/registry.h"
#include "operators/image_common/affine_op.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kSchema =
    OpSchema("brightness_contrast")
        .Doc("Adjusts brightness and contrast: out = brightness_shift * max_value + brightness * (contrast_center + "
             "contrast * (in - contrast_center)).")
        .Input("input", {}, kTypes)
        .Output("output")
        .Arg<float>("brightness", 1.0f, "Multiplier.", PerSample::kAllowed)
        .Arg<float>("brightness_shift", 0.0f, "Additive shift in units of the output's max value (255 for uint8, 1 for floats).",
                    PerSample::kAllowed)
        .Arg<float>("contrast", 1.0f, "Contrast factor around contrast_center.", PerSample::kAllowed)
        .Arg<float>("contrast_center", -1.0f,
                    "Value that contrast leaves unchanged; negative (default): 128 for uint8 input, 0.5 for floats.",
                    PerSample::kAllowed)
        .Arg<std::string>("dtype", "input", "Output dtype: input (default), uint8, float16, bfloat16 or float32.")
        .Choices({"input", "uint8", "float16", "bfloat16", "float32"})
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class BrightnessContrastOp final : public AffineOp {
 public:
  explicit BrightnessContrastOp(const OpSpec& spec) : AffineOp(spec), dtype_name_(spec.Arg<std::string>("dtype")) {}

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    CheckInput(spec(), d, 0, {}, kTypes);
    out_type_ = dtype_name_ == "input" ? d.dtype : ParseDType(dtype_name_);
    const float max_value = out_type_ == DType::kUInt8 ? 255.f : 1.f;
    const float default_center = d.dtype == DType::kUInt8 ? 128.f : 0.5f;
    samples_.assign(d.shapes.size(), AffineSample{});
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      const float b = ws.ArgForSample<float>("brightness", si);
      const float shift = ws.ArgForSample<float>("brightness_shift", si);
      const float k = ws.ArgForSample<float>("contrast", si);
      float center = ws.ArgForSample<float>("contrast_center", si);
      if (center < 0) center = default_center;
      AffineSample& a = samples_[i];
      a.count = d.shapes[i].num_elements();
      a.channels = 1;
      a.mul[0] = b * k;
      a.add[0] = shift * max_value + b * center * (1.f - k);
    }
    d.dtype = out_type_;
    return {d};
  }

 private:
  std::string dtype_name_;
};

const OperatorRegistration<BrightnessContrastOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
