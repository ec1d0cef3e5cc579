// crop: a window of each HWC image, placed by crop_pos_x/crop_pos_y (DALI semantics); all
// arguments may be per sample. Every frame of an FHWC clip is cut with its sample's window.
//
// | input   | dtypes          | layouts   | output                                           |
// |---------|-----------------|-----------|--------------------------------------------------|
// | images  | uint8, float32  | HWC, FHWC | (crop_h, crop_w, C) or (F, crop_h, crop_w, C),   |
// |         |                 |           | same dtype; a zero-sized image (frame) gives      |
// |         |                 |           | (0, 0, C) ((F, 0, 0, C))                          |
//
// Window: x0 = round(crop_pos_x * (W - crop_w)), y0 likewise. out_of_bounds_policy error: a
// window that leaves the image is an error naming the sample and sizes; pad: outside pixels
// take fill_values (one value, or one per channel).
// GPU: windows and addresses in per-slot descriptors (PrepareGpu), one launch — capturable.
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/crop/crop.h"
#include "operators/resample/image_input.h"

namespace conveyor::ops {
namespace {

const OpSchema kCropSchema =
    OpSchema("crop")
        .Doc("Cuts a window out of each HWC image or of every frame of an FHWC clip (uint8 or float32), placed by "
             "crop_pos_x / crop_pos_y.")
        .Input("images", {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32})
        .Output("cropped")
        .Arg<std::vector<double>>("crop", std::vector<double>{}, "Window [h, w]; or give crop_h and crop_w.",
                                  PerSample::kAllowed)
        .Min(0)
        .Arg<double>("crop_h", 0.0, "Window height (when crop is not given).", PerSample::kAllowed)
        .Min(0)
        .Arg<double>("crop_w", 0.0, "Window width (when crop is not given).", PerSample::kAllowed)
        .Min(0)
        .Arg<double>("crop_pos_x", 0.5, "Horizontal placement in [0, 1]: x0 = round(crop_pos_x * (W - crop_w)).",
                     PerSample::kAllowed)
        .Range(0, 1)
        .Arg<double>("crop_pos_y", 0.5, "Vertical placement in [0, 1]: y0 = round(crop_pos_y * (H - crop_h)).",
                     PerSample::kAllowed)
        .Range(0, 1)
        .Arg<std::string>("out_of_bounds_policy", "error",
                          "error: a window leaving the image is an error; pad: outside pixels take fill_values.")
        .Choices({"error", "pad"})
        .Arg<std::vector<double>>("fill_values", std::vector<double>{0.0},
                                  "Padding value: one for all channels, or one per channel.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class CropOp final : public Operator {
 public:
  explicit CropOp(const OpSpec& spec)
      : Operator(spec),
        pad_(spec.Arg<std::string>("out_of_bounds_policy") == "pad"),
        fill_(spec.Arg<std::vector<double>>("fill_values")) {
    if (fill_.empty() || fill_.size() > kMaxCropFill) {
      throw InvalidArgument(spec.Describe() + ": fill_values must have 1 to " + std::to_string(kMaxCropFill) +
                            " values, got " + std::to_string(fill_.size()));
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    const Layout layout = CheckImageInput(ws, 0, {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32}, 0);
    const TensorListDesc in = ws.InputDesc(0);
    OutputDesc out{{}, in.dtype, layout};
    out.shapes.reserve(in.shapes.size());
    // Each sample's window, checked once here; Run* add the addresses.
    geometry_.resize(in.shapes.size());
    CropArgs args(ws);
    for (int i = 0; i < static_cast<int>(in.shapes.size()); ++i) {
      const auto [frames, frame] = SplitFrames(in.shapes[static_cast<size_t>(i)], layout);
      CropDesc& d = geometry_[static_cast<size_t>(i)] = Desc(args, i, frame);
      d.frames = frames;  // one window for all of a clip's frames
      out.shapes.push_back(JoinFrames(frames, Shape{d.out_h, d.out_w, frame[2]}, layout));
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        CropCpu(Bound(s, in.raw_sample(s), out.raw_sample(s)), in.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    CropDesc* d = descs_.Write(ws.slot(), static_cast<size_t>(in.num_samples()), ws.stream());
    for (int s = 0; s < in.num_samples(); ++s) d[s] = Bound(s, in.raw_sample(s), out.raw_sample(s));
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    // Uploaded before the early return: every Write of PrepareGpu meets its Upload (a captured
    // segment's descriptor arena is positional; docs/executor.md).
    const CropDesc* d = descs_.Upload(ws.slot(), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    CropGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), out.dtype(), ws.stream());
  }

 private:
  // The per-sample arguments, each read once per batch when constant.
  struct CropArgs {
    explicit CropArgs(const Workspace& ws)
        : crop(ws, "crop"), crop_h(ws, "crop_h"), crop_w(ws, "crop_w"), pos_x(ws, "crop_pos_x"), pos_y(ws, "crop_pos_y") {}
    SampleArg<std::vector<double>> crop;
    SampleArg<double> crop_h, crop_w, pos_x, pos_y;
  };

  // Sample s's window from Setup with its addresses.
  CropDesc Bound(int s, const void* in, void* out) const {
    CropDesc d = geometry_[static_cast<size_t>(s)];
    d.in = in;
    d.out = out;
    return d;
  }

  // The window of sample i (checked), for an image (or frames) of shape `s`; no addresses.
  CropDesc Desc(CropArgs& args, int i, const Shape& s) const {
    const auto where = [&] { return spec().Describe() + ": sample " + std::to_string(i); };
    CropDesc d{};
    d.in_h = s[0];
    d.in_w = s[1];
    d.channels = s[2];
    if (s.num_elements() == 0) return d;  // nothing to crop: (0, 0, C)
    const std::vector<double>& crop = args.crop(i);
    double h = args.crop_h(i), w = args.crop_w(i);
    if (!crop.empty()) {
      if (crop.size() != 2) {
        throw InvalidArgument(where() + ": crop must be [h, w], got " + std::to_string(crop.size()) + " values");
      }
      h = crop[0];
      w = crop[1];
    }
    d.out_h = std::llround(h);
    d.out_w = std::llround(w);
    if (d.out_h < 1 || d.out_w < 1) {
      std::ostringstream m;
      m << where() << ": the crop window must be at least 1x1 (give crop [h, w] or crop_h and crop_w), got " << h << "x"
        << w;
      throw InvalidArgument(m.str());
    }
    const double px = args.pos_x(i), py = args.pos_y(i);
    if (!(px >= 0 && px <= 1) || !(py >= 0 && py <= 1)) {
      std::ostringstream m;
      m << where() << ": crop_pos_x and crop_pos_y must lie in [0, 1], got " << px << " and " << py;
      throw InvalidArgument(m.str());
    }
    d.x0 = CropOrigin(px, d.in_w, d.out_w);
    d.y0 = CropOrigin(py, d.in_h, d.out_h);
    const bool fits = d.y0 >= 0 && d.x0 >= 0 && d.y0 + d.out_h <= d.in_h && d.x0 + d.out_w <= d.in_w;
    if (!fits && !pad_) {
      throw InvalidArgument(where() + ": crop window " + std::to_string(d.out_h) + "x" + std::to_string(d.out_w) +
                            " at (y=" + std::to_string(d.y0) + ", x=" + std::to_string(d.x0) + ") does not fit the " +
                            std::to_string(d.in_h) + "x" + std::to_string(d.in_w) +
                            " image; use out_of_bounds_policy: pad");
    }
    if (pad_ && fill_.size() != 1 && static_cast<int64_t>(fill_.size()) != d.channels) {
      throw InvalidArgument(where() + ": fill_values has " + std::to_string(fill_.size()) + " values, the image has " +
                            std::to_string(d.channels) + " channels (give 1 or " + std::to_string(d.channels) + ")");
    }
    for (int c = 0; c < kMaxCropFill; ++c) d.fill[c] = static_cast<float>(fill_[fill_.size() == 1 ? 0 : std::min<size_t>(c, fill_.size() - 1)]);
    return d;
  }

  bool pad_;
  std::vector<double> fill_;
  SlotDescriptors<CropDesc> descs_;
  std::vector<CropDesc> geometry_;  // this batch's windows, from Setup
};

const OperatorRegistration<CropOp> kRegistration(kCropSchema);

}  // namespace
}  // namespace conveyor::ops
