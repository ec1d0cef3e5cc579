// AffineOp: the run half shared by every operator that is out = in * mul[c] + add[c] per sample
// (normalize, brightness_contrast). A derived operator's Setup fills `samples_` (mul/add/count/
// channels per sample, pointers left empty) and `out_type_`; this class runs them on the CPU
// (AffineCpu per sample) and the GPU (one batched AffineGpu launch from per-slot descriptors).
#pragma once

#include <vector>

#include "core/op/operator.h"
#include "core/op/slot_descriptors.h"
#include "operators/image_common/affine.h"

namespace conveyor::ops {

class AffineOp : public Operator {
 public:
  using Operator::Operator;

  void RunCpu(Workspace& ws) final {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        AffineSample a = samples_[static_cast<size_t>(i)];
        a.in = in.raw_sample(static_cast<int>(i));
        a.out = out.raw_sample(static_cast<int>(i));
        AffineCpu(a, out_type_, in.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) final {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    AffineSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
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
    if (n == 0) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(out_type_)) / n;
    AffineGpu(descs_.Upload(ws.slot(), ws.stream()), n, hint, out_type_, in.dtype(), ws.stream());
  }

 protected:
  std::vector<AffineSample> samples_;  // from Setup: one per sample, pointers unset
  DType out_type_ = DType::kFloat32;   // from Setup

 private:
  SlotDescriptors<AffineSample> descs_;
};

}  // namespace conveyor::ops
