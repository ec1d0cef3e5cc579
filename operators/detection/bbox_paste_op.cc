// bbox_paste: the boxes of an image pasted into a canvas `ratio` times larger (DALI's paste /
// letterbox padding), so they stay on their objects.
//
// | input  | dtype   | shape per sample | output                          |
// |--------|---------|------------------|---------------------------------|
// | boxes  | float32 | [N, 4], N >= 0   | float32 [N, 4], same layout     |
//
// Boxes are clipped first (boxes.h); the count never changes. ratio, paste_x and paste_y may be
// per sample; a per-sample value out of range is an InvalidArgument naming the sample.
#include <cmath>

#include "core/error.h"
#include "core/op/registry.h"
#include "operators/detection/box_transforms.h"

namespace conveyor::ops {
namespace {

const OpSchema kBboxPasteSchema =
    OpSchema("bbox_paste")
        .Doc(
            "Moves boxes given in normalized coordinates into a canvas ratio times larger, the image placed at "
            "paste_x, paste_y (0: left/top edge, 1: right/bottom edge): x' = x / ratio + paste_x * (1 - 1 / ratio). "
            "Boxes are clipped to [0, 1] first; none is dropped (docs/operators_detection.md).")
        .Input("boxes", {}, {DType::kFloat32}, Placement::kOpDevice, "[N, 4] per sample, normalized coordinates.")
        .Output("pasted", "[N, 4] per sample, in the input's layout, normalized to the canvas.")
        .RequiredArg<float>("ratio", "Canvas size / image size, >= 1.", PerSample::kAllowed)
        .Min(1)
        .Arg<bool>("ltrb", false, "Boxes are [left, top, right, bottom] (true) or [x, y, width, height] (false).")
        .Arg<float>("paste_x", 0.5f, "Horizontal position of the image in the canvas, in [0, 1].", PerSample::kAllowed)
        .Range(0, 1)
        .Arg<float>("paste_y", 0.5f, "Vertical position of the image in the canvas, in [0, 1].", PerSample::kAllowed)
        .Range(0, 1)
        .Backends({Device::kCpu});

class BboxPasteOp final : public Operator {
 public:
  explicit BboxPasteOp(const OpSpec& spec) : Operator(spec), layout_(BoxLayout::FromLtrb(spec.Arg<bool>("ltrb"))) {}

  OutputDescs Setup(const Workspace& ws) override {
    CheckBoxesInput(ws, 0, "boxes");
    const int n = static_cast<int>(ws.InputDesc(0).shapes.size());
    params_.resize(static_cast<size_t>(n));
    const SampleArg<float> ratio(ws, "ratio"), paste_x(ws, "paste_x"), paste_y(ws, "paste_y");
    for (int i = 0; i < n; ++i) {
      PasteParams& p = params_[static_cast<size_t>(i)];
      p.ratio = ratio(i);
      p.paste_x = paste_x(i);
      p.paste_y = paste_y(i);
      if (!(p.ratio >= 1) || std::isinf(p.ratio)) Bad(ws, "ratio", "a finite value >= 1", p.ratio, i);
      if (!(p.paste_x >= 0 && p.paste_x <= 1)) Bad(ws, "paste_x", "a value in [0, 1]", p.paste_x, i);
      if (!(p.paste_y >= 0 && p.paste_y <= 1)) Bad(ws, "paste_y", "a value in [0, 1]", p.paste_y, i);
    }
    return {ws.InputDesc(0)};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        const std::vector<Box> boxes = ReadClippedBoxes(in, s, layout_);
        auto* dst = static_cast<float*>(out.raw_sample(s));
        for (size_t b = 0; b < boxes.size(); ++b) {
          layout_.Write(PasteBox(boxes[b], params_[static_cast<size_t>(s)]), dst + 4 * b);
        }
      }
    });
  }

 private:
  [[noreturn]] static void Bad(const Workspace& ws, const char* arg, const char* want, double got, int sample) {
    throw InvalidArgument(ws.spec().Describe() + ": argument \"" + arg + "\": expected " + want + ", got " +
                          NumberText(got) + " at sample " + std::to_string(sample));
  }

  BoxLayout layout_;
  std::vector<PasteParams> params_;  // this iteration's, from Setup
};

const OperatorRegistration<BboxPasteOp> kRegistration(kBboxPasteSchema);

}  // namespace
}  // namespace conveyor::ops
