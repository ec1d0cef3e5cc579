// auto_contrast and equalize: the histogram operators of the AutoAugment set on uint8 images
// (histogram.h has the table rules, torchvision's).
//
// | input                                 | output | arguments |
// |---------------------------------------|--------|-----------|
// | HWC (1..4 channels) or HW; uint8      | uint8  | —         |
//
// GPU: one block per sample builds the histogram, the tables and the output: one launch per
// batch, capturable. CPU and GPU bit-identical.
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/color/histogram.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const OpSchema kAutoContrastSchema =
    OpSchema("auto_contrast")
        .Doc("Stretches each channel of a uint8 image so that its darkest value becomes 0 and its brightest 255 "
             "(torchvision's autocontrast; a constant channel is unchanged).")
        .Input("input", {"HWC", "HW"}, {DType::kUInt8})
        .Output("output")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const OpSchema kEqualizeSchema = OpSchema("equalize")
                                     .Doc("Equalizes the histogram of each channel of a uint8 image (torchvision's "
                                          "equalize).")
                                     .Input("input", {"HWC", "HW"}, {DType::kUInt8})
                                     .Output("output")
                                     .Backends({Device::kCpu, Device::kGpu})
                                     .Capturable();

template <HistogramMode kMode>
class HistogramOp final : public Operator {
 public:
  using Operator::Operator;

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& d = ws.InputDesc(0);
    const Layout layout = CheckInput(spec(), d, 0, {"HWC", "HW"}, {DType::kUInt8});
    samples_.assign(d.shapes.size(), HistogramSample{});
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int64_t channels = layout == "HWC" ? d.shapes[i][2] : 1;
      if (channels < 1 || channels > kMaxHistogramChannels) {
        throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + " has " +
                              std::to_string(channels) + " channels, expected 1 to " +
                              std::to_string(kMaxHistogramChannels));
      }
      samples_[i].count = d.shapes[i].num_elements();
      samples_[i].channels = static_cast<int32_t>(channels);
      samples_[i].mode = kMode;
    }
    return {d};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        HistogramSample s = samples_[static_cast<size_t>(i)];
        s.in = static_cast<const uint8_t*>(in.raw_sample(static_cast<int>(i)));
        s.out = static_cast<uint8_t*>(out.raw_sample(static_cast<int>(i)));
        HistogramCpu(s);
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    HistogramSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = samples_[static_cast<size_t>(i)];
      d[i].in = static_cast<const uint8_t*>(in.raw_sample(i));
      d[i].out = static_cast<uint8_t*>(out.raw_sample(i));
    }
  }

  void RunGpu(Workspace& ws) override {
    const HistogramSample* descs = descs_.Upload(ws.slot(), ws.stream());
    HistogramGpu(descs, ws.OutputGpu(0).num_samples(), ws.stream());
  }

 private:
  std::vector<HistogramSample> samples_;
  SlotDescriptors<HistogramSample> descs_;
};

const OperatorRegistration<HistogramOp<HistogramMode::kAutoContrast>> kAutoContrastRegistration(kAutoContrastSchema);
const OperatorRegistration<HistogramOp<HistogramMode::kEqualize>> kEqualizeRegistration(kEqualizeSchema);

}  // namespace
}  // namespace conveyor::ops
