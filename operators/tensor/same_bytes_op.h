// The glue shared by reshape, squeeze and expand_dims: operators whose output holds the input's
// bytes unchanged, under another shape and layout.
//
// Why a copy and not a view: the executor allocates every output in its slot's buffers (Place,
// core/pipeline/staging.h) and has no way for an output to alias an input, so the bytes move once
// (CPU: one memcpy per sample; GPU: one launch for the batch, sizes from descriptors, capturable).
// A zero-copy view needs an executor change (docs/operators_tensor.md, "Views").
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

#include "core/op/operator.h"
#include "core/op/slot_descriptors.h"
#include "operators/copy/copy.h"
#include "operators/tensor/op_context.h"

namespace conveyor::ops {

class SameBytesOp : public Operator {
 public:
  using Operator::Operator;

  // The output's shapes (same element counts as the input's) and layout; dtype is the input's.
  virtual TensorListDesc Reinterpret(const Workspace& ws) = 0;

  OutputDescs Setup(const Workspace& ws) final {
    TensorListDesc out = Reinterpret(ws);
    out.dtype = ws.InputDesc(0).dtype;
    return {std::move(out)};
  }

  void RunCpu(Workspace& ws) final {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) CopySampleCpu(in, out, static_cast<int>(i));
    });
  }

  void PrepareGpu(Workspace& ws) final {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = in.num_samples();
    SampleCopy* d = descs_.Write(ws.slot(), static_cast<size_t>(n), ws.stream());
    for (int s = 0; s < n; ++s) d[s] = {in.raw_sample(s), out.raw_sample(s), SampleBytes(in, s)};
  }

  void RunGpu(Workspace& ws) final {
    TensorListGPU& out = ws.OutputGpu(0);
    const SampleCopy* d = descs_.Upload(ws.slot(), ws.stream());  // every iteration, as Write
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    CopySamplesGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), ws.stream());
  }

 private:
  template <typename List>
  static int64_t SampleBytes(const List& list, int s) {
    return list.shape(s).num_elements() * static_cast<int64_t>(DTypeSize(list.dtype()));
  }
  static void CopySampleCpu(const TensorListCPU& in, TensorListCPU& out, int s) {
    const int64_t bytes = SampleBytes(in, s);
    if (bytes > 0) std::memcpy(out.raw_sample(s), in.raw_sample(s), static_cast<size_t>(bytes));
  }

  SlotDescriptors<SampleCopy> descs_;
};

}  // namespace conveyor::ops
