// gaussian_blur: DALI's operator for images (2-D, one sigma for both axes), separable, border
// reflect-101 (gaussian_blur.h).
//
// | input                               | output      | arguments (per sample)                     |
// |-------------------------------------|-------------|--------------------------------------------|
// | HWC (1..4 channels) or HW; uint8,   | the input's | sigma ≥ 0, window_size (odd, ≥ 0); one of  |
// | float16, bfloat16, float32          | dtype       | them > 0; window ≤ 65 (sigma ≤ 10.66)      |
//
// Window from sigma as DALI: 2 * ceil(3 sigma) + 1; sigma from window: (radius - 1) * 0.3 + 0.8.
// CPU and GPU bit-identical. GPU: one launch per batch, capturable.
#include <cmath>

#include "operators/image_common/sample_kernel_op.h"
#include "core/op/registry.h"
#include "operators/color/sample_checks.h"
#include "operators/filters/gaussian_blur.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kSchema =
    OpSchema("gaussian_blur")
        .Doc("Gaussian blur of images (H and W), separable, border reflect-101. Window from sigma: "
             "2 * ceil(3 * sigma) + 1; sigma from window: (radius - 1) * 0.3 + 0.8.")
        .Input("input", {"HWC", "HW"}, kTypes)
        .Output("output")
        .Arg<float>("sigma", 0.0f, "Standard deviation in pixels (≥ 0; 0: from window_size).", PerSample::kAllowed)
        .Min(0)
        .Arg<int>("window_size", 0, "Kernel diameter, odd (0: from sigma); at most 65.", PerSample::kAllowed)
        .Range(0, 2 * kMaxBlurRadius + 1)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class GaussianBlurOp final : public SampleKernelOp<BlurSample, GaussianBlurCpu, GaussianBlurGpu> {
 public:
  using SampleKernelOp::SampleKernelOp;

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& d = ws.InputDesc(0);
    const Layout layout = CheckInput(spec(), d, 0, {"HWC", "HW"}, kTypes);
    samples_.assign(d.shapes.size(), BlurSample{});
    const CheckedSampleArg sigma_arg(ws, "sigma", 0);
    const SampleArg<int> window_arg(ws, "window_size");
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      const Shape& shape = d.shapes[i];
      const int64_t channels = layout == "HWC" ? shape[2] : 1;
      if (channels < 1 || channels > kMaxBlurChannels) {
        throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(si) + " has " +
                              std::to_string(channels) + " channels, expected 1 to " + std::to_string(kMaxBlurChannels));
      }
      const float sigma = sigma_arg(si);
      const int window = window_arg(si);
      if (window < 0 || window > 2 * kMaxBlurRadius + 1 || (window > 0 && window % 2 == 0)) {
        throw InvalidArgument(spec().Describe() + ": argument \"window_size\": expected 0 or an odd value in [1, " +
                              std::to_string(2 * kMaxBlurRadius + 1) + "], got " + std::to_string(window) +
                              " at sample " + std::to_string(si));
      }
      if (window == 0 && sigma == 0) {
        throw InvalidArgument(spec().Describe() + ": sample " + std::to_string(si) +
                              ": expected sigma > 0 or window_size > 0, got both 0");
      }
      if (window == 0 && std::ceil(3.0 * sigma) > kMaxBlurRadius) {
        throw InvalidArgument(spec().Describe() + ": argument \"sigma\": expected a value <= " +
                              FormatArgNumber(kMaxBlurRadius / 3.0) + " (window 2 * ceil(3 sigma) + 1 <= " +
                              std::to_string(2 * kMaxBlurRadius + 1) + "), got " + FormatArgNumber(sigma) +
                              " at sample " + std::to_string(si));
      }
      BlurSample& s = samples_[i];
      s.height = static_cast<int32_t>(shape[0]);
      s.width = static_cast<int32_t>(shape[1]);
      s.channels = static_cast<int32_t>(channels);
      s.radius = GaussianWeights(sigma, window, s.weights);
    }
    return {d};
  }
};

const OperatorRegistration<GaussianBlurOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
