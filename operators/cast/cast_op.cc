// cast: converts every element to `dtype`; shapes and layout are kept. GPU: one launch per batch
// reading per-sample descriptors (PrepareGpu writes them, RunGpu uploads them): capturable.
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/cast/cast.h"

namespace conveyor::ops {
namespace {

const OpSchema kCastSchema = OpSchema("cast")
                                 .Doc("Converts each element to another dtype (static_cast semantics; float16 and bfloat16 through "
                                      "float32 with round-to-nearest-even).")
                                 .Input("input")
                                 .Output("output")
                                 .RequiredArg<DType>("dtype", "The output dtype.")
                                 .Backends({Device::kCpu, Device::kGpu})
                                 .Capturable();

class CastOp final : public Operator {
 public:
  explicit CastOp(const OpSpec& spec) : Operator(spec), dtype_(spec.Arg<DType>("dtype")) {}

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    d.dtype = dtype_;
    return {d};
  }
  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        CastCpu(out.raw_sample(s), dtype_, in.raw_sample(s), in.dtype(), in.shape(s).num_elements());
      }
    });
  }
  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    CastSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int s = 0; s < out.num_samples(); ++s) d[s] = {in.raw_sample(s), out.raw_sample(s), in.shape(s).num_elements()};
  }
  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    if (n == 0) return;
    const CastSample* dev = descs_.Upload(ws.slot(), ws.stream());
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(dtype_)) / n;
    CastGpu(dev, n, hint, dtype_, in.dtype(), ws.stream());
  }

 private:
  DType dtype_;
  SlotDescriptors<CastSample> descs_;
};

const OperatorRegistration<CastOp> kRegistration(kCastSchema);

}  // namespace
}  // namespace conveyor::ops
