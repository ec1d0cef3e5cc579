// A popped iteration's output on the host, wherever the pipeline left it: for tests that compare
// GPU pipelines with CPU ones.
#pragma once

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"

namespace conveyor::testing {

// Output i of `out` on the host (copied, and waited for, where it is on the GPU).
inline TensorListCPU OutputOnHost(const PipelineOutputs& out, int i) {
  if (!out.IsGpu(i)) return out.Cpu(i);
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, out.Gpu(i), stream.view());
  stream.Synchronize();
  return host;
}

}  // namespace conveyor::testing
