// box_encoder: SSD targets — every anchor gets its matched ground-truth box (or stays background)
// and that box's label (box_encoder.h has the matching rule).
//
// | input  | dtype         | shape per sample | output                                   |
// |--------|---------------|------------------|------------------------------------------|
// | boxes  | float32       | [N, 4] ltrb      | encoded: float32 [A, 4], A = anchors     |
// | labels | int32, int64  | [N] or [N, 1]    | labels: [A], the input's dtype; 0 = none |
//
// CPU only: one sample is N x A IoUs (8732 anchors x a few dozen boxes for SSD300), cheap next to
// decoding, and the outputs reach the GPU through the executor's staging copy.
#include "core/op/registry.h"
#include "operators/detection/box_encoder.h"

namespace conveyor::ops {
namespace {

const OpSchema kBoxEncoderSchema =
    OpSchema("box_encoder")
        .Doc(
            "Encodes boxes and labels against a set of anchors as SSD does: each anchor takes the box it overlaps "
            "best when the IoU exceeds criteria, each box also claims its best anchor; outputs one box ([cx, cy, w, "
            "h], or offsets with offset: true) and one label (0: background) per anchor "
            "(docs/operators_detection.md).")
        .Input("boxes", {}, {DType::kFloat32}, Placement::kOpDevice, "[N, 4] per sample, ltrb, normalized.")
        .Input("labels", {}, {DType::kInt32, DType::kInt64}, Placement::kOpDevice, "[N] or [N, 1] per sample.")
        .Output("encoded", "[A, 4] float32 per sample, one row per anchor.")
        .Output("encoded_labels", "[A] per sample, the labels' dtype; 0 for background anchors.")
        .RequiredArg<std::vector<double>>("anchors", "The anchors, ltrb, 4 values each, normalized coordinates.")
        .Arg<float>("criteria", 0.5f, "IoU an anchor must exceed to match a box.")
        .Range(0, 1)
        .Arg<bool>("offset", false, "Output normalized offsets of each box from its anchor instead of the box.")
        .Arg<float>("scale", 1.0f, "Boxes and anchors are multiplied by scale before offsets are computed.")
        .Arg<std::vector<double>>("means", std::vector<double>{0, 0, 0, 0}, "[x, y, w, h] subtracted from offsets.")
        .Arg<std::vector<double>>("stds", std::vector<double>{1, 1, 1, 1}, "[x, y, w, h] dividing offsets; nonzero.")
        .Backends({Device::kCpu});

class BoxEncoderOp final : public Operator {
 public:
  explicit BoxEncoderOp(const OpSpec& spec)
      : Operator(spec),
        params_(MakeBoxEncoderParams(spec.Arg<std::vector<double>>("anchors"), spec.Arg<double>("criteria"),
                                     spec.Arg<bool>("offset"), spec.Arg<double>("scale"),
                                     spec.Arg<std::vector<double>>("means"), spec.Arg<std::vector<double>>("stds"),
                                     spec.Describe())) {}

  OutputDescs Setup(const Workspace& ws) override {
    CheckBoxesInput(ws, 0, "boxes");
    CheckLabelsInput(ws, 1, 0, "labels");
    const size_t n = ws.InputDesc(0).shapes.size();
    const auto anchors = static_cast<int64_t>(params_.anchors.size());
    return {{std::vector<Shape>(n, Shape{anchors, 4}), DType::kFloat32, {}},
            {std::vector<Shape>(n, Shape{anchors}), ws.InputDesc(1).dtype, {}}};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& boxes = ws.InputCpu(0);
    const TensorListCPU& labels = ws.InputCpu(1);
    TensorListCPU& out_boxes = ws.OutputCpu(0);
    TensorListCPU& out_labels = ws.OutputCpu(1);
    const BoxLayout ltrb = BoxLayout::FromLtrb(true);
    const bool int64_labels = out_labels.dtype() == DType::kInt64;
    ws.ParallelFor(boxes.num_samples(), 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> encoded_labels(params_.anchors.size());
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        const std::vector<Box> sample_boxes = ReadClippedBoxes(boxes, s, ltrb);
        std::vector<int64_t> sample_labels(sample_boxes.size());
        for (size_t b = 0; b < sample_labels.size(); ++b)
          sample_labels[b] = ReadLabel(labels, s, static_cast<int64_t>(b));
        int64_t* direct = int64_labels ? static_cast<int64_t*>(out_labels.raw_sample(s)) : encoded_labels.data();
        EncodeBoxes(sample_boxes, sample_labels, params_, static_cast<float*>(out_boxes.raw_sample(s)), direct);
        if (int64_labels) continue;
        auto* narrow = static_cast<int32_t*>(out_labels.raw_sample(s));  // WriteLabel's int32 case
        for (size_t a = 0; a < encoded_labels.size(); ++a) narrow[a] = static_cast<int32_t>(encoded_labels[a]);
      }
    });
  }

 private:
  BoxEncoderParams params_;
};

const OperatorRegistration<BoxEncoderOp> kRegistration(kBoxEncoderSchema);

}  // namespace
}  // namespace conveyor::ops
