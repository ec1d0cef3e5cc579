// pad: DALI's fn.pad for HWC samples — each sample grows at the end of the chosen axes to the
// batch's largest extent, or to a per-sample minimum `shape`, then up to a multiple of `align`;
// the new elements take fill_value.
//
// | input   | dtypes                                  | layouts | output                        |
// |---------|-----------------------------------------|---------|-------------------------------|
// | input   | uint8, int8, uint16, int16, int32,      | HWC     | same dtype; [H', W', C'] with |
// |         | float32 (masks: int32 [H, W, 1])        |         | H' >= H etc.; data at [0, 0]  |
#include <algorithm>
#include <optional>

#include "core/error.h"
#include "operators/pad_paste/window_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kPadSchema =
    OpSchema("pad")
        .Doc("Pads each HWC sample at the end of `axes` with fill_value: to the batch's largest extent, or to a "
             "per-sample minimum `shape`, rounded up to a multiple of `align` (DALI's fn.pad).")
        .Input("input", {"HWC"}, WindowDTypes())
        .Output("padded")
        .Arg<std::vector<int64_t>>("axes", std::vector<int64_t>{},
                                   "Axes to pad (0 = H, 1 = W, 2 = C); [] = every axis.")
        .Arg<std::vector<int64_t>>("shape", std::vector<int64_t>{},
                                   "Minimum extent per axis of `axes` (a value <= 0: the batch's largest extent); [] = "
                                   "the batch's largest extent on every axis.",
                                   PerSample::kAllowed)
        .Arg<std::vector<int64_t>>("align", std::vector<int64_t>{},
                                   "Extents rounded up to a multiple of this: one value, or one per axis of `axes`.",
                                   PerSample::kAllowed)
        .Min(1)
        .Arg<double>("fill_value", 0.0,
                     "Value of the padding; must be representable in the input's dtype (an integer in range for "
                     "integer dtypes).")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class PadOp final : public WindowOp {
 public:
  explicit PadOp(const OpSpec& spec) : WindowOp(spec), fill_(spec.Arg<double>("fill_value")) {
    for (int64_t a : spec.Arg<std::vector<int64_t>>("axes")) {
      if (a < 0 || a > 2) {
        throw InvalidArgument(spec.Describe() + ": axes: axis " + std::to_string(a) +
                              " is out of range for HWC samples (0 = H, 1 = W, 2 = C)");
      }
      if (std::find(axes_.begin(), axes_.end(), static_cast<int>(a)) != axes_.end()) {
        throw InvalidArgument(spec.Describe() + ": axes: axis " + std::to_string(a) + " is given twice");
      }
      axes_.push_back(static_cast<int>(a));
    }
    if (axes_.empty()) axes_ = {0, 1, 2};
  }

 protected:
  void BeginBatch(const Workspace& ws, const TensorListDesc& in) override {
    max_ = {0, 0, 0};
    for (const Shape& s : in.shapes) {
      for (int a = 0; a < 3; ++a) max_[static_cast<size_t>(a)] = std::max(max_[static_cast<size_t>(a)], s[a]);
    }
    dtype_ = in.dtype;
    shape_.emplace(ws, "shape");
    align_.emplace(ws, "align");
  }

  WindowDesc Plan(const Workspace& ws, int i, const Shape& s) override {
    WindowDesc d{};
    d.in_h = d.out_h = s[0];
    d.in_w = d.out_w = s[1];
    d.in_c = d.out_c = s[2];
    int64_t* out[3] = {&d.out_h, &d.out_w, &d.out_c};
    const std::vector<int64_t>& shape = (*shape_)(i);
    const std::vector<int64_t>& align = (*align_)(i);
    const size_t n = axes_.size();
    if (!shape.empty() && shape.size() != n) {
      throw InvalidArgument(Where(i) + ": shape has " + std::to_string(shape.size()) + " values, expected " +
                            std::to_string(n) + " (one per axis of axes)");
    }
    if (!align.empty() && align.size() != 1 && align.size() != n) {
      throw InvalidArgument(Where(i) + ": align has " + std::to_string(align.size()) + " values, expected 1 or " +
                            std::to_string(n) + " (one per axis of axes)");
    }
    for (size_t k = 0; k < n; ++k) {
      const int a = axes_[k];
      int64_t extent = s[a];
      const int64_t want = shape.empty() ? 0 : shape[k];
      extent = want > 0 ? std::max(extent, want) : std::max(extent, max_[static_cast<size_t>(a)]);
      const int64_t al = align.empty() ? 1 : align[align.size() == 1 ? 0 : k];
      if (al < 1) {
        throw InvalidArgument(Where(i) + ": align must be >= 1, got " + std::to_string(al));
      }
      extent = (extent + al - 1) / al * al;
      *out[a] = extent;
    }
    (void)ws;
    SetFill({fill_}, "fill_value", dtype_, i, d);
    return d;
  }

 private:
  double fill_;
  DType dtype_ = DType::kUInt8;
  std::vector<int> axes_;
  std::vector<int64_t> max_ = {0, 0, 0};
  std::optional<SampleArg<std::vector<int64_t>>> shape_, align_;
};

const OperatorRegistration<PadOp> kRegistration(kPadSchema);

}  // namespace
}  // namespace conveyor::ops
