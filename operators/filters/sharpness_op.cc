// sharpness: torchvision's adjust_sharpness (sharpness.h has the rule and where it differs).
//
// | input                               | output      | per sample   |
// |-------------------------------------|-------------|--------------|
// | HWC or HW; uint8, float16,          | the input's | factor ≥ 0   |
// | bfloat16, float32                   | dtype       |              |
//
// CPU and GPU bit-identical. GPU: one launch per batch, capturable.
#include "operators/image_common/sample_kernel_op.h"
#include "core/op/registry.h"
#include "operators/color/sample_checks.h"
#include "operators/filters/sharpness.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kSchema =
    OpSchema("sharpness")
        .Doc("Blends each interior pixel with a 3x3 smoothed copy: out = factor * in + (1 - factor) * smooth "
             "(torchvision's adjust_sharpness; 0 smooths, 1 keeps, 2 sharpens).")
        .Input("input", {"HWC", "HW"}, kTypes)
        .Output("output")
        .Arg<float>("factor", 1.0f, "Sharpness factor (≥ 0).", PerSample::kAllowed)
        .Min(0)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class SharpnessOp final : public SampleKernelOp<SharpnessSample, SharpnessCpu, SharpnessGpu> {
 public:
  using SampleKernelOp::SampleKernelOp;

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& d = ws.InputDesc(0);
    const Layout layout = CheckInput(spec(), d, 0, {"HWC", "HW"}, kTypes);
    const CheckedSampleArg factor(ws, "factor", 0);
    samples_.assign(d.shapes.size(), SharpnessSample{});
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      SharpnessSample& s = samples_[i];
      s.height = static_cast<int32_t>(d.shapes[i][0]);
      s.width = static_cast<int32_t>(d.shapes[i][1]);
      s.channels = layout == "HWC" ? static_cast<int32_t>(d.shapes[i][2]) : 1;
      s.factor = factor(static_cast<int>(i));
      s.max_value = d.dtype == DType::kUInt8 ? 255.f : 1.f;
    }
    return {d};
  }
};

const OperatorRegistration<SharpnessOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
