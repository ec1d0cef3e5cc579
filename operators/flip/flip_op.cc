// flip: mirrors each sample horizontally and/or vertically; the flags may be per sample (e.g.
// from random.coin_flip). Every frame of a clip (FHWC, FCHW) is mirrored as its sample says.
//
// | input   | dtypes | layouts                  | output                     |
// |---------|--------|--------------------------|----------------------------|
// | images  | any    | HWC, CHW, HW, FHWC, FCHW | same shape, dtype, layout  |
//
// GPU: the flags and addresses travel in per-slot descriptors (PrepareGpu), one launch per batch
// sized from the output capacity — capturable.
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/flip/flip.h"
#include "operators/resample/image_input.h"

namespace conveyor::ops {
namespace {

const OpSchema kFlipSchema =
    OpSchema("flip")
        .Doc("Mirrors each sample along W (horizontal) and/or H (vertical); every frame of a clip alike.")
        .Input("images", {"HWC", "CHW", "HW", "FHWC", "FCHW"})
        .Output("flipped")
        .Arg<int64_t>("horizontal", 1, "Mirror along W (0 or 1; nonzero per-sample values mean 1).", PerSample::kAllowed)
        .Range(0, 1)
        .Arg<int64_t>("vertical", 0, "Mirror along H (0 or 1; nonzero per-sample values mean 1).", PerSample::kAllowed)
        .Range(0, 1)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const std::vector<DType> kAnyDType = {DType::kBool,  DType::kUInt8,   DType::kInt8,     DType::kUInt16,
                                      DType::kInt16, DType::kInt32,   DType::kInt64,    DType::kFloat16,
                                      DType::kBFloat16, DType::kFloat32, DType::kFloat64};

class FlipOp final : public Operator {
 public:
  using Operator::Operator;

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    d.layout = CheckImageInput(ws, 0, {"HWC", "CHW", "HW", "FHWC", "FCHW"}, kAnyDType, 0);
    layout_ = d.layout;  // the run reads it from here, not from the output list
    return {d};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    const Layout layout = layout_;
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        FlipCpu(Desc(ws, layout, in.raw_sample(s), out.raw_sample(s), in.shape(s), s),
                static_cast<int>(DTypeSize(in.dtype())));
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    FlipDesc* d = descs_.Write(ws.slot(), static_cast<size_t>(in.num_samples()), ws.stream());
    for (int s = 0; s < in.num_samples(); ++s) {
      d[s] = Desc(ws, layout_, in.raw_sample(s), out.raw_sample(s), in.shape(s), s);
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    // Uploaded before the early return: every Write of PrepareGpu meets its Upload (a captured
    // segment's descriptor arena is positional; docs/executor.md).
    const FlipDesc* d = descs_.Upload(ws.slot(), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    FlipGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), static_cast<int>(DTypeSize(out.dtype())),
            ws.stream());
  }

 private:
  // The axes before H are planes (CHW: C; FHWC: F; FCHW: F x C), each mirrored alike.
  static FlipDesc Desc(const Workspace& ws, const Layout& layout, const void* in, void* out, const Shape& s, int i) {
    FlipDesc d{in, out, 1, 1, 1, 1, 0, 0};
    const int h = layout.find('H'), w = layout.find('W');
    for (int a = 0; a < h; ++a) d.planes *= s[a];
    d.height = s[h];
    d.width = s[w];
    for (int a = w + 1; a < s.ndim(); ++a) d.inner *= s[a];
    d.horizontal = ws.ArgForSample<int64_t>("horizontal", i) != 0;
    d.vertical = ws.ArgForSample<int64_t>("vertical", i) != 0;
    return d;
  }

  Layout layout_ = "HWC";  // of this iteration's input, from Setup
  SlotDescriptors<FlipDesc> descs_;
};

const OperatorRegistration<FlipOp> kRegistration(kFlipSchema);

}  // namespace
}  // namespace conveyor::ops
