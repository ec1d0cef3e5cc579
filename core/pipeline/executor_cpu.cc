// The CPU stage: every CPU node of an iteration, independent nodes as concurrent tasks in the
// executor's TBB arena (a node starts when its last CPU producer finished), per-sample work inside
// through Workspace::ParallelFor. Outputs that feed the GPU are placed in pinned memory.
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <cstring>

#include "core/error.h"
#include "core/pipeline/executor_state.h"
#include "core/pipeline/staging.h"

namespace conveyor::pipeline_internal {

void ExecutorState::RunCpuNode(int n, int64_t k, Slot& slot) {
  const GraphNode& node = graph.node(n);
  try {
    if (IsExternal(n)) {
      if (!slot.fed[n] || !std::holds_alternative<TensorListCPU>(*slot.fed[n])) {
        throw InvalidArgument("a CPU external_source needs a host batch (Feed with a TensorListCPU)");
      }
      const TensorListCPU& src = std::get<TensorListCPU>(*slot.fed[n]);
      if (src.ready_event()) src.ready_event()->Synchronize();
      TensorListCPU& out = slot.cpu_out[n][0];
      Place(out, src.shapes(), src.dtype(), pinned_output[n][0] ? MemoryKind::kPinned : MemoryKind::kHost,
            std::nullopt);
      out.set_layout(src.layout());
      if (src.nbytes() > 0) std::memcpy(out.buffer().host_ptr(), HostBase(src), src.nbytes());
      return;
    }
    Workspace& ws = *slot.ws[n];
    BindCommon(ws, node, k, slot);
    const OutputDescs descs = ops[n]->Setup(ws);
    if (descs.size() != slot.cpu_out[n].size()) {
      throw InvalidArgument("Setup returned " + std::to_string(descs.size()) + " output descriptors for " +
                            std::to_string(slot.cpu_out[n].size()) + " outputs");
    }
    for (size_t o = 0; o < descs.size(); ++o) {
      TensorListCPU& out = slot.cpu_out[n][o];
      // Pinned when it feeds the GPU: the producer writes the staging buffer directly. No stream:
      // a buffer replaced here was last read by a copy that has completed (RunIteration).
      Place(out, descs[o].shapes, descs[o].dtype, pinned_output[n][o] ? MemoryKind::kPinned : MemoryKind::kHost,
            std::nullopt);
      out.set_layout(descs[o].layout);
      ws.AddOutput(out);
    }
    CarrySources(ws);
    ops[n]->RunCpu(ws);
  } catch (...) {
    RethrowNodeError(node, NodePrefix(node, k));
  }
}

void ExecutorState::RunCpuStage(int64_t k, Slot& slot) {
  if (cpu_nodes.empty()) return;
  ExecutorPool& stage_pool = cpu_stage_pool != nullptr ? *cpu_stage_pool : *pool;
  if (cpu_nodes.size() == 1 || stage_pool.num_threads() <= 1) {
    for (int n : cpu_nodes) RunCpuNode(n, k, slot);
    return;
  }
  // Independent nodes run as concurrent tasks in the arena; a node starts when its last CPU
  // producer finished. After the first error no further node starts.
  for (int n : cpu_nodes) cpu_pending[n].store(cpu_dep_count[n], std::memory_order_relaxed);
  std::mutex error_mu;
  std::exception_ptr first_error;
  std::atomic<bool> cancelled{false};
  auto run_all = [&] {
    tbb::task_group group;
    std::function<void(int)> run_node = [&](int n) {
      if (cancelled.load()) return;
      try {
        RunCpuNode(n, k, slot);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!first_error) first_error = std::current_exception();
        cancelled.store(true);
        return;
      }
      for (int c : cpu_consumers[n]) {
        if (cpu_pending[c].fetch_sub(1) == 1) group.run([&run_node, c] { run_node(c); });
      }
    };
    for (int n : cpu_nodes) {
      if (cpu_dep_count[n] == 0) group.run([&run_node, n] { run_node(n); });
    }
    group.wait();
  };
  // Isolated (as TbbThreadPool::ParallelFor): while it waits, the calling thread runs only this
  // stage's tasks, not a decoder's host work the issue thread put in the same arena.
  stage_pool.arena().execute([&] { tbb::this_task_arena::isolate(run_all); });
  if (first_error) std::rethrow_exception(first_error);
}

void ExecutorState::LookAhead(int64_t k, Slot& slot) {
  for (int n : look_ahead_nodes) {
    const GraphNode& node = graph.node(n);
    try {
      // slot.ws[n] is free: the GPU stage binds it for k only after this CPU stage is done.
      Workspace& ws = *slot.ws[n];
      BindCommon(ws, node, k, slot);
      // The CPU stage's pool: idle now (the GPU stage's may be busy with an earlier iteration).
      ws.set_thread_pool(cpu_stage_pool != nullptr ? cpu_stage_pool : pool.get());
      ops[n]->LookAhead(ws);
      ws.ClearInputs();
    } catch (...) {
      RethrowNodeError(node, NodePrefix(node, k) + "look-ahead: ");
    }
  }
}

}  // namespace conveyor::pipeline_internal
