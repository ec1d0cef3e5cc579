// CapturedSegment: one run of consecutive capturable GPU nodes, captured into a CUDA graph for one
// prefetch slot and replayed every iteration while its capacity signature holds.
//
//   iteration k, slot s:  Setup+Place (host) → PrepareGpu (host: descriptors) → Launch(graph[s])
//                                                                      └ captured once per signature
//
// The signature lists, for every TensorList the segment's nodes read or write, its device address,
// its buffer capacity, its sample count and dtype: everything a capturable operator may bake into
// a launch (operator.h: grids by capacity, per-sample values from descriptor buffers). Any change —
// a buffer grew, the batch got more samples — makes the executor capture again.
//
// The graph holds a copy of every such Buffer, so nothing a node reads or writes can be freed
// while the executable graph lives, even after the slot's lists moved to bigger buffers.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cuda/graph.h"
#include "core/memory/buffer.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::pipeline_internal {

class CaptureSignature {
 public:
  template <typename Backend>
  void Add(const TensorList<Backend>& list) {
    const Buffer& b = list.buffer();
    words_.push_back(reinterpret_cast<uintptr_t>(b.empty() ? nullptr : b.data()));
    words_.push_back(b.empty() ? 0 : b.size());
    words_.push_back(static_cast<uint64_t>(list.num_samples()));
    words_.push_back(static_cast<uint64_t>(list.dtype()));
    if (!b.empty()) buffers_.push_back(b);
  }
  bool operator==(const CaptureSignature& other) const { return words_ == other.words_; }
  bool operator!=(const CaptureSignature& other) const { return !(*this == other); }
  const std::vector<Buffer>& buffers() const { return buffers_; }
  void clear() {
    words_.clear();
    buffers_.clear();
  }

 private:
  std::vector<uint64_t> words_;
  std::vector<Buffer> buffers_;  // kept by the graph that was captured under this signature
};

class CapturedSegment {
 public:
  // Captures what `issue` queues on `stream` (thread-local capture mode) and instantiates it.
  // If `issue` throws, the capture is ended and discarded and the exception propagates, so the
  // stream is usable again. `signature` is kept, buffers included.
  static CapturedSegment Capture(StreamView stream, CaptureSignature signature, const std::function<void()>& issue);

  CapturedSegment() = default;
  bool valid() const { return static_cast<bool>(exec_); }
  const CaptureSignature& signature() const { return signature_; }
  size_t node_count() const { return node_count_; }
  void Launch(StreamView stream) const { exec_.Launch(stream); }

 private:
  // Declared before the graph objects so they are destroyed after them.
  CaptureSignature signature_;
  cuda::Graph graph_;
  cuda::GraphExec exec_;
  size_t node_count_ = 0;
};

}  // namespace conveyor::pipeline_internal
