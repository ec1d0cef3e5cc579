// The Executor facade: construction, Start / Schedule, Pop, feeding external_source nodes, and
// queries (counters, FindOperator). The machinery is in the executor_*.cc files (executor_state.h).
#include "core/pipeline/executor.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/op/thread_affinity.h"
#include "core/pipeline/executor_state.h"

namespace conveyor {

using pipeline_internal::ExecutorState;

Executor::Executor(Graph graph) : state_(std::make_shared<ExecutorState>(std::move(graph))) {}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->Notify();
  if (state_->thread.joinable()) state_->thread.join();
  if (state_->issue_thread.joinable()) state_->issue_thread.join();
  // Outputs still held keep the state (and the buffers they reference) alive until released.
}

void Executor::Start(int iterations) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->thread.joinable()) throw InvalidArgument("Executor::Start: already started");
    state_->scheduled += std::max(0, iterations);
  }
  ExecutorState* state = state_.get();
  // The plan was checked when the state's pool was made (a bad setting failed the build there).
  const ThreadCpus cpus = ProcessThreadCpus();
  if (!state_->ahead) {
    state_->thread = std::thread([state, cpus] {
      ApplyThreadCpus(cpus);
      state->Main();
    });
    return;
  }
  state_->thread = std::thread([state, cpus] {
    ApplyThreadCpus(cpus);
    state->CpuMain();
  });
  state_->issue_thread = std::thread([state, cpus] {
    ApplyThreadCpus(cpus);
    state->IssueMain();
  });
}

void Executor::Schedule() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    const int64_t claimed = state_->scheduled - state_->taken;
    for (int src : state_->external_sources) {
      if (static_cast<int64_t>(state_->feeds[src].size()) <= claimed) {
        throw InvalidArgument("pipeline \"" + state_->graph.spec().name + "\": Run(): external_source node \"" +
                              state_->graph.node(src).name() + "\" has no batch for iteration " +
                              std::to_string(state_->scheduled) + "; call Feed() first");
      }
    }
    ++state_->scheduled;
  }
  state_->Notify();
}

PipelineOutputs Executor::Pop() { return state_->Pop(); }

namespace {
// What external_source's arguments promise downstream nodes: the dtype and the sample rank.
void CheckFed(const GraphNode& node, DType dtype, const std::vector<Shape>& shapes) {
  const DType want = node.spec.Arg<DType>("dtype");
  if (dtype != want) {
    throw InvalidArgument("Feed: node \"" + node.name() + "\" expects dtype " + std::string(DTypeName(want)) +
                          ", got " + std::string(DTypeName(dtype)));
  }
  const int64_t ndim = node.spec.Arg<int64_t>("ndim");
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (ndim >= 0 && shapes[i].ndim() != ndim) {
      throw InvalidArgument("Feed: node \"" + node.name() + "\" expects " + std::to_string(ndim) +
                            "-D samples, sample " + std::to_string(i) + " has shape " + shapes[i].ToString());
    }
  }
}
}  // namespace

void Executor::Feed(const std::string& node, TensorListCPU batch) {
  const GraphNode& n = state_->graph.node(node);
  if (n.op() != kExternalSourceOp) {
    throw InvalidArgument("Feed: node \"" + node + "\" runs \"" + n.op() + "\", not " + kExternalSourceOp);
  }
  CheckFed(n, batch.dtype(), batch.shapes());
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->feeds[n.index].emplace_back(std::move(batch));
}

void Executor::Feed(const std::string& node, TensorListGPU batch) {
  const GraphNode& n = state_->graph.node(node);
  if (n.op() != kExternalSourceOp) {
    throw InvalidArgument("Feed: node \"" + node + "\" runs \"" + n.op() + "\", not " + kExternalSourceOp);
  }
  if (n.device != Device::kGpu) {
    throw InvalidArgument("Feed: node \"" + node + "\" runs on the CPU; feed it a host batch (TensorListCPU)");
  }
  CheckFed(n, batch.dtype(), batch.shapes());
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->feeds[n.index].emplace_back(std::move(batch));
}

int64_t Executor::FedAhead() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->external_sources.empty()) return -1;
  int64_t ahead = std::numeric_limits<int64_t>::max();
  for (int src : state_->external_sources) {
    const auto it = state_->feeds.find(src);
    const int64_t have = it == state_->feeds.end() ? 0 : static_cast<int64_t>(it->second.size());
    ahead = std::min(ahead, have - (state_->scheduled - state_->taken));
  }
  return ahead;
}

void Executor::Resume(int64_t first_iteration, const std::vector<std::pair<std::string, std::string>>& states) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->thread.joinable()) throw InvalidArgument("Executor::Resume: after Start");
  for (const auto& [node, state] : states) {
    Operator* op = state_->ops.at(static_cast<size_t>(state_->graph.node(node).index)).get();
    if (op == nullptr) {
      throw InvalidArgument("pipeline \"" + state_->graph.spec().name + "\": the checkpoint holds state for node \"" +
                            node + "\", an external_source");
    }
    op->RestoreCheckpoint(state);
  }
  state_->first_iteration = state_->scheduled = state_->started = state_->taken = state_->issued =
      state_->completed = state_->consumed = first_iteration;
}

Executor::Snapshot Executor::NextSnapshot() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  Snapshot snap;
  snap.iteration = state_->consumed;
  const auto it = state_->snapshots.find(state_->consumed);
  // Not taken up yet (or its GPU stage not started): every earlier iteration was handed out, so
  // none is running and the operators (of the GPU stage) hold exactly its starting state.
  std::vector<std::pair<int, std::string>> states;
  if (it == state_->snapshots.end()) {
    states = state_->SnapshotStates(true, true);
  } else {
    states = it->second.cpu;
    const auto gpu = it->second.gpu_taken ? it->second.gpu : state_->SnapshotStates(false, true);
    states.insert(states.end(), gpu.begin(), gpu.end());
  }
  for (const auto& [node, state] : states) snap.states.emplace_back(state_->graph.node(node).name(), state);
  return snap;
}

const Graph& Executor::graph() const { return state_->graph; }

const Operator* Executor::FindOperator(const std::string& node) const {
  return state_->ops.at(static_cast<size_t>(state_->graph.node(node).index)).get();
}

ExecutorCounters Executor::counters() const {
  ExecutorCounters c;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    c.iterations = state_->completed - state_->first_iteration;
  }
  c.captures = state_->captures.load();
  c.replays = state_->replays.load();
  c.stage_work_ns = state_->stage_work_ns.load();
  c.stage_gpu_wait_ns = state_->stage_gpu_wait_ns.load();
  c.stage_idle_ns = state_->stage_idle_ns.load();
  c.stage_cpu_ns = state_->stage_cpu_ns.load();
  c.stage_issue_ns = state_->stage_issue_ns.load();
  c.stage_cpu_wait_ns = state_->stage_cpu_wait_ns.load();
  c.cpu_stage_ahead_iterations = state_->cpu_stage_ahead_iterations.load();
  c.cpu_stage_thread = state_->ahead;
  const auto& parts = state_->issue_part_ns;
  if (!state_->segments.empty()) {
    c.gpu_issue_parts.push_back({"consumer waits + staging", parts.front().load()});
    for (size_t seg = 0; seg < state_->segments.size(); ++seg) {
      const pipeline_internal::Segment& segment = state_->segments[seg];
      std::string name;
      for (int n : segment.nodes) name += (name.empty() ? "" : " + ") + state_->graph.node(n).name();
      if (segment.captured) name += " (captured)";
      const size_t at = pipeline_internal::ExecutorState::IssueSetupPart(seg);
      if (state_->issue_detail) {
        c.gpu_issue_parts.push_back({name + ": setup + place", parts[at].load()});
        c.gpu_issue_parts.push_back({name + ": prepare", parts[at + 1].load()});
        c.gpu_issue_parts.push_back({name + ": run", parts[at + 2].load()});
      } else {
        c.gpu_issue_parts.push_back({name, parts[at].load() + parts[at + 1].load() + parts[at + 2].load()});
      }
    }
    c.gpu_issue_parts.push_back({"ready record", parts.back().load()});
  }
  c.copies_on_copy_stream = state_->copies_on_copy_stream.load();
  c.copies_in_graph = state_->copies_in_graph.load();
  c.refilled_iterations = state_->refilled_iterations.load();
  for (size_t n = 0; n < state_->ops.size(); ++n) {
    if (!state_->ops[n]) continue;
    for (Operator::Skipped& s : state_->ops[n]->SkippedSamples()) {
      c.skipped_samples += s.times;
      c.skipped_files.push_back({state_->graph.node(static_cast<int>(n)).name(), std::move(s.source),
                                 std::move(s.reason), s.times});
    }
  }
  return c;
}

}  // namespace conveyor
