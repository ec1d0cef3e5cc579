// random_bbox_crop: a random crop window that respects the boxes (SSD's sampler, DALI's
// random_bbox_crop), and the boxes and labels that survive it. The window feeds the image
// operators; the boxes are already relative to it.
//
// | input  | dtype        | shape per sample | output  | dtype / shape per sample                 |
// |--------|--------------|------------------|---------|------------------------------------------|
// | boxes  | float32      | [N, 4]           | anchor  | float32 [2]: window (x, y), normalized   |
// | labels | int32, int64 | [N] or [N, 1]    | shape   | float32 [2]: window (w, h), normalized   |
// |        |              |                  | bboxes  | float32 [K, 4], K <= N, input's layout   |
// |        |              |                  | labels  | the input's dtype, [K] or [K, 1]         |
//
// The search (random_bbox_crop.h) runs in Setup, because K decides the output shapes; Run copies
// the results out. Draws come from ws.Rng(sample): the same (seed, node, iteration, sample) gives
// the same window on every run and after a resume. CPU only (docs/operators_detection.md).
#include "core/error.h"
#include "core/op/registry.h"
#include "operators/detection/random_bbox_crop.h"

namespace conveyor::ops {
namespace {

const OpSchema kRandomBboxCropSchema =
    OpSchema("random_bbox_crop")
        .Doc(
            "Draws a random crop window whose overlap with the boxes reaches a threshold picked at random from "
            "thresholds (SSD's sampler, DALI's random_bbox_crop), and outputs the window (anchor, shape; "
            "normalized, [x, y] and [w, h]) with the boxes whose centre lies in it, clipped and relative to the "
            "window, and their labels (docs/operators_detection.md).")
        .Input("boxes", {}, {DType::kFloat32}, Placement::kOpDevice, "[N, 4] per sample, normalized coordinates.")
        .Input("labels", {}, {DType::kInt32, DType::kInt64}, Placement::kOpDevice, "[N] or [N, 1] per sample.")
        .Output("anchor", "float32 [2] per sample: the window's (x, y), normalized.")
        .Output("shape", "float32 [2] per sample: the window's (w, h), normalized.")
        .Output("bboxes", "float32 [K, 4] per sample: the kept boxes, relative to the window, in the input's layout.")
        .Output("labels", "[K] or [K, 1] per sample: the kept boxes' labels.")
        .Arg<std::vector<double>>("thresholds", std::vector<double>{0.0},
                                  "Minimum overlaps; each window search picks one at random (SSD: [0.1, 0.3, 0.5, "
                                  "0.7, 0.9]).")
        .Range(0, 1)
        .Arg<std::string>("threshold_type", "iou",
                          "iou: intersection over union of window and box; overlap: intersection area / box area.")
        .Choices({"iou", "overlap"})
        .Arg<std::vector<double>>("aspect_ratio", std::vector<double>{1.0, 1.0},
                                  "[min, max] of the window's width / height (normalized coordinates), min > 0.")
        .Arg<std::vector<double>>("scaling", std::vector<double>{1.0, 1.0},
                                  "[min, max] of the window's extent per axis, as a fraction of the image's.")
        .Range(0, 1)
        .Arg<bool>("ltrb", true, "Boxes are [left, top, right, bottom] (true) or [x, y, width, height] (false).")
        .Arg<std::string>("bbox_layout", "",
                          "A permutation of xyXY (ltrb) or xyWH (xywh); overrides ltrb, which may then not be set.")
        .Arg<bool>("allow_no_crop", true, "Not cropping is one more option to pick, beside the thresholds.")
        .Arg<int64_t>("num_attempts", 1, "Windows drawn for one picked threshold before another is picked.")
        .Min(1)
        .Arg<int64_t>("total_num_attempts", -1,
                      "Windows drawn in all before the best one is taken (-1: up to 1000; DALI searches forever).")
        .Min(-1)
        .Arg<bool>("all_boxes_above_threshold", true,
                   "Every box must reach the threshold (true) or at least one box (false).")
        .Arg<float>("bbox_prune_threshold", -1.0f,
                    "Negative: keep boxes whose centre lies in the window; else keep boxes with at least this "
                    "fraction of their area in it.")
        .Range(-1, 1)
        .Backends({Device::kCpu});

BoxLayout LayoutOf(const OpSpec& spec) {
  const std::string layout = spec.Arg<std::string>("bbox_layout");
  if (layout.empty()) return BoxLayout::FromLtrb(spec.Arg<bool>("ltrb"));
  if (spec.HasArg("ltrb")) {
    throw InvalidArgument(spec.Describe() +
                          ": arguments \"ltrb\" and \"bbox_layout\" cannot both be set; "
                          "bbox_layout replaces ltrb");
  }
  return BoxLayout::Parse(layout, spec.Describe());
}

class RandomBboxCropOp final : public Operator {
 public:
  explicit RandomBboxCropOp(const OpSpec& spec)
      : Operator(spec),
        layout_(LayoutOf(spec)),
        params_(MakeBboxCropParams(spec.Arg<std::vector<double>>("thresholds"), spec.Arg<bool>("allow_no_crop"),
                                   spec.Arg<std::vector<double>>("aspect_ratio"),
                                   spec.Arg<std::vector<double>>("scaling"), spec.Arg<int64_t>("num_attempts"),
                                   spec.Arg<int64_t>("total_num_attempts"), spec.Arg<std::string>("threshold_type"),
                                   spec.Arg<bool>("all_boxes_above_threshold"),
                                   spec.Arg<double>("bbox_prune_threshold"), spec.Describe())) {}

  OutputDescs Setup(const Workspace& ws) override {
    CheckBoxesInput(ws, 0, "boxes");
    CheckLabelsInput(ws, 1, 0, "labels");
    const TensorListCPU& boxes = ws.InputCpu(0);
    const int n = boxes.num_samples();
    results_.assign(static_cast<size_t>(n), BboxCropResult{});
    ws.ParallelFor(n, 4, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        Philox rng = ws.Rng(s);
        results_[static_cast<size_t>(i)] = RandomBboxCrop(ReadClippedBoxes(boxes, s, layout_), params_, rng);
      }
    });
    const TensorListDesc labels = ws.InputDesc(1);
    OutputDescs out = {
        {{}, DType::kFloat32, {}}, {{}, DType::kFloat32, {}}, {{}, DType::kFloat32, {}}, {{}, labels.dtype, {}}};
    for (int s = 0; s < n; ++s) {
      const auto kept = static_cast<int64_t>(results_[static_cast<size_t>(s)].kept.size());
      out[0].shapes.push_back(Shape{2});
      out[1].shapes.push_back(Shape{2});
      out[2].shapes.push_back(Shape{kept, 4});
      out[3].shapes.push_back(LabelShape(labels.shapes[static_cast<size_t>(s)], kept));
    }
    return out;
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& labels = ws.InputCpu(1);
    TensorListCPU& anchor = ws.OutputCpu(0);
    TensorListCPU& shape = ws.OutputCpu(1);
    TensorListCPU& out_boxes = ws.OutputCpu(2);
    TensorListCPU& out_labels = ws.OutputCpu(3);
    ws.ParallelFor(anchor.num_samples(), 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        const BboxCropResult& r = results_[static_cast<size_t>(i)];
        auto* a = static_cast<float*>(anchor.raw_sample(s));
        auto* sh = static_cast<float*>(shape.raw_sample(s));
        a[0] = static_cast<float>(r.window.l);
        a[1] = static_cast<float>(r.window.t);
        sh[0] = static_cast<float>(r.window.width());
        sh[1] = static_cast<float>(r.window.height());
        auto* dst = static_cast<float*>(out_boxes.raw_sample(s));
        for (size_t k = 0; k < r.kept.size(); ++k) {
          layout_.Write(r.boxes[k], dst + 4 * k);
          WriteLabel(out_labels, s, static_cast<int64_t>(k), ReadLabel(labels, s, r.kept[k]));
        }
      }
    });
  }

 private:
  BoxLayout layout_;
  BboxCropParams params_;
  std::vector<BboxCropResult> results_;  // this iteration's, from Setup
};

const OperatorRegistration<RandomBboxCropOp> kRegistration(kRandomBboxCropSchema);

}  // namespace
}  // namespace conveyor::ops
