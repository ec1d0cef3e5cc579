#include "core/pipeline/captured_segment.h"

#include <cuda_runtime_api.h>

#include "core/cuda/check.h"

namespace conveyor::pipeline_internal {

CapturedSegment CapturedSegment::Capture(StreamView stream, CaptureSignature signature,
                                         const std::function<void()>& issue) {
  cuda::Graph::BeginCapture(stream);
  try {
    issue();
  } catch (...) {
    // Leave the stream out of capture mode (and drop the partial graph) before reporting.
    cudaGraph_t partial = nullptr;
    CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamEndCapture(stream.get(), &partial));
    if (partial != nullptr) CONVEYOR_CUDA_CHECK_NOTHROW(cudaGraphDestroy(partial));
    (void)cudaGetLastError();  // a failed capture leaves a non-sticky error behind
    throw;
  }
  CapturedSegment segment;
  segment.graph_ = cuda::Graph::EndCapture(stream);
  segment.exec_ = segment.graph_.Instantiate();
  segment.node_count_ = segment.graph_.NodeCount();
  segment.signature_ = std::move(signature);
  return segment;
}

}  // namespace conveyor::pipeline_internal
