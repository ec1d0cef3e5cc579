#include "core/cuda/graph.h"

#include "core/cuda/check.h"

namespace conveyor::cuda {

void GraphTraits::Destroy(cudaGraph_t graph) noexcept { CONVEYOR_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph)); }

void GraphExecTraits::Destroy(cudaGraphExec_t exec) noexcept {
  CONVEYOR_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec));
}

void GraphExec::Launch(StreamView stream) const {
  CONVEYOR_CUDA_CHECK(cudaGraphLaunch(handle_.get(), stream.get()));
}

void Graph::BeginCapture(StreamView stream) {
  CONVEYOR_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
}

Graph Graph::EndCapture(StreamView stream) {
  cudaGraph_t g = nullptr;
  CONVEYOR_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &g));
  return Graph(g);
}

size_t Graph::NodeCount() const {
  size_t n = 0;
  CONVEYOR_CUDA_CHECK(cudaGraphGetNodes(handle_.get(), nullptr, &n));
  return n;
}

GraphExec Graph::Instantiate() const {
  cudaGraphExec_t e = nullptr;
  CONVEYOR_CUDA_CHECK(cudaGraphInstantiate(&e, handle_.get(), 0));
  return GraphExec(e);
}

}  // namespace conveyor::cuda
