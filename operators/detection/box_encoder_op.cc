// box_encoder: SSD targets — every anchor gets its matched ground-truth box (or stays background)
// and that box's label (box_encoder.h has the matching rule).
//
// | input  | dtype         | shape per sample | output                                   |
// |--------|---------------|------------------|------------------------------------------|
// | boxes  | float32       | [N, 4] ltrb      | encoded: float32 [A, 4], A = anchors     |
// | labels | int32, int64  | [N] or [N, 1]    | labels: [A], the input's dtype; 0 = none |
//
// Both backends, the same rules and results (box_encoder_gpu.h says where a last bit may differ):
//
//   Setup (host, both):  input checks, output shapes [A, 4] and [A]
//   RunCpu:              EncodeBoxes per sample, spread over the CPU stage's threads
//   PrepareGpu (host):   the anchor table uploaded once; one BoxEncoderSample per sample (device
//                        addresses, box count) into the slot's descriptors
//   RunGpu (captured):   one BoxEncoderGpu launch for the batch
//
// On the GPU the staged inputs are tens of KB per batch and the 140 KB-per-sample targets are made
// where the training step reads them; on the CPU they cost the CPU stage ~N x A IoUs per sample
// and a staging copy (docs/operators_detection.md, "Where box_encoder runs").
#include <climits>
#include <cstring>

#include "core/memory/buffer.h"
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "core/tensor/copy.h"
#include "operators/detection/box_encoder.h"
#include "operators/detection/box_encoder_gpu.h"

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
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

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

  void PrepareGpu(Workspace& ws) override {
    UploadTable(ws.stream());
    const TensorListGPU& boxes = ws.InputGpu(0);
    const TensorListGPU& labels = ws.InputGpu(1);
    const TensorListGPU& out_boxes = ws.OutputGpu(0);
    const TensorListGPU& out_labels = ws.OutputGpu(1);
    const int n = boxes.num_samples();
    BoxEncoderSample* d = descs_.Write(ws.slot(), static_cast<size_t>(n), ws.stream());
    for (int s = 0; s < n; ++s) {
      const int64_t count = boxes.shape(s)[0];
      d[s] = {count > 0 ? static_cast<const float*>(boxes.raw_sample(s)) : nullptr,
              count > 0 ? labels.raw_sample(s) : nullptr, count, static_cast<float*>(out_boxes.raw_sample(s)),
              out_labels.raw_sample(s)};
    }
  }

  void RunGpu(Workspace& ws) override {
    // Every Write of PrepareGpu meets its Upload, whatever the batch (the arena is positional).
    const BoxEncoderSample* d = descs_.Upload(ws.slot(), ws.stream());
    const TensorListGPU& out_labels = ws.OutputGpu(1);
    BoxEncoderGpu(d, out_labels.num_samples(), table_, out_labels.dtype() == DType::kInt64, ws.stream());
  }

 private:
  // BoxEncoderParams' arrays in one device buffer, copied once, on the first PrepareGpu (never in
  // RunGpu: no allocation or copy while a graph is captured). The stream is synchronized once, so
  // the table is ready for any stream that later reads it; its address then stays put for every
  // replay. Layout: background floats, then anchors, centres (16-byte aligned for vector loads) and
  // areas as doubles.
  void UploadTable(StreamView stream) {
    if (!table_buffer_.empty()) return;
    const size_t a = params_.anchors.size();
    if (a > static_cast<size_t>(INT_MAX)) {
      throw InvalidArgument(spec().Describe() + ": argument \"anchors\": the GPU backend takes at most " +
                            std::to_string(INT_MAX) + " anchors, got " + std::to_string(a));
    }
    std::vector<unsigned char> host(a * (16 + 32 + 32 + 8));
    unsigned char* at = host.data();
    const auto put = [&at](const void* src, size_t bytes) {
      std::memcpy(at, src, bytes);
      at += bytes;
    };
    put(params_.background.data(), 16 * a);
    for (const Box& b : params_.anchors) {
      const double ltrb[4] = {b.l, b.t, b.r, b.b};
      put(ltrb, sizeof(ltrb));
    }
    put(params_.anchor_center.data(), 32 * a);
    put(params_.anchor_area.data(), 8 * a);
    table_buffer_ = Buffer::Allocate(MemoryKind::kDevice, host.size(), stream);
    CopyBytesAsync(table_buffer_.device_ptr(), host.data(), host.size(), stream);
    stream.Synchronize();  // `host` goes out of scope; other streams may read the table
    const auto* base = static_cast<const unsigned char*>(table_buffer_.device_ptr());
    table_.background = reinterpret_cast<const float*>(base);
    table_.anchors = reinterpret_cast<const double*>(base + 16 * a);
    table_.anchor_center = reinterpret_cast<const double*>(base + 48 * a);
    table_.anchor_area = reinterpret_cast<const double*>(base + 80 * a);
    table_.num_anchors = static_cast<int32_t>(a);
    table_.offset = params_.offset;
    table_.criteria = params_.criteria;
    table_.scale = params_.scale;
    for (size_t i = 0; i < 4; ++i) {
      table_.means[i] = params_.means[i];
      table_.stds[i] = params_.stds[i];
    }
  }

  BoxEncoderParams params_;
  Buffer table_buffer_;
  BoxEncoderTable table_{};
  SlotDescriptors<BoxEncoderSample> descs_;
};

const OperatorRegistration<BoxEncoderOp> kRegistration(kBoxEncoderSchema);

}  // namespace
}  // namespace conveyor::ops
