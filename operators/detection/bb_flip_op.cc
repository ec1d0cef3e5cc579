// bb_flip: mirrors boxes the way flip mirrors their image, so `horizontal: $mirror` on both keeps
// boxes on their objects.
//
// | input  | dtype   | shape per sample | output                          |
// |--------|---------|------------------|---------------------------------|
// | boxes  | float32 | [N, 4], N >= 0   | float32 [N, 4], same layout     |
//
// Boxes are clipped first (boxes.h); the count never changes, so labels stay aligned. CPU only:
// a sample is a few hundred floats (docs/operators_detection.md, "Why the CPU").
#include "core/op/registry.h"
#include "operators/detection/box_transforms.h"

namespace conveyor::ops {
namespace {

const OpSchema kBbFlipSchema =
    OpSchema("bb_flip")
        .Doc(
            "Mirrors boxes given in normalized coordinates: horizontally x -> 1 - x, vertically y -> 1 - y, as flip "
            "mirrors their image. Boxes are clipped to [0, 1] first; none is dropped (docs/operators_detection.md).")
        .Input("boxes", {}, {DType::kFloat32}, Placement::kOpDevice, "[N, 4] per sample, normalized coordinates.")
        .Output("flipped", "[N, 4] per sample, in the input's layout.")
        .Arg<bool>("ltrb", false, "Boxes are [left, top, right, bottom] (true) or [x, y, width, height] (false).")
        .Arg<int64_t>("horizontal", 1, "Mirror along x (0 or 1; nonzero per-sample values mean 1).",
                      PerSample::kAllowed)
        .Range(0, 1)
        .Arg<int64_t>("vertical", 0, "Mirror along y (0 or 1; nonzero per-sample values mean 1).", PerSample::kAllowed)
        .Range(0, 1)
        .Backends({Device::kCpu});

class BbFlipOp final : public Operator {
 public:
  explicit BbFlipOp(const OpSpec& spec) : Operator(spec), layout_(BoxLayout::FromLtrb(spec.Arg<bool>("ltrb"))) {}

  OutputDescs Setup(const Workspace& ws) override {
    CheckBoxesInput(ws, 0, "boxes");
    TensorListDesc d = ws.InputDesc(0);
    return {d};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    const std::vector<int64_t> horizontal = ws.ArgPerSample<int64_t>("horizontal");
    const std::vector<int64_t> vertical = ws.ArgPerSample<int64_t>("vertical");
    ws.ParallelFor(in.num_samples(), 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        const std::vector<Box> boxes = ReadClippedBoxes(in, s, layout_);
        auto* dst = static_cast<float*>(out.raw_sample(s));
        for (size_t b = 0; b < boxes.size(); ++b) {
          layout_.Write(FlipBox(boxes[b], horizontal[i] != 0, vertical[i] != 0), dst + 4 * b);
        }
      }
    });
  }

 private:
  BoxLayout layout_;
};

const OperatorRegistration<BbFlipOp> kRegistration(kBbFlipSchema);

}  // namespace
}  // namespace conveyor::ops
