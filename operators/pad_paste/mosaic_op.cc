// mosaic: YOLO-style four-image mosaic with boxes (docs/operators_geometry.md, "mosaic"). Sample i
// of the output shows sample i and three partners drawn from ws.Rng(i), around a random centre.
//
// | input   | dtypes                                | shape per sample | output                      |
// |---------|---------------------------------------|------------------|-----------------------------|
// | images  | uint8, int8, uint16, int16, int32,    | [H, W, C] HWC    | [size_h, size_w, C]         |
// |         | float32                               |                  |                             |
// | boxes   | float32 (host, either backend)        | [N, 4]           | [K, 4] moved, clipped, kept |
// | labels  | int32, int64 (host, either backend)   | [N] or [N, 1]    | [K] or [K, 1], carried      |
//
// | draws   | (argument, per sample) int64 values [cy, cx, s0, s1, s2, s3]: another node's    |
// |         | `draws` output, used instead of this node's own draws (a mask follows its image) |
//
// Both backends share one plan, made in Setup on the host: the draws, the tile origins and the kept
// boxes (their counts are output shapes, so they come from the boxes' values before allocation).
// Boxes and labels are read on the host by either backend (Placement::kHost: never staged).
//
//   Setup (host):       draws ──> PlaceTiles ──> MosaicDesc per sample; boxes moved, clipped, kept
//   RunCpu:             MosaicCpu per sample; box outputs written in place
//   PrepareGpu (host):  descriptors (device addresses bound) and the box outputs' bytes, laid out as
//                       their device lists are, into per-slot descriptor arrays
//   RunGpu (captured):  uploads, one MosaicGpu launch per batch, one device copy per box output
//
// So the GPU's pixels equal the CPU's bit for bit and its box outputs are the CPU's bytes.
#include <cmath>
#include <cstring>

#include "core/cuda/check.h"
#include "core/error.h"
#include "core/op/slot_descriptors.h"
#include "operators/detection/boxes.h"
#include "operators/pad_paste/mosaic.h"
#include "operators/pad_paste/window_op.h"
#include "operators/resample/image_input.h"

namespace conveyor::ops {
namespace {

const OpSchema kMosaicSchema =
    OpSchema("mosaic")
        .Doc("YOLO-style mosaic: sample i and three partners drawn from its random stream fill the four quadrants of "
             "a size [h, w] canvas around a random centre, each with a corner at the centre; their boxes are moved, "
             "clipped and filtered (boxes without area dropped with their labels).")
        .Input("images", {"HWC"}, WindowDTypes())
        .Input("boxes", {}, {DType::kFloat32}, Placement::kHost, "[N, 4] per sample, normalized coordinates.")
        .Input("labels", {}, {DType::kInt32, DType::kInt64}, Placement::kHost, "[N] or [N, 1] per sample.")
        .Output("mosaic", "[size_h, size_w, C] per sample.")
        .Output("bboxes", "[K, 4] per sample, normalized to the canvas, in the input's layout.")
        .Output("labels", "The kept boxes' labels, the input's dtype and rank.")
        .RequiredArg<std::vector<int64_t>>("size", "Canvas [h, w] in pixels.")
        .Min(1)
        .Arg<std::vector<double>>("center_range", std::vector<double>{0.25, 0.75},
                                  "[lo, hi]: the centre's x (y) is floor(u * w) (h) with u uniform in [lo, hi).")
        .Range(0, 1)
        .Arg<std::vector<double>>("fill_values", std::vector<double>{114.0},
                                  "Value of the canvas no image covers: one, or one per channel (YOLO's 114).")
        .Arg<bool>("ltrb", false, "Boxes are [left, top, right, bottom] (true) or [x, y, width, height] (false).")
        .OptionalOutput("draws", "output_draws",
                        "int32 [6] per sample: [cy, cx, s0, s1, s2, s3], the centre (pixels) and the samples of the "
                        "four quadrants; feed it to another mosaic's draws (masks). A GPU node's lands on the device, which "
                        "arguments cannot read: feed masks from a CPU node's draws.")
        .Arg<bool>("output_draws", false, "Add the output draws.")
        .Arg<std::vector<int64_t>>("draws", std::vector<int64_t>{},
                                   "[] (draw from this node's stream) or another mosaic's draws output, fed per sample "
                                   "($name): [cy, cx, s0, s1, s2, s3] with 0 <= cy <= h, 0 <= cx <= w, samples in "
                                   "[0, batch size).",
                                   PerSample::kAllowed)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

// A small GPU output whose values the host computes (boxes, labels, draws): PrepareGpu lays its
// bytes out as in the device list (sample offsets, padding zeroed) in a per-slot descriptor array;
// RunGpu copies the whole capacity across. The copy's size is the list's capacity, which the capture
// signature covers, so a replay stays right when the kept-box counts change.
class HostComposedOutput {
 public:
  unsigned char* Write(int slot, const TensorListGPU& list, StreamView stream) {
    const size_t bytes = list.buffer().size();
    unsigned char* host = bytes_.Write(slot, bytes, stream);
    std::memset(host, 0, bytes);
    return host;
  }
  void Copy(int slot, const TensorListGPU& list, StreamView stream) {
    const unsigned char* device = bytes_.Upload(slot, stream);  // before the early return: Writes meet Uploads
    if (list.buffer().empty()) return;
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(list.buffer().device_ptr(), device, list.buffer().size(),
                                        cudaMemcpyDeviceToDevice, stream.get()));
  }

 private:
  SlotDescriptors<unsigned char> bytes_;
};

class MosaicOp final : public Operator {
 public:
  explicit MosaicOp(const OpSpec& spec)
      : Operator(spec),
        size_(spec.Arg<std::vector<int64_t>>("size")),
        center_(spec.Arg<std::vector<double>>("center_range")),
        fill_(spec.Arg<std::vector<double>>("fill_values")),
        layout_(BoxLayout::FromLtrb(spec.Arg<bool>("ltrb"))),
        draws_slot_(spec.OutputSlot("draws")) {
    if (size_.size() != 2) {
      throw InvalidArgument(spec.Describe() + ": size must be [h, w], got " + std::to_string(size_.size()) + " values");
    }
    if (center_.size() != 2 || !(center_[0] <= center_[1])) {
      throw InvalidArgument(spec.Describe() + ": center_range must be [lo, hi] with lo <= hi, got " +
                            std::to_string(center_.size()) + " values" +
                            (center_.size() == 2 ? " (" + NumberString(center_[0]) + ", " + NumberString(center_[1]) + ")"
                                                 : std::string()));
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    CheckImageInput(ws, 0, {"HWC"}, WindowDTypes(), 0);
    CheckBoxesInput(ws, 1, "boxes");
    CheckLabelsInput(ws, 2, 1, "labels");
    const TensorListDesc images = ws.InputDesc(0);
    const TensorListCPU& boxes = ws.InputCpu(1);
    const TensorListCPU& labels = ws.InputCpu(2);
    const int n = static_cast<int>(images.shapes.size());
    dtype_ = images.dtype;
    plans_.assign(static_cast<size_t>(n), {});
    OutputDescs out = {{{}, images.dtype, "HWC"}, {{}, DType::kFloat32, boxes.layout()}, {{}, labels.dtype(), labels.layout()}};
    if (draws_slot_ >= 0) out.push_back({std::vector<Shape>(static_cast<size_t>(n), Shape{6}), DType::kInt32, {}});
    const SampleArg<std::vector<int64_t>> fed(ws, "draws");
    for (int i = 0; i < n; ++i) {
      Plan& p = plans_[static_cast<size_t>(i)];
      const std::vector<int64_t>& given = fed(i);
      p.draw = given.empty() ? DrawMosaic(ws.Rng(i), i, n, size_[0], size_[1], center_[0], center_[1])
                             : FedDraw(given, i, n);
      int64_t h[4], w[4];
      const int64_t channels = images.shapes[static_cast<size_t>(i)][2];
      for (int k = 0; k < 4; ++k) {
        const Shape& s = images.shapes[static_cast<size_t>(p.draw.sources[k])];
        if (s[2] != channels) {
          throw InvalidArgument(spec().Describe() + ": sample " + std::to_string(i) + ": its mosaic takes sample " +
                                std::to_string(p.draw.sources[k]) + " with " + std::to_string(s[2]) +
                                " channels, sample " + std::to_string(i) + " has " + std::to_string(channels) +
                                "; every image must have the same channel count");
        }
        h[k] = s[0];
        w[k] = s[1];
      }
      p.desc.out_h = size_[0];
      p.desc.out_w = size_[1];
      p.desc.channels = channels;
      PlaceTiles(p.draw, h, w, p.desc);
      MakeFill(fill_, "fill_values", dtype_, channels, spec().Describe() + ": sample " + std::to_string(i), p.desc.fill,
               &p.desc.fill_count);
      MoveBoxes(boxes, labels, p);
      out[0].shapes.push_back(Shape{size_[0], size_[1], channels});
      out[1].shapes.push_back(Shape{static_cast<int64_t>(p.labels.size()), 4});
      out[2].shapes.push_back(LabelShape(labels.shape(i), static_cast<int64_t>(p.labels.size())));
    }
    return out;
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& images = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    TensorListCPU& boxes = ws.OutputCpu(1);
    TensorListCPU& labels = ws.OutputCpu(2);
    ws.ParallelFor(images.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        const Plan& p = plans_[static_cast<size_t>(s)];
        MosaicDesc d = p.desc;
        d.out = out.raw_sample(s);
        for (int k = 0; k < 4; ++k) d.tiles[k].in = images.raw_sample(p.draw.sources[k]);
        MosaicCpu(d, dtype_);
        WriteBoxOutputs(p, static_cast<float*>(boxes.raw_sample(s)), labels.raw_sample(s), labels.dtype(),
                        draws_slot_ >= 0 ? static_cast<int32_t*>(ws.OutputCpu(draws_slot_).raw_sample(s)) : nullptr);
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& images = ws.InputGpu(0);
    const TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    MosaicDesc* d = descs_.Write(ws.slot(), static_cast<size_t>(n), ws.stream());
    for (int s = 0; s < n; ++s) {
      const Plan& p = plans_[static_cast<size_t>(s)];
      d[s] = p.desc;
      d[s].out = out.raw_sample(s);
      for (int k = 0; k < 4; ++k) d[s].tiles[k].in = images.raw_sample(p.draw.sources[k]);
    }
    const TensorListGPU& boxes = ws.OutputGpu(1);
    const TensorListGPU& labels = ws.OutputGpu(2);
    unsigned char* box_bytes = box_bytes_.Write(ws.slot(), boxes, ws.stream());
    unsigned char* label_bytes = label_bytes_.Write(ws.slot(), labels, ws.stream());
    unsigned char* draw_bytes =
        draws_slot_ >= 0 ? draw_bytes_.Write(ws.slot(), ws.OutputGpu(draws_slot_), ws.stream()) : nullptr;
    for (int s = 0; s < n; ++s) {
      WriteBoxOutputs(plans_[static_cast<size_t>(s)], reinterpret_cast<float*>(box_bytes + boxes.offset(s)),
                      label_bytes + labels.offset(s), labels.dtype(),
                      draw_bytes != nullptr
                          ? reinterpret_cast<int32_t*>(draw_bytes + ws.OutputGpu(draws_slot_).offset(s))
                          : nullptr);
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    // Every Write of PrepareGpu meets its Upload, whatever the batch (the arena is positional).
    const MosaicDesc* d = descs_.Upload(ws.slot(), ws.stream());
    box_bytes_.Copy(ws.slot(), ws.OutputGpu(1), ws.stream());
    label_bytes_.Copy(ws.slot(), ws.OutputGpu(2), ws.stream());
    if (draws_slot_ >= 0) draw_bytes_.Copy(ws.slot(), ws.OutputGpu(draws_slot_), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    MosaicGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), dtype_, ws.stream());
  }

 private:
  struct Plan {
    MosaicDraw draw{};
    MosaicDesc desc{};
    std::vector<Box> boxes;      // kept, normalized to the canvas
    std::vector<int64_t> labels;
  };

  // Sample i's draw as fed through `draws`; checked, since it indexes the batch.
  MosaicDraw FedDraw(const std::vector<int64_t>& v, int i, int n) const {
    const std::string where = spec().Describe() + ": sample " + std::to_string(i) + ": draws";
    if (v.size() != 6) {
      throw InvalidArgument(where + " has " + std::to_string(v.size()) + " values, expected 6 ([cy, cx, s0, s1, s2, s3])");
    }
    if (v[0] < 0 || v[0] > size_[0] || v[1] < 0 || v[1] > size_[1]) {
      throw InvalidArgument(where + ": centre (" + std::to_string(v[0]) + ", " + std::to_string(v[1]) +
                            ") is outside the " + std::to_string(size_[0]) + " x " + std::to_string(size_[1]) + " canvas");
    }
    MosaicDraw d{};
    d.cy = v[0];
    d.cx = v[1];
    for (int k = 0; k < 4; ++k) {
      if (v[2 + static_cast<size_t>(k)] < 0 || v[2 + static_cast<size_t>(k)] >= n) {
        throw InvalidArgument(where + "[" + std::to_string(2 + k) + "] = " + std::to_string(v[2 + static_cast<size_t>(k)]) +
                              ": not a sample of this batch of " + std::to_string(n));
      }
      d.sources[k] = static_cast<int>(v[2 + static_cast<size_t>(k)]);
    }
    return d;
  }

  // Sample p's box outputs at host addresses (the CPU output, or the bytes a GPU output is copied
  // from): the kept boxes in the layout, their labels in `label_dtype`, the draw when `draws`.
  void WriteBoxOutputs(const Plan& p, float* boxes, void* labels, DType label_dtype, int32_t* draws) const {
    for (size_t b = 0; b < p.labels.size(); ++b) {
      layout_.Write(p.boxes[b], boxes + 4 * b);
      if (label_dtype == DType::kInt64) {
        static_cast<int64_t*>(labels)[b] = p.labels[b];
      } else {
        static_cast<int32_t*>(labels)[b] = static_cast<int32_t>(p.labels[b]);
      }
    }
    if (draws != nullptr) {
      draws[0] = static_cast<int32_t>(p.draw.cy);
      draws[1] = static_cast<int32_t>(p.draw.cx);
      for (int k = 0; k < 4; ++k) draws[2 + k] = p.draw.sources[k];
    }
  }

  // Tile k's boxes (clipped in their image first) onto the canvas; those left without area dropped.
  void MoveBoxes(const TensorListCPU& boxes, const TensorListCPU& labels, Plan& p) const {
    const double cw = static_cast<double>(p.desc.out_w), ch = static_cast<double>(p.desc.out_h);
    for (int k = 0; k < 4; ++k) {
      const int src = p.draw.sources[k];
      const MosaicTile& t = p.desc.tiles[k];
      const std::vector<Box> in = ReadClippedBoxes(boxes, src, layout_);
      for (size_t b = 0; b < in.size(); ++b) {
        const double w = static_cast<double>(t.w), h = static_cast<double>(t.h);
        const Box moved = ClipBox(Box{(in[b].l * w + static_cast<double>(t.ox)) / cw,
                                      (in[b].t * h + static_cast<double>(t.oy)) / ch,
                                      (in[b].r * w + static_cast<double>(t.ox)) / cw,
                                      (in[b].b * h + static_cast<double>(t.oy)) / ch});
        if (!HasArea(moved)) continue;
        p.boxes.push_back(moved);
        p.labels.push_back(ReadLabel(labels, src, static_cast<int64_t>(b)));
      }
    }
  }

  std::vector<int64_t> size_;
  std::vector<double> center_;
  std::vector<double> fill_;
  BoxLayout layout_;
  int draws_slot_;  // -1 without output_draws
  DType dtype_ = DType::kUInt8;
  std::vector<Plan> plans_;  // this batch's, from Setup
  SlotDescriptors<MosaicDesc> descs_;
  HostComposedOutput box_bytes_, label_bytes_, draw_bytes_;
};

const OperatorRegistration<MosaicOp> kRegistration(kMosaicSchema);

}  // namespace
}  // namespace conveyor::ops
