// resize_crop_mirror: DALI's fused resize + crop + flip. Each HWC image (every frame of an FHWC
// clip alike) is resized as `resize` would (same size arguments), the crop window is placed in the
// resized image as `crop` places it, and the window is mirrored per sample — in one resampling
// pass that computes only the window's pixels.
//
// | input   | dtypes          | layouts   | output                                           |
// |---------|-----------------|-----------|--------------------------------------------------|
// | images  | uint8, float32  | HWC, FHWC | (crop_h, crop_w, C) or (F, crop_h, crop_w, C),   |
// |         |                 | 1..8 ch.  | dtype `dtype`; a zero-sized image (frame) gives  |
// |         |                 |           | (0, 0, C) ((F, 0, 0, C))                          |
//
// | argument                    | meaning (all per sample except max_size)                   |
// |-----------------------------|------------------------------------------------------------|
// | size, resize_x, resize_y,   | the resize, exactly as `resize` (operators/resize/resize.h) |
// | resize_shorter, resize_longer, max_size |                                                |
// | crop [h, w] / crop_h, crop_w | the window in the resized image (required)                |
// | crop_pos_x, crop_pos_y      | anchor x0 = round(crop_pos_x * (resized_w - crop_w)), as crop |
// | mirror                      | DALI's mask: 1 horizontal, 2 vertical, 3 both              |
//
// The window maps back to the input at a fractional origin. The resample descriptor keeps the
// full resize's scale and starts its output indices at the anchor (resample::Axis::origin), and
// mirroring reverses where outputs are written: the result is `resize`, then `crop`, then `flip`
// bit for bit (tested), as DALI documents its result. A window that leaves the resized image is an
// error (DALI reads the border there; see docs/operators_image.md).
// GPU: descriptors in the slot's buffers (PrepareGpu), one or two launches — capturable.
#include <cmath>
#include <sstream>
#include <tuple>

#include "core/error.h"
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/crop/crop.h"  // CropOrigin
#include "operators/resample/image_input.h"
#include "operators/resample/resample.h"
#include "operators/resize/resize.h"

namespace conveyor::ops {
namespace {

OpSchema MakeResizeCropMirrorSchema() {
  OpSchema schema("resize_crop_mirror");
  schema.Doc("Resizes each HWC image (or every frame of an FHWC clip; uint8 or float32) as resize does, crops a "
             "window of the resized image placed by crop_pos_x / crop_pos_y, and mirrors it per sample — one pass "
             "that computes only the window (DALI's resize_crop_mirror).")
      .Input("images", {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32})
      .Output("resized");
  AddResizeSizeArgs(schema, "Resized")
      .Arg<std::vector<double>>("crop", std::vector<double>{},
                                "Window [h, w] in the resized image; or give crop_h and crop_w.", PerSample::kAllowed)
      .Min(0)
      .Arg<double>("crop_h", 0.0, "Window height (when crop is not given).", PerSample::kAllowed)
      .Min(0)
      .Arg<double>("crop_w", 0.0, "Window width (when crop is not given).", PerSample::kAllowed)
      .Min(0)
      .Arg<double>("crop_pos_x", 0.5,
                   "Horizontal placement in [0, 1]: x0 = round(crop_pos_x * (resized_w - crop_w)).",
                   PerSample::kAllowed)
      .Range(0, 1)
      .Arg<double>("crop_pos_y", 0.5,
                   "Vertical placement in [0, 1]: y0 = round(crop_pos_y * (resized_h - crop_h)).",
                   PerSample::kAllowed)
      .Range(0, 1)
      .Arg<int64_t>("mirror", 0, "Flip mask (DALI's): 0 none, 1 horizontal, 2 vertical, 3 both.",
                    PerSample::kAllowed)
      .Range(0, 3)
      .Arg<std::string>("interp_type", "linear",
                        "nearest, linear or cubic (Keys a = -0.5); DALI's INTERP_NN / INTERP_LINEAR / "
                        "INTERP_CUBIC are accepted.")
      .Choices(InterpTypeNames())
      .Arg<bool>("antialias", true,
                 "When the resize downscales an axis by s > 1, stretch the linear/cubic filter by s.")
      .Arg<std::string>("dtype", "same", "Output dtype: same (as the input), uint8 or float32.")
      .Choices({"same", "uint8", "float32"})
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
  return schema;
}

const OpSchema kResizeCropMirrorSchema = MakeResizeCropMirrorSchema();

// One sample's geometry, from Setup: the resize, the window in it, the mirror mask.
struct Geometry {
  int64_t resized_h = 0, resized_w = 0;
  int64_t crop_y = 0, crop_x = 0;
  int mirror = 0;
};

class ResizeCropMirrorOp final : public Operator {
 public:
  explicit ResizeCropMirrorOp(const OpSpec& spec)
      : Operator(spec),
        filter_(ParseInterpType(spec.Arg<std::string>("interp_type"))),
        antialias_(spec.Arg<bool>("antialias")),
        dtype_(spec.Arg<std::string>("dtype")) {}

  OutputDescs Setup(const Workspace& ws) override {
    layout_ = CheckImageInput(ws, 0, {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32}, kMaxResampleChannels);
    const TensorListDesc in = ws.InputDesc(0);
    OutputDesc out{{}, OutDType(in.dtype), layout_};
    out.shapes.reserve(in.shapes.size());
    geometry_.assign(in.shapes.size(), Geometry{});
    Args args(ws);
    for (int i = 0; i < static_cast<int>(in.shapes.size()); ++i) {
      const auto [frames, s] = SplitFrames(in.shapes[static_cast<size_t>(i)], layout_);
      if (s.num_elements() == 0) {  // nothing to resample: (0, 0, C)
        out.shapes.push_back(JoinFrames(frames, Shape{0, 0, s[2]}, layout_));
        continue;
      }
      const Shape window = SampleGeometry(ws, args, i, s, geometry_[static_cast<size_t>(i)]);
      out.shapes.push_back(JoinFrames(frames, window, layout_));
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        ResampleCpu(Desc(s, in.raw_sample(s), in.shape(s), out.raw_sample(s), out.shape(s)), filter_, in.dtype(),
                    out.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    ResampleDesc* d = descs_.Write(ws.slot(), static_cast<size_t>(in.num_samples()), ws.stream());
    for (int s = 0; s < in.num_samples(); ++s) d[s] = Desc(s, in.raw_sample(s), in.shape(s), out.raw_sample(s), out.shape(s));
  }

  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    // Uploaded before the early return: every Write of PrepareGpu meets its Upload (a captured
    // segment's descriptor arena is positional; docs/executor.md).
    const ResampleDesc* d = descs_.Upload(ws.slot(), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    ResampleGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), filter_, antialias_, in.dtype(),
                out.dtype(), ws.stream(), /*crop_mirror=*/true);
  }

 private:
  // The per-sample arguments, each read once per batch when constant.
  struct Args {
    explicit Args(const Workspace& ws)
        : size(ws, "size"),
          resize_x(ws, "resize_x"),
          resize_y(ws, "resize_y"),
          resize_shorter(ws, "resize_shorter"),
          resize_longer(ws, "resize_longer"),
          crop(ws, "crop"),
          crop_h(ws, "crop_h"),
          crop_w(ws, "crop_w"),
          pos_x(ws, "crop_pos_x"),
          pos_y(ws, "crop_pos_y"),
          mirror(ws, "mirror"),
          max_size(ws.Arg<std::vector<double>>("max_size")) {}
    SampleArg<std::vector<double>> size;
    SampleArg<double> resize_x, resize_y, resize_shorter, resize_longer;
    SampleArg<std::vector<double>> crop;
    SampleArg<double> crop_h, crop_w, pos_x, pos_y;
    SampleArg<int64_t> mirror;
    std::vector<double> max_size;
  };

  DType OutDType(DType in) const {
    if (dtype_ == "uint8") return DType::kUInt8;
    if (dtype_ == "float32") return DType::kFloat32;
    return in;
  }

  // Sample i's resize, window and mirror (checked) into `g`, for an image (frame) of shape `s`;
  // returns the output frame's shape. Per-sample values are checked here: the schema's ranges
  // cover only constants.
  Shape SampleGeometry(const Workspace& ws, Args& a, int i, const Shape& s, Geometry& g) const {
    const auto where = [&] { return ws.spec().Describe() + ": sample " + std::to_string(i); };
    ResizeSizeArgs r;
    r.size = a.size(i);
    r.resize_x = a.resize_x(i);
    r.resize_y = a.resize_y(i);
    r.resize_shorter = a.resize_shorter(i);
    r.resize_longer = a.resize_longer(i);
    r.max_size = a.max_size;
    std::tie(g.resized_h, g.resized_w) = ResizeOutputSize(s[0], s[1], r, where);

    const std::vector<double>& crop = a.crop(i);
    double h = a.crop_h(i), w = a.crop_w(i);
    if (!crop.empty()) {
      if (crop.size() != 2) {
        throw InvalidArgument(where() + ": crop must be [h, w], got " + std::to_string(crop.size()) + " values");
      }
      h = crop[0];
      w = crop[1];
    }
    const int64_t crop_h = std::llround(h), crop_w = std::llround(w);
    if (crop_h < 1 || crop_w < 1) {
      std::ostringstream m;
      m << where() << ": expected a crop window of at least 1x1 (give crop [h, w] or crop_h and crop_w), got " << h
        << "x" << w;
      throw InvalidArgument(m.str());
    }
    const double px = a.pos_x(i), py = a.pos_y(i);
    if (!(px >= 0 && px <= 1) || !(py >= 0 && py <= 1)) {
      std::ostringstream m;
      m << where() << ": expected crop_pos_x and crop_pos_y in [0, 1], got " << px << " and " << py;
      throw InvalidArgument(m.str());
    }
    if (crop_h > g.resized_h || crop_w > g.resized_w) {
      throw InvalidArgument(where() + ": expected a crop window inside the resized image, got " +
                            std::to_string(crop_h) + "x" + std::to_string(crop_w) + " in " +
                            std::to_string(g.resized_h) + "x" + std::to_string(g.resized_w) + " (resized from " +
                            std::to_string(s[0]) + "x" + std::to_string(s[1]) +
                            "; resize_crop_mirror does not pad)");
    }
    g.crop_y = CropOrigin(py, g.resized_h, crop_h);
    g.crop_x = CropOrigin(px, g.resized_w, crop_w);
    const int64_t mirror = a.mirror(i);
    if (mirror < 0 || mirror > (kMirrorX | kMirrorY)) {
      throw InvalidArgument(where() + ": expected mirror 0 (none), 1 (horizontal), 2 (vertical) or 3 (both), got " +
                            std::to_string(mirror));
    }
    g.mirror = static_cast<int>(mirror);
    return Shape{crop_h, crop_w, s[2]};
  }

  // Sample s's descriptor: its geometry from Setup with the addresses; a clip's frames share it.
  ResampleDesc Desc(int s, const void* in, const Shape& in_shape, void* out, const Shape& out_shape) const {
    const Geometry& g = geometry_[static_cast<size_t>(s)];
    const SampleFrames src = SplitFrames(in_shape, layout_);
    return MakeResizeCropDesc(in, src.frame, g.resized_h, g.resized_w, g.crop_y, g.crop_x, out,
                              SplitFrames(out_shape, layout_).frame, filter_, antialias_, g.mirror, src.count);
  }

  Layout layout_ = "HWC";  // of this iteration's input, from Setup
  resample::Filter filter_;
  bool antialias_;
  std::string dtype_;
  std::vector<Geometry> geometry_;  // this batch's, from Setup
  SlotDescriptors<ResampleDesc> descs_;
};

const OperatorRegistration<ResizeCropMirrorOp> kRegistration(kResizeCropMirrorSchema);

}  // namespace
}  // namespace conveyor::ops
