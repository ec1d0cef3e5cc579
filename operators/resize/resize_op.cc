// resize: resamples each HWC image, or every frame of an FHWC clip, to its own output size
// (per-sample arguments allowed; a clip's frames share the sample's size).
//
// | input        | dtypes          | layouts                 | output                            |
// |--------------|-----------------|-------------------------|-----------------------------------|
// | images       | uint8, float32  | HWC, FHWC; 1..8 channels | (out_h, out_w, C) or (F, out_h,   |
// |              |                 |                         | out_w, C); dtype `dtype`          |
//
// Sizes: resize.h. Filters, antialiasing and rounding: operators/resample/resample_math.h.
// GPU: PrepareGpu writes one ResampleDesc per sample (a clip's frames counted in it) into the
// slot's descriptors; RunGpu uploads them and launches once, the grid sized from the output
// capacity — capturable.
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/resample/image_input.h"
#include "operators/resample/resample.h"
#include "operators/resize/resize.h"

namespace conveyor::ops {
namespace {

OpSchema MakeResizeSchema() {
  OpSchema schema("resize");
  schema.Doc("Resizes HWC images or FHWC clips (every frame alike; uint8 or float32) with nearest, linear or cubic "
             "interpolation; antialiased when downscaling. Give exactly one of size, resize_x/resize_y, "
             "resize_shorter, resize_longer.")
      .Input("images", {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32})
      .Output("resized");
  AddResizeSizeArgs(schema, "Output")
      .Arg<std::string>("interp_type", "linear",
                        "nearest, linear or cubic (Keys a = -0.5); DALI's INTERP_NN / INTERP_LINEAR / "
                        "INTERP_CUBIC are accepted.")
      .Choices(InterpTypeNames())
      .Arg<bool>("antialias", true,
                 "When downscaling an axis by s > 1, stretch the linear/cubic filter by s (support s or 2s).")
      .Arg<std::string>("dtype", "same", "Output dtype: same (as the input), uint8 or float32.")
      .Choices({"same", "uint8", "float32"})
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
  return schema;
}

const OpSchema kResizeSchema = MakeResizeSchema();

class ResizeOp final : public Operator {
 public:
  explicit ResizeOp(const OpSpec& spec)
      : Operator(spec),
        filter_(ParseInterpType(spec.Arg<std::string>("interp_type"))),
        antialias_(spec.Arg<bool>("antialias")),
        dtype_(spec.Arg<std::string>("dtype")) {}

  OutputDescs Setup(const Workspace& ws) override {
    layout_ = CheckImageInput(ws, 0, {"HWC", "FHWC"}, {DType::kUInt8, DType::kFloat32}, kMaxResampleChannels);
    const TensorListDesc in = ws.InputDesc(0);
    OutputDesc out{{}, OutDType(in.dtype), layout_};
    out.shapes.reserve(in.shapes.size());
    // Constant arguments are read once, not per sample (SampleArg).
    const SampleArg<std::vector<double>> size(ws, "size");
    const SampleArg<double> resize_x(ws, "resize_x"), resize_y(ws, "resize_y");
    const SampleArg<double> resize_shorter(ws, "resize_shorter"), resize_longer(ws, "resize_longer");
    ResizeSizeArgs a;
    a.max_size = ws.Arg<std::vector<double>>("max_size");
    for (int i = 0; i < static_cast<int>(in.shapes.size()); ++i) {
      const auto [frames, s] = SplitFrames(in.shapes[static_cast<size_t>(i)], layout_);
      if (s.num_elements() == 0) {  // an empty image (or frames of one): nothing to resample
        out.shapes.push_back(JoinFrames(frames, Shape{0, 0, s[2]}, layout_));
        continue;
      }
      a.size = size(i);
      a.resize_x = resize_x(i);
      a.resize_y = resize_y(i);
      a.resize_shorter = resize_shorter(i);
      a.resize_longer = resize_longer(i);
      const auto [h, w] = ResizeOutputSize(s[0], s[1], a, [&] { return ws.spec().Describe() + ": sample " + std::to_string(i); });
      out.shapes.push_back(JoinFrames(frames, Shape{h, w, s[2]}, layout_));
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const ResampleDesc d = Desc(in.raw_sample(static_cast<int>(i)), in.shape(static_cast<int>(i)),
                                    out.raw_sample(static_cast<int>(i)), out.shape(static_cast<int>(i)));
        ResampleCpu(d, filter_, in.dtype(), out.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    ResampleDesc* d = descs_.Write(ws.slot(), static_cast<size_t>(in.num_samples()), ws.stream());
    for (int i = 0; i < in.num_samples(); ++i) d[i] = Desc(in.raw_sample(i), in.shape(i), out.raw_sample(i), out.shape(i));
  }

  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    // Uploaded before any early return: PrepareGpu wrote the descriptors, and inside a captured
    // segment every Write must meet its Upload (docs/executor.md).
    const ResampleDesc* d = descs_.Upload(ws.slot(), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    ResampleGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), filter_, antialias_, in.dtype(),
                out.dtype(), ws.stream());
  }

 private:
  DType OutDType(DType in) const {
    if (dtype_ == "uint8") return DType::kUInt8;
    if (dtype_ == "float32") return DType::kFloat32;
    return in;
  }
  // One descriptor per sample: a clip's frames share its size and taps.
  ResampleDesc Desc(const void* in, const Shape& in_shape, void* out, const Shape& out_shape) const {
    const SampleFrames src = SplitFrames(in_shape, layout_);
    const Shape dst = SplitFrames(out_shape, layout_).frame;
    return MakeResampleDesc(in, src.frame, 0, 0, src.frame[0], src.frame[1], out, dst, filter_, antialias_, src.count);
  }

  Layout layout_ = "HWC";  // of this iteration's input, from Setup
  resample::Filter filter_;
  bool antialias_;
  std::string dtype_;
  SlotDescriptors<ResampleDesc> descs_;
};

const OperatorRegistration<ResizeOp> kRegistration(kResizeSchema);

}  // namespace
}  // namespace conveyor::ops
