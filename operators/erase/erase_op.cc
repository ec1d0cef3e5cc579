// erase: DALI's operator for 2-D regions of images (axis_names "HW"): each sample's `anchor` and
// `shape` hold (y, x) and (h, w) of up to 16 regions, flattened; the regions get `fill_value`.
//
// | input                               | output      | per sample                               |
// |-------------------------------------|-------------|------------------------------------------|
// | HWC, CHW or HW; uint8, float16,     | the input's | anchor, shape (2 values per region),     |
// | bfloat16, float32                   | dtype       | fill_value (1 value, or 1 per channel)   |
//
// Pixel bounds: start = round(anchor), end = start + round(shape) (after scaling by the extent
// when normalized, after anchor -= shape / 2 when centered_anchor), clipped to the image.
// CPU and GPU bit-identical. GPU: one launch per batch, capturable.
#include <algorithm>
#include <cmath>
#include <limits>

#include "operators/image_common/sample_kernel_op.h"
#include "core/op/registry.h"
#include "operators/color/sample_checks.h"
#include "operators/erase/erase.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kSchema =
    OpSchema("erase")
        .Doc("Erases rectangular regions: pixels inside any region get fill_value. anchor and shape list "
             "(y, x) and (h, w) per region, flattened.")
        .Input("input", {"HWC", "CHW", "HW"}, kTypes)
        .Output("output")
        .Arg<std::vector<double>>("anchor", std::vector<double>{},
                                  "(y, x) of each region's top-left corner (center with centered_anchor); empty: 0.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("shape", std::vector<double>{}, "(h, w) of each region (≥ 0); empty: no region.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("fill_value", std::vector<double>{0.0},
                                  "One value, or one per channel (at most 4).", PerSample::kAllowed)
        .Arg<bool>("normalized_anchor", false, "anchor is a fraction of (H, W).")
        .Arg<bool>("normalized_shape", false, "shape is a fraction of (H, W).")
        .Arg<bool>("normalized", false, "Both anchor and shape are fractions of (H, W).")
        .Arg<bool>("centered_anchor", false, "anchor is the region's center.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class EraseOp final : public SampleKernelOp<EraseSample, EraseCpu, EraseGpu> {
 public:
  explicit EraseOp(const OpSpec& spec)
      : SampleKernelOp(spec),
        normalized_anchor_(spec.Arg<bool>("normalized_anchor") || spec.Arg<bool>("normalized")),
        normalized_shape_(spec.Arg<bool>("normalized_shape") || spec.Arg<bool>("normalized")),
        centered_(spec.Arg<bool>("centered_anchor")) {}

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& d = ws.InputDesc(0);
    const Layout layout = CheckInput(spec(), d, 0, {"HWC", "CHW", "HW"}, kTypes);
    const bool chw = layout == "CHW";  // after crop_mirror_normalize's CHW output (timm's order)
    samples_.assign(d.shapes.size(), EraseSample{});
    const SampleArg<std::vector<double>> shape_arg(ws, "shape"), anchor_arg(ws, "anchor"), fill_arg(ws, "fill_value");
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      EraseSample& s = samples_[i];
      const Shape& shape = d.shapes[i];
      s.height = static_cast<int32_t>(shape[chw ? 1 : 0]);
      s.width = static_cast<int32_t>(shape[chw ? 2 : 1]);
      s.channels = layout == "HWC" ? static_cast<int32_t>(shape[2]) : chw ? static_cast<int32_t>(shape[0]) : 1;
      s.pixel_stride = chw ? 1 : s.channels;
      s.channel_stride = chw ? static_cast<int64_t>(s.height) * s.width : 1;
      FillRegions(shape_arg(static_cast<int>(i)), anchor_arg(static_cast<int>(i)), static_cast<int>(i), s);
      FillValues(fill_arg(static_cast<int>(i)), static_cast<int>(i), s);
    }
    return {d};
  }

 private:
  std::string Where(int sample) const { return " at sample " + std::to_string(sample); }

  void FillRegions(const std::vector<double>& shape, const std::vector<double>& anchor_arg, int i, EraseSample& s) const {
    const std::vector<double> anchor = anchor_arg.empty() ? std::vector<double>(shape.size(), 0.0) : anchor_arg;
    if (shape.size() % 2 != 0 || anchor.size() != shape.size()) {
      throw InvalidArgument(spec().Describe() + ": arguments \"anchor\" and \"shape\": expected 2 values (y, x and h, "
                            "w) per region, as many in each, got " + std::to_string(anchor.size()) + " and " +
                            std::to_string(shape.size()) + Where(i));
    }
    const size_t regions = shape.size() / 2;
    if (regions > static_cast<size_t>(kMaxEraseRegions)) {
      throw InvalidArgument(spec().Describe() + ": argument \"shape\": expected at most " +
                            std::to_string(kMaxEraseRegions) + " regions, got " + std::to_string(regions) + Where(i));
    }
    s.num_regions = static_cast<int32_t>(regions);
    const double extent[2] = {static_cast<double>(s.height), static_cast<double>(s.width)};
    for (size_t r = 0; r < regions; ++r) {
      for (int axis = 0; axis < 2; ++axis) {
        double size = shape[2 * r + axis];
        if (!(size >= 0)) ThrowSampleRange(spec(), "shape", size, i, 0, std::numeric_limits<double>::infinity());
        double start = anchor[2 * r + axis];
        if (!std::isfinite(start)) {
          throw InvalidArgument(spec().Describe() + ": argument \"anchor\": expected finite values, got " +
                                FormatArgNumber(start) + Where(i));
        }
        if (normalized_shape_) size *= extent[axis];
        if (normalized_anchor_) start *= extent[axis];
        if (centered_) start -= size / 2;
        const double lo = std::nearbyint(start), hi = lo + std::nearbyint(size);
        s.regions[r][axis] = static_cast<int32_t>(std::clamp(lo, 0.0, extent[axis]));
        s.regions[r][axis + 2] = static_cast<int32_t>(std::clamp(hi, 0.0, extent[axis]));
      }
    }
  }

  void FillValues(const std::vector<double>& fill, int i, EraseSample& s) const {
    if (fill.size() == 1) {
      for (float& f : s.fill) f = static_cast<float>(fill[0]);
      return;
    }
    if (static_cast<int64_t>(fill.size()) != s.channels || s.channels > kMaxEraseFill) {
      throw InvalidArgument(spec().Describe() + ": argument \"fill_value\": expected 1 value or 1 per channel (" +
                            std::to_string(s.channels) + ", at most " + std::to_string(kMaxEraseFill) + "), got " +
                            std::to_string(fill.size()) + Where(i));
    }
    for (size_t c = 0; c < fill.size(); ++c) s.fill[c] = static_cast<float>(fill[c]);
  }

  bool normalized_anchor_, normalized_shape_, centered_;
};

const OperatorRegistration<EraseOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
