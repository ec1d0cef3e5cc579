// paste: DALI's fn.paste — each HWC image onto a canvas `ratio` times larger (at least
// min_canvas_size per side), placed at paste_x / paste_y, the rest filled with fill_value. The
// pixel companion of bbox_paste (operators/detection), which moves the boxes the same way.
//
// | input   | dtypes                                  | layouts | output                         |
// |---------|-----------------------------------------|---------|--------------------------------|
// | images  | uint8, int8, uint16, int16, int32,      | HWC     | same dtype; (H', W', C)        |
// |         | float32 (masks: int32 [H, W, 1])        |         |                                |
//
// H' = max(round(H * ratio), round(min_canvas_size)), W' likewise; the image's top-left pixel
// lands at (round(paste_y * (H' - H)), round(paste_x * (W' - W))); round = half away from zero.
#include <cmath>
#include <optional>

#include "core/error.h"
#include "operators/pad_paste/window_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kPasteSchema =
    OpSchema("paste")
        .Doc("Pastes each HWC image onto a canvas ratio times larger (at least min_canvas_size per side), at paste_x, "
             "paste_y (0: left/top edge, 1: right/bottom edge); the canvas takes fill_value (DALI's fn.paste).")
        .Input("images", {"HWC"}, WindowDTypes())
        .Output("pasted")
        .RequiredArg<double>("ratio", "Canvas size / image size, >= 1.", PerSample::kAllowed)
        .Min(1)
        .Arg<double>("paste_x", 0.5, "Horizontal position of the image in the canvas, in [0, 1].", PerSample::kAllowed)
        .Range(0, 1)
        .Arg<double>("paste_y", 0.5, "Vertical position of the image in the canvas, in [0, 1].", PerSample::kAllowed)
        .Range(0, 1)
        .RequiredArg<std::vector<double>>("fill_value", "Canvas value: one, or one per channel.")
        .Arg<double>("min_canvas_size", 0.0, "Smallest canvas side, in pixels, after scaling by ratio.",
                     PerSample::kAllowed)
        .Min(0)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class PasteOp final : public WindowOp {
 public:
  explicit PasteOp(const OpSpec& spec) : WindowOp(spec), fill_(spec.Arg<std::vector<double>>("fill_value")) {}

 protected:
  void BeginBatch(const Workspace& ws, const TensorListDesc& in) override {
    dtype_ = in.dtype;
    ratio_.emplace(ws, "ratio");
    paste_x_.emplace(ws, "paste_x");
    paste_y_.emplace(ws, "paste_y");
    min_canvas_.emplace(ws, "min_canvas_size");
  }

  WindowDesc Plan(const Workspace& ws, int i, const Shape& s) override {
    (void)ws;
    const double ratio = (*ratio_)(i), px = (*paste_x_)(i), py = (*paste_y_)(i), min_canvas = (*min_canvas_)(i);
    if (!(ratio >= 1) || !std::isfinite(ratio)) Bad(i, "ratio", "a finite value >= 1", ratio);
    if (!(px >= 0 && px <= 1)) Bad(i, "paste_x", "a value in [0, 1]", px);
    if (!(py >= 0 && py <= 1)) Bad(i, "paste_y", "a value in [0, 1]", py);
    if (!(min_canvas >= 0) || !std::isfinite(min_canvas)) Bad(i, "min_canvas_size", "a finite value >= 0", min_canvas);
    WindowDesc d{};
    d.in_h = s[0];
    d.in_w = s[1];
    d.in_c = d.out_c = s[2];
    const int64_t min_side = std::llround(min_canvas);
    d.out_h = std::max<int64_t>(std::llround(static_cast<double>(s[0]) * ratio), min_side);
    d.out_w = std::max<int64_t>(std::llround(static_cast<double>(s[1]) * ratio), min_side);
    d.y0 = -std::llround(py * static_cast<double>(d.out_h - d.in_h));
    d.x0 = -std::llround(px * static_cast<double>(d.out_w - d.in_w));
    SetFill(fill_, "fill_value", dtype_, i, d);
    return d;
  }

 private:
  [[noreturn]] void Bad(int i, const char* arg, const char* want, double got) const {
    throw InvalidArgument(Where(i) + ": argument \"" + arg + "\": expected " + want + ", got " + NumberString(got));
  }

  std::vector<double> fill_;
  DType dtype_ = DType::kUInt8;
  std::optional<SampleArg<double>> ratio_, paste_x_, paste_y_, min_canvas_;
};

const OperatorRegistration<PasteOp> kRegistration(kPasteSchema);

}  // namespace
}  // namespace conveyor::ops
