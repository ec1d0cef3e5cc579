// The GPU stage (issue only; the stage thread moves on at once): waits for the consumer of the
// slot's previous iteration, stages pinned CPU outputs to the device (copy stream, or inside the
// graph of the captured segment that reads them), then runs each segment — eager nodes here,
// captured ones in executor_captured.cc — and records the slot's ready event.
#include <chrono>

#include "core/cuda/check.h"
#include "core/error.h"
#include "core/pipeline/executor_state.h"
#include "core/pipeline/staging.h"
#include "core/tensor/copy.h"

namespace conveyor::pipeline_internal {

void ExecutorState::BindGpuNode(int n, int64_t k, Slot& slot, CaptureSignature* signature) {
  const GraphNode& node = graph.node(n);
  Workspace& ws = *slot.ws[n];
  BindCommon(ws, node, k, slot);
  ws.set_stream(compute.view());
  if (signature != nullptr) {
    for (const GraphEdge& edge : node.inputs) {
      if (edge.staged()) {
        signature->Add(slot.staged[staged_index.at({edge.producer, edge.output})]);
      } else if (edge.data_device == Device::kGpu) {
        signature->Add(slot.gpu_out[edge.producer][edge.output]);
      } else {
        signature->Add(slot.cpu_out[edge.producer][edge.output]);
      }
    }
  }
  const OutputDescs descs = ops[n]->Setup(ws);
  if (descs.size() != slot.gpu_out[n].size()) {
    throw InvalidArgument("Setup returned " + std::to_string(descs.size()) + " output descriptors for " +
                          std::to_string(slot.gpu_out[n].size()) + " outputs");
  }
  for (size_t o = 0; o < descs.size(); ++o) {
    if (node.output_devices.at(o) == Device::kGpu) {
      TensorListGPU& out = slot.gpu_out[n][o];
      Place(out, descs[o].shapes, descs[o].dtype, MemoryKind::kDevice, compute.view());
      out.set_layout(descs[o].layout);
      ws.AddOutput(out);
      if (signature != nullptr) signature->Add(out);
    } else {
      // A DeviceToHost operator writes host memory from the GPU stream: pinned.
      TensorListCPU& out = slot.cpu_out[n][o];
      Place(out, descs[o].shapes, descs[o].dtype, MemoryKind::kPinned, std::nullopt);
      out.set_layout(descs[o].layout);
      ws.AddOutput(out);
      if (signature != nullptr) signature->Add(out);
    }
  }
  CarrySources(ws);
}

void ExecutorState::RunExternalGpu(int n, Slot& slot) {
  if (!slot.fed[n]) throw InvalidArgument("no batch was fed");
  const StreamView stream = compute.view();
  TensorListGPU& out = slot.gpu_out[n][0];
  // Copied into the slot's own buffer: downstream captured graphs need a stable address, and
  // the caller may reuse its batch once the copy is done.
  if (const auto* src = std::get_if<TensorListCPU>(&*slot.fed[n])) {
    Place(out, src->shapes(), src->dtype(), MemoryKind::kDevice, stream);
    out.set_layout(src->layout());
    src->WaitReady(stream);
    if (src->nbytes() > 0) CopyBytesAsync(out.buffer().device_ptr(), HostBase(*src), src->nbytes(), stream);
  } else {
    const auto& gpu = std::get<TensorListGPU>(*slot.fed[n]);
    Place(out, gpu.shapes(), gpu.dtype(), MemoryKind::kDevice, stream);
    out.set_layout(gpu.layout());
    gpu.WaitReady(stream);  // ordered after the producer's writes, without blocking the host
    // Sample bytes only: the producer's padding between samples may never have been written.
    if (gpu.nbytes() > 0) CopySampleBytesAsync(out.buffer().device_ptr(), DeviceBase(gpu), gpu, stream);
  }
}

// Stages every pinned CPU output a GPU node reads into the slot's device copy: on the copy stream
// (the compute stream waits its event), or — small edges read only by one captured segment —
// left to that segment's graph (staged_in_graph).
void ExecutorState::StageCopies(Slot& slot) {
  const StreamView stream = compute.view();
  bool allocated = false;
  int on_copy_stream = 0;
  for (size_t j = 0; j < staged_outputs.size(); ++j) {
    const auto [p, o] = staged_outputs[j];
    const TensorListCPU& src = slot.cpu_out[p][o];
    const bool grew = Place(slot.staged[j], src.shapes(), src.dtype(), MemoryKind::kDevice, stream);
    slot.staged[j].set_layout(src.layout());
    slot.staged[j].set_shared_sources(src.shared_sources());
    // Small edges read only by one captured segment are copied by that segment's graph, on
    // the compute stream (RunCaptured): no copy-stream call, no event hop.
    const bool in_graph =
        staged_segment[j] >= 0 && slot.staged[j].buffer().size() <= graph_copy_max_bytes;
    slot.staged_in_graph[j] = in_graph ? 1 : 0;
    if (!in_graph) {
      allocated |= grew;
      ++on_copy_stream;
    }
  }
  if (on_copy_stream > 0) {
    // New buffers are allocated stream-ordered on the compute stream: the copy stream waits
    // for that point. Otherwise it waits for nothing on compute: the last readers of
    // staged[s] (the GPU work of iteration k - depth) finished before RunIteration went on,
    // so the copy of k overlaps the compute of k - 1 instead of queueing behind it.
    if (allocated) {
      slot.alloc_done.Record(stream);
      slot.alloc_done.Wait(copy.view());
    }
    for (size_t j = 0; j < staged_outputs.size(); ++j) {
      if (slot.staged_in_graph[j]) continue;
      const auto [p, o] = staged_outputs[j];
      const TensorListCPU& src = slot.cpu_out[p][o];
      if (src.nbytes() > 0) {
        CopyBytesAsync(slot.staged[j].buffer().device_ptr(), HostBase(src), src.nbytes(), copy.view());
      }
    }
    slot.copy_done.Record(copy.view());
    slot.copy_done.Wait(stream);
    copies_on_copy_stream.fetch_add(on_copy_stream, std::memory_order_relaxed);
  }
}

void ExecutorState::RunGpuStage(int64_t k, Slot& slot) {
  const StreamView stream = compute.view();
  issue_mark = std::chrono::steady_clock::now();  // where the issue time goes: issue_part_ns
  try {
    // Device buffers of this slot may still be read by the consumer of iteration k - depth.
    for (int i = 0; i < slot.consumer_pending; ++i) slot.consumer_done[i].Wait(stream);
    slot.consumer_pending = 0;
    if (!staged_outputs.empty()) StageCopies(slot);
  } catch (...) {
    RethrowWithContext(IterationPrefix(k) + "staging: ");
  }
  IssueMark(0, false);
  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& seg = segments[s];
    const size_t part = IssueSetupPart(s);
    if (seg.captured) {
      RunCaptured(static_cast<int>(s), k, slot);
      IssueMark(part + 2, false);
      continue;
    }
    const int n = seg.nodes.front();
    try {
      if (IsExternal(n)) {
        RunExternalGpu(n, slot);
        IssueMark(part + 2, false);
        continue;
      }
      BindGpuNode(n, k, slot, nullptr);
      IssueMark(part, true);
      ops[n]->PrepareGpu(*slot.ws[n]);
      IssueMark(part + 1, true);
      ops[n]->RunGpu(*slot.ws[n]);
      CONVEYOR_CHECK_LAUNCH("RunGpu");
    } catch (...) {
      RethrowNodeError(graph.node(n), NodePrefix(graph.node(n), k));
    }
    IssueMark(part + 2, false);
  }
  try {
    slot.ready->Record(stream);
    slot.gpu_used = true;
  } catch (...) {
    RethrowWithContext(IterationPrefix(k));
  }
  IssueMark(issue_part_ns.size() - 1, false);
}

}  // namespace conveyor::pipeline_internal
