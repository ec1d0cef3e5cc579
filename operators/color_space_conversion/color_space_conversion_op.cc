// color_space_conversion (DALI's name and arguments): image_type → output_type among RGB, BGR,
// GRAY and YCbCr (BT.601 full range; the matrices are in color_space_conversion.h).
//
// | input                         | arguments                           | output                     |
// |-------------------------------|-------------------------------------|----------------------------|
// | HWC uint8 or float32 (0..255  | image_type (RGB default), output_   | HWC, same dtype, 3 channels|
// | scale), C = 1 for GRAY else 3 | type (required)                     | (1 for GRAY)               |
//
// GPU: one launch per batch, capturable (pointers, pixel counts and the matrix in descriptors).
#include "core/error.h"
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/color_space_conversion/color_space_conversion.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<std::string> kSpaces = {"RGB", "BGR", "GRAY", "YCbCr"};
const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat32};

const OpSchema kSchema =
    OpSchema("color_space_conversion")
        .Doc("Converts HWC images between RGB, BGR, GRAY (1 channel) and YCbCr (ITU-R BT.601 full range, as JPEG: "
             "Y = 0.299 R + 0.587 G + 0.114 B, Cb = 128 - 0.168736 R - 0.331264 G + 0.5 B, "
             "Cr = 128 + 0.5 R - 0.418688 G - 0.081312 B, and the inverse). uint8 is rounded to nearest and clamped; "
             "float32 uses the same 0..255 scale, unclamped.")
        .Input("input", {"HWC"}, kTypes)
        .Output("output")
        .Arg<std::string>("image_type", "RGB", "Color space of the input: RGB, BGR, GRAY or YCbCr.")
        .Choices(kSpaces)
        .RequiredArg<std::string>("output_type", "Color space of the output: RGB, BGR, GRAY or YCbCr.")
        .Choices(kSpaces)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class ColorSpaceConversionOp final : public Operator {
 public:
  explicit ColorSpaceConversionOp(const OpSpec& spec)
      : Operator(spec),
        in_name_(spec.Arg<std::string>("image_type")),
        in_space_(ParseColorSpace(in_name_)),
        out_space_(ParseColorSpace(spec.Arg<std::string>("output_type"))),
        cin_(ColorSpaceChannels(in_space_)),
        cout_(ColorSpaceChannels(out_space_)),
        copy_(in_space_ == out_space_),
        mat_(MakeCscMatrix(in_space_, out_space_)) {}

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    d.layout = CheckInput(spec(), d, 0, {"HWC"}, kTypes);  // an unlabelled input comes out HWC
    samples_.assign(d.shapes.size(), CscSample{});
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      Shape& s = d.shapes[i];
      if (s[2] != cin_) {
        throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + " has shape " +
                              s.ToString() + ": expected " + std::to_string(cin_) + " channel" +
                              (cin_ == 1 ? "" : "s") + " for image_type " + in_name_ + ", got " +
                              std::to_string(s[2]));
      }
      samples_[i].pixels = s[0] * s[1];
      samples_[i].mat = mat_;
      s[2] = cout_;
    }
    return {d};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        CscSample s = samples_[static_cast<size_t>(i)];
        s.in = in.raw_sample(static_cast<int>(i));
        s.out = out.raw_sample(static_cast<int>(i));
        CscCpu(s, cin_, cout_, copy_, in.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    CscSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = samples_[static_cast<size_t>(i)];
      d[i].in = in.raw_sample(i);
      d[i].out = out.raw_sample(i);
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    if (n == 0) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / (DTypeSize(out.dtype()) * cout_)) / n;
    CscGpu(descs_.Upload(ws.slot(), ws.stream()), n, hint, cin_, cout_, copy_, out.dtype(), ws.stream());
  }

 private:
  std::string in_name_;
  ColorSpace in_space_, out_space_;
  int cin_, cout_;
  bool copy_;
  CscMatrix mat_;
  std::vector<CscSample> samples_;
  SlotDescriptors<CscSample> descs_;
};

const OperatorRegistration<ColorSpaceConversionOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
