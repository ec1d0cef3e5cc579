// grid_mask: DALI's operator (grid_mask.h has the rule).
//
// | input                               | output      | per sample                                |
// |-------------------------------------|-------------|-------------------------------------------|
// | HWC or HW; uint8, float16,          | the input's | tile ≥ 1, ratio in [0, 1], angle (rad),   |
// | bfloat16, float32                   | dtype       | shift_x, shift_y                          |
//
// CPU and GPU bit-identical. GPU: one launch per batch, capturable.
#include <cmath>

#include "operators/image_common/sample_kernel_op.h"
#include "core/op/registry.h"
#include "operators/color/sample_checks.h"
#include "operators/erase/grid_mask.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kSchema =
    OpSchema("grid_mask")
        .Doc("GridMask: zeroes squares of side ratio * tile repeating every tile pixels in x and y, the grid rotated by "
             "angle about the origin and then shifted.")
        .Input("input", {"HWC", "HW"}, kTypes)
        .Output("output")
        .Arg<int>("tile", 100, "Grid period in pixels (≥ 1).", PerSample::kAllowed)
        .Min(1)
        .Arg<float>("ratio", 0.5f, "Black square side / tile, in [0, 1].", PerSample::kAllowed)
        .Range(0, 1)
        .Arg<float>("angle", 0.0f, "Rotation of the grid in radians.", PerSample::kAllowed)
        .Arg<float>("shift_x", 0.0f, "x of the translation applied after the rotation (pixels).", PerSample::kAllowed)
        .Arg<float>("shift_y", 0.0f, "y of the translation applied after the rotation (pixels).", PerSample::kAllowed)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class GridMaskOp final : public SampleKernelOp<GridMaskSample, GridMaskCpu, GridMaskGpu> {
 public:
  using SampleKernelOp::SampleKernelOp;

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& d = ws.InputDesc(0);
    const Layout layout = CheckInput(spec(), d, 0, {"HWC", "HW"}, kTypes);
    const SampleArg<int> tile(ws, "tile");
    const CheckedSampleArg ratio(ws, "ratio", 0, 1), angle(ws, "angle"), shift_x(ws, "shift_x"), shift_y(ws, "shift_y");
    samples_.assign(d.shapes.size(), GridMaskSample{});
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      GridMaskSample& s = samples_[i];
      s.height = static_cast<int32_t>(d.shapes[i][0]);
      s.width = static_cast<int32_t>(d.shapes[i][1]);
      s.channels = layout == "HWC" ? static_cast<int32_t>(d.shapes[i][2]) : 1;
      const int t = tile(si);
      if (t < 1) ThrowSampleRange(spec(), "tile", t, si, 1, std::numeric_limits<double>::infinity());
      const double a = angle(si);
      s.cos_a = static_cast<float>(std::cos(a));
      s.sin_a = static_cast<float>(std::sin(a));
      s.shift_x = shift_x(si);
      s.shift_y = shift_y(si);
      s.inv_tile = static_cast<float>(1.0 / t);
      s.ratio = ratio(si);
    }
    return {d};
  }
};

const OperatorRegistration<GridMaskOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
