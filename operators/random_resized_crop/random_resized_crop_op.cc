// random_resized_crop: a random window of each HWC image (area and aspect ratio drawn as
// torchvision's RandomResizedCrop / DALI, operators/common/crop_window.h) resampled to `size`.
// An FHWC clip draws one window, which every frame of it is cropped with.
//
// | input   | dtypes          | layouts   | output                                          |
// |---------|-----------------|-----------|-------------------------------------------------|
// | images  | uint8, float32  | HWC, FHWC | (size[0], size[1], C) or (F, size[0], size[1],   |
// |         |                 |           | C), dtype `dtype`; a zero-sized image (frame)    |
// |         |                 |           | gives (0, 0, C) ((F, 0, 0, C))                   |
//
// Windows come from the sample's Philox stream ws.Rng(i) on the host, so the CPU and GPU
// backends crop the same windows. GPU: the window is part of the ResampleDesc written in
// PrepareGpu; one fused crop+resize launch reads only the window — capturable.
#include <sstream>

#include "core/error.h"
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/common/crop_window.h"
#include "operators/resample/image_input.h"
#include "operators/resample/resample.h"

namespace conveyor::ops {
namespace {

const OpSchema kRandomResizedCropSchema =
    OpSchema("random_resized_crop")
        .Doc("Crops a random window (random area fraction and aspect ratio, DALI's centre-crop fallback) of each HWC "
             "image and resizes it to size, in one pass that reads only the window. An FHWC clip draws one window "
             "for all its frames.")
        .Input("images", {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32})
        .Output("crops")
        .RequiredArg<std::vector<double>>("size", "Output [h, w].")
        .Min(1)
        .Arg<std::vector<double>>("random_area", std::vector<double>{0.08, 1.0},
                                  "[lo, hi]: the window's area as a fraction of the image, drawn uniformly.")
        .Arg<std::vector<double>>("random_aspect_ratio", std::vector<double>{3.0 / 4, 4.0 / 3},
                                  "[lo, hi]: the window's width / height, drawn log-uniformly.")
        .Arg<int64_t>("num_attempts", 10, "Draws before falling back to a centred crop of the whole image.")
        .Min(1)
        .Arg<std::string>("interp_type", "linear",
                          "nearest, linear or cubic (Keys a = -0.5); DALI's INTERP_NN / INTERP_LINEAR / "
                          "INTERP_CUBIC are accepted.")
        .Choices(InterpTypeNames())
        .Arg<bool>("antialias", true, "When the window is downscaled along an axis by s > 1, stretch the filter by s.")
        .Arg<std::string>("dtype", "same", "Output dtype: same (as the input), uint8 or float32.")
        .Choices({"same", "uint8", "float32"})
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class RandomResizedCropOp final : public Operator {
 public:
  explicit RandomResizedCropOp(const OpSpec& spec)
      : Operator(spec),
        params_(MakeRandomCropParams(spec.Arg<std::vector<double>>("random_area"),
                                     spec.Arg<std::vector<double>>("random_aspect_ratio"),
                                     static_cast<int>(spec.Arg<int64_t>("num_attempts")), spec.Describe())),
        filter_(ParseInterpType(spec.Arg<std::string>("interp_type"))),
        antialias_(spec.Arg<bool>("antialias")),
        dtype_(spec.Arg<std::string>("dtype")) {
    const std::vector<double> size = spec.Arg<std::vector<double>>("size");
    if (size.size() != 2) {
      throw InvalidArgument(spec.Describe() + ": size must be [h, w], got " + std::to_string(size.size()) + " values");
    }
    out_h_ = std::llround(size[0]);
    out_w_ = std::llround(size[1]);
  }

  OutputDescs Setup(const Workspace& ws) override {
    layout_ = CheckImageInput(ws, 0, {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32}, kMaxResampleChannels);
    const TensorListDesc in = ws.InputDesc(0);
    DType dtype = in.dtype;
    if (dtype_ == "uint8") dtype = DType::kUInt8;
    if (dtype_ == "float32") dtype = DType::kFloat32;
    OutputDesc out{{}, dtype, layout_};
    for (const Shape& sample : in.shapes) {
      const auto [frames, s] = SplitFrames(sample, layout_);
      out.shapes.push_back(JoinFrames(frames, s.num_elements() == 0 ? Shape{0, 0, s[2]} : Shape{out_h_, out_w_, s[2]},
                                      layout_));
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        ResampleCpu(Desc(ws, s, in.raw_sample(s), in.shape(s), out.raw_sample(s), out.shape(s)), filter_, in.dtype(),
                    out.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    ResampleDesc* d = descs_.Write(ws.slot(), static_cast<size_t>(in.num_samples()), ws.stream());
    for (int s = 0; s < in.num_samples(); ++s) d[s] = Desc(ws, s, in.raw_sample(s), in.shape(s), out.raw_sample(s), out.shape(s));
  }

  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    // Uploaded before the early return: every Write of PrepareGpu meets its Upload (a captured
    // segment's descriptor arena is positional; docs/executor.md).
    const ResampleDesc* d = descs_.Upload(ws.slot(), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    ResampleGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), filter_, antialias_, in.dtype(),
                out.dtype(), ws.stream());
  }

 private:
  // Sample i's window, drawn once from its stream: a clip's frames all take it.
  ResampleDesc Desc(const Workspace& ws, int i, const void* in, const Shape& in_shape, void* out,
                    const Shape& out_shape) const {
    const SampleFrames src = SplitFrames(in_shape, layout_);
    Philox rng = ws.Rng(i);
    const CropWindow w = DrawRandomCropWindow(rng, src.frame[0], src.frame[1], params_);
    return MakeResampleDesc(in, src.frame, w.y, w.x, w.h, w.w, out, SplitFrames(out_shape, layout_).frame, filter_,
                            antialias_, src.count);
  }

  Layout layout_ = "HWC";  // of this iteration's input, from Setup
  RandomCropParams params_;
  resample::Filter filter_;
  bool antialias_;
  std::string dtype_;
  int64_t out_h_ = 0, out_w_ = 0;
  SlotDescriptors<ResampleDesc> descs_;
};

const OperatorRegistration<RandomResizedCropOp> kRegistration(kRandomResizedCropSchema);

}  // namespace
}  // namespace conveyor::ops
