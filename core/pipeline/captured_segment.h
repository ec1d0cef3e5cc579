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
//
// A segment may also start with host-to-device copies of staged edges (executor.h): the
// executor issues them inside the capture, then TrackCopy() finds each one's memcpy node, and
// SetCopyBytes() changes its byte count for later replays (addresses stay: the signature holds
// both buffers) — one call, and only when the batch's size changed.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/cuda/graph.h"
#include "core/memory/buffer.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::pipeline_internal {

class CaptureSignature {
 public:
  // Records the list's words and a reference to its buffer (no ownership: building and comparing
  // a signature every iteration touches no reference count). The list must outlive the signature
  // until Kept() or clear().
  template <typename Backend>
  void Add(const TensorList<Backend>& list) {
    const Buffer& b = list.buffer();
    words_.push_back(reinterpret_cast<uintptr_t>(b.empty() ? nullptr : b.data()));
    words_.push_back(b.empty() ? 0 : b.size());
    words_.push_back(static_cast<uint64_t>(list.num_samples()));
    words_.push_back(static_cast<uint64_t>(list.dtype()));
    if (!b.empty()) refs_.push_back(&b);
  }
  // A value that is not a buffer but changes what the capture records (e.g. which copies it holds).
  void AddWord(uint64_t word) { words_.push_back(word); }
  bool operator==(const CaptureSignature& other) const { return words_ == other.words_; }
  bool operator!=(const CaptureSignature& other) const { return !(*this == other); }
  // The same words, holding a copy of every referenced Buffer (what a captured graph keeps).
  CaptureSignature Kept() const {
    CaptureSignature kept;
    kept.words_ = words_;
    kept.buffers_ = buffers_;
    for (const Buffer* b : refs_) kept.buffers_.push_back(*b);
    return kept;
  }
  // The buffers a Kept() signature owns.
  const std::vector<Buffer>& buffers() const { return buffers_; }
  void clear() {
    words_.clear();
    refs_.clear();
    buffers_.clear();
  }

 private:
  std::vector<uint64_t> words_;
  std::vector<const Buffer*> refs_;  // while building: the lists' buffers
  std::vector<Buffer> buffers_;      // kept by the graph that was captured under this signature
};

class CapturedSegment {
 public:
  // Captures what `issue` queues on `stream` (thread-local capture mode) and instantiates it.
  // If `issue` throws, the capture is ended and discarded and the exception propagates, so the
  // stream is usable again. `signature.Kept()` is kept, buffers included.
  static CapturedSegment Capture(StreamView stream, const CaptureSignature& signature,
                                 const std::function<void()>& issue);

  CapturedSegment() = default;
  bool valid() const { return static_cast<bool>(exec_); }
  const CaptureSignature& signature() const { return signature_; }
  size_t node_count() const { return node_count_; }
  void Launch(StreamView stream) const { exec_.Launch(stream); }

  // Finds the captured 1-D memcpy node that writes `dst` (issued inside the capture) and returns
  // its index for SetCopyBytes. Throws Error when the graph holds no such node.
  int TrackCopy(void* dst, const void* src, size_t bytes);
  size_t copy_bytes(int index) const { return copies_.at(static_cast<size_t>(index)).bytes; }
  // Changes the byte count of a tracked copy for the next launches (same addresses). `bytes` > 0
  // and within both buffers of the signature.
  void SetCopyBytes(int index, size_t bytes);

 private:
  struct Copy {
    cudaGraphNode_t node = nullptr;
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
  };
  // Declared before the graph objects so they are destroyed after them.
  CaptureSignature signature_;
  cuda::Graph graph_;
  cuda::GraphExec exec_;
  size_t node_count_ = 0;
  std::vector<Copy> copies_;
};

}  // namespace conveyor::pipeline_internal
