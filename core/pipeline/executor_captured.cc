// Captured segments: per iteration, Setup and buffer placement of every node (building the
// capture signature), the in-graph staged copies' sources, PrepareGpu of every node, then a
// replay of the slot's graph — or a new capture when the signature changed (executor.h,
// captured_segment.h).
#include "core/cuda/check.h"
#include "core/op/descriptor_arena.h"
#include "core/pipeline/executor_state.h"
#include "core/tensor/copy.h"

namespace conveyor::pipeline_internal {

void ExecutorState::RunCaptured(int segment, int64_t k, Slot& slot) {
  const Segment& seg = segments[segment];
  // Built every iteration into the slot's scratch (capacity kept): allocation-free steady state.
  CaptureSignature& signature = slot.scratch;
  signature.clear();
  for (int n : seg.nodes) {
    try {
      BindGpuNode(n, k, slot, &signature);
    } catch (...) {
      RethrowNodeError(graph.node(n), NodePrefix(graph.node(n), k));
    }
  }
  IssueMark(IssueSetupPart(static_cast<size_t>(segment)), true);
  // Staged edges copied inside this graph: the pinned source joins the signature (its address and
  // capacity are baked into the memcpy node; the device side is a node input, already there).
  int graph_copies = 0;
  for (int j : segment_staged[segment]) {
    signature.AddWord(slot.staged_in_graph[j] ? 1 : 0);
    if (!slot.staged_in_graph[j]) continue;
    const auto [p, o] = staged_outputs[j];
    signature.Add(slot.cpu_out[p][o]);
    ++graph_copies;
  }
  // Host work of every node first: it rewrites the descriptors the graph's kernels read, placed
  // side by side in the segment's arena (descriptor_arena.h), uploaded by one copy at the graph's
  // head. The arena's addresses and layout generation join the signature.
  DescriptorArena& arena = slot.arenas[segment];
  arena.Begin();
  {
    ScopedDescriptorArena current(&arena);
    for (int n : seg.nodes) {
      try {
        ops[n]->PrepareGpu(*slot.ws[n]);
      } catch (...) {
        RethrowNodeError(graph.node(n), NodePrefix(graph.node(n), k));
      }
    }
  }
  try {
    arena.Finish(compute.view());
  } catch (...) {
    RethrowWithContext(IterationPrefix(k) + "descriptors: ");
  }
  IssueMark(IssueSetupPart(static_cast<size_t>(segment)) + 1, true);
  signature.AddWord(reinterpret_cast<uintptr_t>(arena.host_buffer().data()));
  signature.AddWord(reinterpret_cast<uintptr_t>(arena.device_buffer().data()));
  signature.AddWord(arena.generation());
  CapturedSegment& captured = slot.captured[segment];
  if (!captured.valid() || captured.signature() != signature) {
    // The old graph's last launch (iteration k - depth) finished: RunIteration waited for it.
    captured = CapturedSegment();
    captured = CapturedSegment::Capture(compute.view(), signature, [&] {
      for (int j : segment_staged[segment]) {
        if (!slot.staged_in_graph[j]) continue;
        const auto [p, o] = staged_outputs[j];
        const TensorListCPU& src = slot.cpu_out[p][o];
        try {
          CopyBytesAsync(slot.staged[j].buffer().device_ptr(), HostBase(src), GraphCopyBytes(src), compute.view());
        } catch (...) {
          RethrowWithContext(IterationPrefix(k) + "staging (while capturing): ");
        }
      }
      if (arena.entries() > 0) {
        try {
          CopyBytesAsync(arena.device_buffer().device_ptr(), arena.host_buffer().host_ptr(), arena.capacity(),
                         compute.view());
        } catch (...) {
          RethrowWithContext(IterationPrefix(k) + "descriptors (while capturing): ");
        }
      }
      ScopedDescriptorArena current(&arena);
      for (int n : seg.nodes) {
        try {
          ops[n]->RunGpu(*slot.ws[n]);
          CONVEYOR_CHECK_LAUNCH("RunGpu");
        } catch (...) {
          RethrowWithContext(NodePrefix(graph.node(n), k) + "(while capturing) ");
        }
      }
    });
    captures.fetch_add(1);
    try {
      for (int j : segment_staged[segment]) {
        if (!slot.staged_in_graph[j]) continue;
        const auto [p, o] = staged_outputs[j];
        const TensorListCPU& src = slot.cpu_out[p][o];
        captured.TrackCopy(slot.staged[j].buffer().device_ptr(), HostBase(src), GraphCopyBytes(src));
      }
    } catch (...) {
      captured = CapturedSegment();
      RethrowWithContext(IterationPrefix(k) + "staging (after capturing): ");
    }
  } else if (graph_copies > 0) {
    // Replay: the same addresses, maybe another batch size (one call only when it changed).
    int index = 0;
    try {
      for (int j : segment_staged[segment]) {
        if (!slot.staged_in_graph[j]) continue;
        const auto [p, o] = staged_outputs[j];
        captured.SetCopyBytes(index++, GraphCopyBytes(slot.cpu_out[p][o]));
      }
    } catch (...) {
      captured = CapturedSegment();  // recaptured next time
      RethrowWithContext(IterationPrefix(k) + "staging: ");
    }
  }
  if (graph_copies > 0) copies_in_graph.fetch_add(graph_copies, std::memory_order_relaxed);
  try {
    captured.Launch(compute.view());
  } catch (...) {
    RethrowWithContext(IterationPrefix(k) + "launching the captured graph of node \"" +
                       graph.node(seg.nodes.front()).name() + "\" and " + std::to_string(seg.nodes.size() - 1) +
                       " more: ");
  }
  replays.fetch_add(1, std::memory_order_relaxed);
  signature.clear();  // the scratch refers to no buffer between iterations
}

}  // namespace conveyor::pipeline_internal
