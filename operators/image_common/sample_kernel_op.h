// The run half of an image operator whose Setup fills one descriptor per sample (everything but
// the sample's addresses) into samples_: RunCpu runs `CpuFn` on each sample on the CPU stage's
// threads, PrepareGpu writes the descriptors with the samples' addresses into the slot's
// descriptor buffer, RunGpu uploads them and launches `GpuFn` once for the batch (capturable).
// Used by erase, grid_mask, gaussian_blur and sharpness.
//   CpuFn: void(const Sample&, DType)
//   GpuFn: void(const Sample* descs, int n, int64_t max_pixels_hint, DType, cuda::StreamView)
#pragma once

#include <cstdint>
#include <vector>

#include "core/op/operator.h"
#include "core/op/slot_descriptors.h"
#include "core/op/workspace.h"

namespace conveyor::ops {

template <typename Sample, auto CpuFn, auto GpuFn>
class SampleKernelOp : public Operator {
 public:
  using Operator::Operator;

  void RunCpu(Workspace& ws) final {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        Sample s = samples_[static_cast<size_t>(i)];
        s.in = in.raw_sample(static_cast<int>(i));
        s.out = out.raw_sample(static_cast<int>(i));
        CpuFn(s, in.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) final {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    Sample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = samples_[static_cast<size_t>(i)];
      d[i].in = in.raw_sample(i);
      d[i].out = out.raw_sample(i);
    }
  }

  void RunGpu(Workspace& ws) final {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    const Sample* descs = descs_.Upload(ws.slot(), ws.stream());  // every iteration, as Write (docs/executor.md)
    if (n == 0) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(in.dtype())) / n;
    GpuFn(descs, n, hint, in.dtype(), ws.stream());
  }

 protected:
  std::vector<Sample> samples_;  // Setup's, one per sample, without addresses

 private:
  SlotDescriptors<Sample> descs_;
};

}  // namespace conveyor::ops
