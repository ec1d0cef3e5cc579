// copy: the identity with a fresh output buffer (CPU: memcpy per sample; GPU: one launch copying
// every sample, sizes from descriptors, so a captured copy follows the batch's shapes).
//
// | input | dtypes | layouts | output             |
// |-------|--------|---------|--------------------|
// | any   | any    | any     | same shapes/dtype  |
#include <cstring>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/copy/copy.h"

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
  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    SampleCopy* d = descs_.Write(ws.slot(), static_cast<size_t>(in.num_samples()), ws.stream());
    for (int s = 0; s < in.num_samples(); ++s) {
      d[s] = {in.raw_sample(s), out.raw_sample(s),
              in.shape(s).num_elements() * static_cast<int64_t>(DTypeSize(in.dtype()))};
    }
  }
  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    // Only sample bytes move (the padding between samples is never read), and the sizes come from
    // the descriptors: a replayed graph copies this iteration's batch, not the captured one's.
    // Uploaded before the early return: every Write of PrepareGpu meets its Upload.
    const SampleCopy* d = descs_.Upload(ws.slot(), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    CopySamplesGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), ws.stream());
  }

 private:
  SlotDescriptors<SampleCopy> descs_;
};

const OperatorRegistration<CopyOp> kRegistration(kCopySchema);

}  // namespace
}  // namespace conveyor::ops
