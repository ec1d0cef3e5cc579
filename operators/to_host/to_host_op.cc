// to_host: the explicit GPU→CPU transfer. Runs on the GPU stream and writes pinned host outputs,
// the only way a CPU node may read what a GPU node produced (Graph rejects other GPU→CPU edges).
#include "core/op/registry.h"
#include "core/tensor/copy.h"

namespace conveyor::ops {
namespace {

const OpSchema kToHostSchema = OpSchema("to_host")
                                   .Doc("Copies a device batch to (pinned) host memory on the GPU stream.")
                                   .Input("input")
                                   .Output("output")
                                   .Backends({Device::kGpu})
                                   .DeviceToHost();

class ToHostOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace& ws) override { return {ws.InputDesc(0)}; }
  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    // Same shapes, same offsets; sample bytes only (the padding between samples is never read).
    if (in.nbytes()) {
      CopySampleBytesAsync(static_cast<char*>(out.raw_sample(0)) - out.offset(0),
                           static_cast<const char*>(in.raw_sample(0)) - in.offset(0), in, ws.stream());
    }
  }
};

const OperatorRegistration<ToHostOp> kRegistration(kToHostSchema);

}  // namespace
}  // namespace conveyor::ops
