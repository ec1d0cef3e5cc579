#include "core/pipeline/captured_segment.h"

#include <cuda_runtime_api.h>

#include <vector>

#include "core/cuda/check.h"
#include "core/error.h"

namespace conveyor::pipeline_internal {

CapturedSegment CapturedSegment::Capture(StreamView stream, const CaptureSignature& signature,
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
  segment.signature_ = signature.Kept();
  return segment;
}

int CapturedSegment::TrackCopy(void* dst, const void* src, size_t bytes) {
  size_t n = 0;
  CONVEYOR_CUDA_CHECK(cudaGraphGetNodes(graph_.get(), nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  CONVEYOR_CUDA_CHECK(cudaGraphGetNodes(graph_.get(), nodes.data(), &n));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    CONVEYOR_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeMemcpy) continue;
    cudaMemcpy3DParms params = {};
    CONVEYOR_CUDA_CHECK(cudaGraphMemcpyNodeGetParams(node, &params));
    if (params.dstPtr.ptr != dst) continue;
    copies_.push_back(Copy{node, dst, src, bytes});
    return static_cast<int>(copies_.size() - 1);
  }
  throw Error("captured segment: no memcpy node writes the staged device buffer");
}

void CapturedSegment::SetCopyBytes(int index, size_t bytes) {
  Copy& copy = copies_.at(static_cast<size_t>(index));
  if (copy.bytes == bytes) return;
  CONVEYOR_CUDA_CHECK(
      cudaGraphExecMemcpyNodeSetParams1D(exec_.get(), copy.node, copy.dst, copy.src, bytes, cudaMemcpyDefault));
  copy.bytes = bytes;
}

}  // namespace conveyor::pipeline_internal
