// The stage thread: takes the next scheduled iteration when its slot is free (the ring hand-off
// with the consumer, executor.h), host-waits the slot's previous GPU work, then runs the CPU stage
// and issues the GPU stage. BindCommon binds a node's inputs and per-iteration context.
#include <variant>

#include "core/cuda/check.h"
#include "core/pipeline/executor_state.h"

namespace conveyor::pipeline_internal {

void ExecutorState::Main() {
  // Batches fed for the next iteration: they replace the slot's previous ones only after that
  // iteration's GPU work (which may still copy from them) finished.
  std::vector<std::optional<Fed>> incoming(graph.nodes().size());
  stage_mark = Clock::now();
  for (;;) {
    int64_t k = 0;
    Slot* slot = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu);
      Await(lock, [&] { return stop || (!failed && started < scheduled && !slots[started % depth].busy); });
      const auto now = Clock::now();
      stage_idle_ns.fetch_add(Nanos(now - stage_mark), std::memory_order_relaxed);
      stage_mark = now;
      if (stop) return;
      k = started++;
      taken = started;
      // Before k's Setup: where a resume at k starts.
      snapshots[k] = IterationSnapshot{SnapshotStates(true, true), {}, true};
      slot = &slots[k % depth];
      slot->busy = true;
      slot->done = false;
      slot->iteration = k;
      slot->error = nullptr;
      for (int src : external_sources) {
        // Schedule() made sure every scheduled iteration has its batch.
        incoming[src] = std::move(feeds[src].front());
        feeds[src].pop_front();
      }
    }
    std::exception_ptr error;
    const auto work_from = stage_mark;
    for (int refill = 0;; ++refill) {
      try {
        RunIteration(k, *slot, incoming);  // moves stage_mark to its end
        break;
      } catch (const SampleRejected& e) {
        // A node refused a sample after Setup and told its reader: redo the iteration.
        try {
          if (refill >= kMaxRefills) {
            throw InvalidArgument(std::string(e.what()) + "; gave up re-filling the batch after " +
                                  std::to_string(kMaxRefills) + " rejected samples in iteration " + std::to_string(k));
          }
          RewindIteration(k);
          refilled_iterations.fetch_add(1, std::memory_order_relaxed);
        } catch (...) {
          error = std::current_exception();
          stage_mark = Clock::now();
          break;
        }
      } catch (...) {
        error = std::current_exception();
        stage_mark = Clock::now();
        break;
      }
    }
    stage_work_ns.fetch_add(Nanos(stage_mark - work_from), std::memory_order_relaxed);
    Complete(k, *slot, error);
  }
}

void ExecutorState::Complete(int64_t k, Slot& slot, const std::exception_ptr& error) {
  {
    std::lock_guard<std::mutex> lock(mu);
    slot.error = error;
    slot.done = true;
    completed = k + 1;
    issued = k + 1;
    if (error) {
      failed = true;
      failed_iteration = k;
      failed_message = MessageOf(error);
    }
  }
  Notify();
}

std::vector<std::pair<int, std::string>> ExecutorState::SnapshotStates(bool cpu_stage, bool gpu_stage) const {
  std::vector<std::pair<int, std::string>> states;
  for (size_t n = 0; n < ops.size(); ++n) {
    if (!ops[n] || !(cpu_side[n] ? cpu_stage : gpu_stage)) continue;
    std::string state = ops[n]->CheckpointState();
    if (!state.empty()) states.emplace_back(static_cast<int>(n), std::move(state));
  }
  return states;
}

void ExecutorState::RewindIteration(int64_t k) {
  // The failed attempt's GPU work (copies, kernels, decodes on the decoders' own streams) must be
  // done before the slot's buffers are written again: a device-wide wait, once per rejected sample.
  if (has_gpu) {
    try {
      CONVEYOR_CUDA_CHECK(cudaDeviceSynchronize());
    } catch (...) {
      RethrowWithContext(IterationPrefix(k) + "re-filling the batch: ");
    }
  }
  std::vector<std::pair<int, std::string>> states;
  {
    std::lock_guard<std::mutex> lock(mu);
    states = snapshots.at(k).cpu;
  }
  RewindNodes(k, states);
}

int64_t ExecutorState::PrepareSlot(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming,
                                   bool& thread_device_set) {
  int64_t waited = 0;
  if (has_gpu) {
    try {
      if (!thread_device_set) {
        CONVEYOR_CUDA_CHECK(cudaSetDevice(device));
        thread_device_set = true;
      }
      // The previous iteration in this slot must be done on the GPU before its staging buffers,
      // descriptors and captured graphs are touched again (see executor.h).
      if (slot.gpu_used && !slot.ready->Query()) {
        const auto wait_from = Clock::now();
        slot.ready->Synchronize();
        waited = NanosSince(wait_from);
        stage_gpu_wait_ns.fetch_add(waited, std::memory_order_relaxed);
      }
    } catch (...) {
      RethrowWithContext(IterationPrefix(k));
    }
  }
  // Taken once: a re-filled iteration (RewindIteration) runs again on the batches already moved in.
  for (int src : external_sources) {
    if (!incoming[src]) continue;
    slot.fed[src] = std::move(incoming[src]);
    incoming[src].reset();
  }
  return waited;
}

void ExecutorState::RewindNodes(int64_t k, const std::vector<std::pair<int, std::string>>& states) {
  for (const auto& [n, state] : states) {
    try {
      ops[n]->RewindIteration(state);
    } catch (...) {
      RethrowWithContext(NodePrefix(graph.node(n), k) + "re-filling the batch: ");
    }
  }
}

void ExecutorState::RunIteration(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming) {
  const int64_t waited = PrepareSlot(k, slot, incoming, device_set);
  RunCpuStage(k, slot);
  // stage_cpu_ns: from the iteration's start (the ready check included, a GPU wait excluded).
  const auto issue_from = Clock::now();
  stage_cpu_ns.fetch_add(Nanos(issue_from - stage_mark) - waited, std::memory_order_relaxed);
  stage_mark = issue_from;
  if (has_gpu) {
    RunGpuStage(k, slot);
    stage_mark = Clock::now();
    stage_issue_ns.fetch_add(Nanos(stage_mark - issue_from), std::memory_order_relaxed);
  }
}

void CarrySources(Workspace& ws) {
  if (ws.num_inputs() == 0) return;
  const bool gpu = ws.InputIsGpu(0);
  const auto& sources = gpu ? ws.InputGpu(0).shared_sources() : ws.InputCpu(0).shared_sources();
  const int n = gpu ? ws.InputGpu(0).num_samples() : ws.InputCpu(0).num_samples();
  for (int o = 0; o < ws.num_outputs(); ++o) {
    if (ws.OutputIsGpu(o)) {
      TensorListGPU& out = ws.OutputGpu(o);
      out.set_shared_sources(out.num_samples() == n ? sources : nullptr);
    } else {
      TensorListCPU& out = ws.OutputCpu(o);
      out.set_shared_sources(out.num_samples() == n ? sources : nullptr);
    }
  }
}

void ExecutorState::BindCommon(Workspace& ws, const GraphNode& node, int64_t k, Slot& slot) {
  ws.ClearInputs();
  ws.ClearOutputs();
  int batch = graph.spec().batch_size;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const GraphEdge& edge = node.inputs[i];
    if (edge.staged()) {
      const TensorListGPU& list = slot.staged[staged_index.at({edge.producer, edge.output})];
      ws.AddInput(list);
      if (i == 0) batch = list.num_samples();
    } else if (edge.data_device == Device::kGpu) {
      const TensorListGPU& list = slot.gpu_out[edge.producer][edge.output];
      ws.AddInput(list);
      if (i == 0) batch = list.num_samples();
    } else {
      const TensorListCPU& list = slot.cpu_out[edge.producer][edge.output];
      ws.AddInput(list);
      if (i == 0) batch = list.num_samples();
    }
  }
  for (const GraphArgInput& arg : node.arg_inputs) {
    ws.SetArgInput(arg.arg, slot.cpu_out[arg.source.producer][arg.source.output]);
  }
  ws.set_batch_size(batch);
  ws.set_iteration(k);
  ws.set_seed(graph.spec().seed);
  ws.set_slot(slot.index);
  ws.set_thread_pool(cpu_side[node.index] && cpu_stage_pool != nullptr ? cpu_stage_pool : pool.get());
}

}  // namespace conveyor::pipeline_internal
