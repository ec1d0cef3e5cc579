// copy: the identity with a fresh output buffer (CPU: memcpy per sample; GPU: one D2D copy).
//
// | input | dtypes | layouts | output             |
// |-------|--------|---------|--------------------|
// | any   | any    | any     | same shapes/dtype  |
#include <cstring>

#include "core/op/registry.h"
#include "core/tensor/copy.h"

namespace conveyor::ops {
namespace {

const OpSchema kCopySchema = OpSchema("copy")
                                 .Doc("Copies its input into a new buffer.")
                                 .Input("input")
                                 .Output("output")
                                 .Backends({Device::kCpu, Device::kGpu})
                                 .Capturable();

class CopyOp final : public Operator {
 public:
  using Operator::Operator;
  OutputDescs Setup(const Workspace& ws) override { return {ws.InputDesc(0)}; }
  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        const size_t bytes = static_cast<size_t>(in.shape(s).num_elements()) * DTypeSize(in.dtype());
        if (bytes) std::memcpy(out.raw_sample(s), in.raw_sample(s), bytes);
      }
    });
  }
  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    // Same shapes and alignment rules, so the sample offsets match: one copy for the batch.
    if (in.nbytes()) CopyBytesAsync(out.raw_sample(0), in.raw_sample(0), in.nbytes(), ws.stream());
  }
};

const OperatorRegistration<CopyOp> kRegistration(kCopySchema);

}  // namespace
}  // namespace conveyor::ops
