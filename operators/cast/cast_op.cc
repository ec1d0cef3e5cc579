// cast: converts every element to `dtype`; shapes and layout are kept.
#include "core/op/registry.h"
#include "operators/cast/cast.h"

namespace conveyor::ops {
namespace {

const OpSchema kCastSchema = OpSchema("cast")
                                 .Doc("Converts each element to another dtype (static_cast semantics).")
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
    CheckCastDTypes(d.dtype, dtype_);
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
  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    // Samples are padded to 16 bytes, so input and output offsets differ per dtype: one launch
    // per sample keeps the kernel simple (a batched descriptor kernel is the capture-friendly next step).
    for (int s = 0; s < in.num_samples(); ++s) {
      CastGpu(out.raw_sample(s), dtype_, in.raw_sample(s), in.dtype(), in.shape(s).num_elements(), ws.stream());
    }
  }

 private:
  DType dtype_;
};

const OperatorRegistration<CastOp> kRegistration(kCastSchema);

}  // namespace
}  // namespace conveyor::ops
