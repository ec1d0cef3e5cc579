// Graph / GraphExec: move-only owners of a captured CUDA graph and its executable instance.
#pragma once

#include <cuda_runtime_api.h>

#include "core/cuda/handle.h"
#include "core/cuda/stream.h"

namespace conveyor::cuda {

struct GraphTraits {
  using Handle = cudaGraph_t;
  static void Destroy(cudaGraph_t graph) noexcept;
};

struct GraphExecTraits {
  using Handle = cudaGraphExec_t;
  static void Destroy(cudaGraphExec_t exec) noexcept;
};

class GraphExec {
 public:
  GraphExec() = default;
  cudaGraphExec_t get() const& { return handle_.get(); }
  cudaGraphExec_t get() const&& = delete;
  explicit operator bool() const { return static_cast<bool>(handle_); }
  void Launch(StreamView stream) const;

 private:
  friend class Graph;
  explicit GraphExec(cudaGraphExec_t e) : handle_(e) {}
  UniqueHandle<GraphExecTraits> handle_;
};

class Graph {
 public:
  Graph() = default;
  // Starts stream capture (thread-local mode: other threads' CUDA calls are not disturbed).
  static void BeginCapture(StreamView stream);
  // Ends capture and returns the captured graph; on error the partial graph is discarded.
  static Graph EndCapture(StreamView stream);

  cudaGraph_t get() const& { return handle_.get(); }
  cudaGraph_t get() const&& = delete;
  explicit operator bool() const { return static_cast<bool>(handle_); }
  size_t NodeCount() const;
  GraphExec Instantiate() const;

 private:
  explicit Graph(cudaGraph_t g) : handle_(g) {}
  UniqueHandle<GraphTraits> handle_;
};

}  // namespace conveyor::cuda
