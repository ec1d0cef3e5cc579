// Executor: runs a Graph iteration after iteration on a ring of `prefetch_depth` slots.
//
// The stage thread drives every iteration; the consumer calls Outputs() on its own thread. With
// cpu_stage_thread (the spec's; by default on when there are both stages, docs/executor.md) the stage thread's two
// halves run on two threads: a CPU thread runs the CPU stages of k, k+1, ... as
// their slots free up, and an issue thread issues the GPU stage of each in order once its CPU stage
// is done and completes it — so the CPU stage of k+1 also overlaps k's GPU stage *issue* (a mixed
// operator's host work in RunGpu, executor_ahead.cc). The ordering rules below are the same.
//
//   stage thread   │ wait slot s free ─ host-wait gpu_done[s] of iteration k-D ─┐
//                  │ CPU stage k (TBB arena: independent nodes as tasks,        │ D = prefetch_depth
//                  │   per-sample ParallelFor inside) ── writes pinned staging[s]│ s = k mod D
//                  │ GPU stage k: issue only, returns at once ───────────────────┘ then k+1
//   copy stream    │       [wait alloc[s]] ─ H2D staging[s] → dev[s] (one per edge) ─ copy_done[s]
//   compute stream │ wait consumer[s] ─ wait copy_done[s] ─ eager nodes │ captured segments ─ ready[s]
//                  │                    (graph of a segment: [H2D staging[s] → dev[s]] ─ its kernels)
//   consumer       │                    Outputs(k): ready[s] ─WaitOn(stream)/Sync()─ release → slot s free
//
// So the CPU stage of k+1 runs while the GPU executes k. Ordering, slot by slot:
//   - staging[s], descriptor buffers (PrepareGpu) and every other host-written buffer of slot s
//     are rewritten only after the host waited for ready[s] of iteration k-D, which the compute
//     stream records after all GPU work of that iteration, itself after copy_done[s]: so the
//     copy that read staging[s] and the kernels that read the descriptors have finished.
//   - A staged edge read only by nodes of one captured segment, with a device buffer of at most
//     256 KiB (CONVEYOR_GRAPH_COPY_MAX_BYTES), is copied by a memcpy node at the head of that
//     segment's graph instead of on the copy stream: no copy-stream call, no copy_done hop. Just as
//     safe: staging[s] is rewritten by the CPU stage of k only after the host waited for ready[s]
//     of k-D, recorded after that graph; dev[s] is written in compute-stream order after every
//     earlier reader of slot s (and after consumer[s]). The node's addresses are the slot's
//     staging and device buffers, stable within capacity; both are in the capture signature (with
//     the in-graph choice itself), so a growth recaptures; the graph keeps both buffers alive. The
//     byte count follows the batch through cudaGraphExecMemcpyNodeSetParams1D (only when it
//     changed; the slot's previous launch has finished). Eager mode, edges with other readers and
//     larger edges keep the copy stream, whose copy overlaps the previous iteration's compute.
//   - device buffers of slot s are rewritten by stream order (compute) and, for buffers the
//     consumer read, after consumer[s]: events recorded on the consumer's streams (WaitOn) when it
//     released the outputs. Device buffers are allocated on the compute stream; in an iteration
//     that (re)allocated a staged device buffer the copy stream waits alloc[s] (recorded on
//     compute) before writing it. Otherwise it waits for nothing on compute: the last readers of
//     dev[s] were the GPU work of k-D, already waited for by the host, so the copy of k overlaps
//     the compute of k-1.
//   - The stage thread and the consumer hand off through `mu` with a bounded spin (about 200 us)
//     before sleeping on the condition variable: a sleeping thread's wake-up costs about as much
//     as a whole iteration of a small pipeline.
//   - outputs of iteration k are handed out only after its stage finished issuing; their ready
//     event is ready[s].
// The legacy default stream is never used; steady state allocates nothing (slot buffers grow to
// powers of two and stay) and never synchronises the device.
//
// Errors: the first exception of iteration k — from any operator, CPU or GPU, or a CUDA call — is
// stored with "iteration k: node "x" (op "y"): ..." and rethrown (same exception type) by the
// Outputs() call for iteration k; the stage thread then stops, and later Outputs() calls throw.
// Destruction stops the stage thread after the operator it is in returns, waits for the streams
// and frees every slot buffer; outputs still held keep what they reference alive.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/op/operator.h"
#include "core/pipeline/graph.h"
#include "core/tensor/tensor_list.h"

namespace conveyor {

namespace pipeline_internal {
struct ExecutorState;
struct SlotLease;
}  // namespace pipeline_internal

struct ExecutorCounters {
  int64_t iterations = 0;  // iterations whose stage finished
  int64_t captures = 0;    // CUDA graphs captured (segment × slot × signature)
  int64_t replays = 0;     // captured graphs launched
  // Where the stage thread's time went, summed over iterations (ns): running iterations (work,
  // which includes gpu_wait), host-waiting for a slot's previous GPU work before reusing it
  // (gpu_wait: the GPU is the bottleneck), and waiting for Run() or a slot release (idle: the
  // consumer is). Diagnostics for benchmarks and tuning.
  int64_t stage_work_ns = 0;
  int64_t stage_gpu_wait_ns = 0;
  int64_t stage_idle_ns = 0;
  // Parts of stage_work_ns: the CPU stage, and issuing the GPU stage (staging copies, eager
  // launches, graph replays, the ready record).
  int64_t stage_cpu_ns = 0;
  int64_t stage_issue_ns = 0;
  // cpu_stage_thread: whether the CPU stage runs on its own thread, ahead of the issuing one. Then
  // stage_cpu_ns and stage_gpu_wait_ns are the CPU thread's, stage_issue_ns the issuing thread's,
  // stage_idle_ns its waits for the consumer and stage_cpu_wait_ns its waits for a CPU stage (the
  // CPU stage is the bottleneck); stage_work_ns sums both threads' work.
  bool cpu_stage_thread = false;
  int64_t stage_cpu_wait_ns = 0;
  // CPU stages run in the CPU stage's smaller arena: their thread had waited for a slot (executor_state.h).
  int64_t cpu_stage_ahead_iterations = 0;
  // stage_issue_ns by part, in GPU order: "consumer waits + staging", one entry per GPU segment
  // (its nodes' names; captured segments marked "(captured)"), "ready record". Sums to about
  // stage_issue_ns (the parts' clock reads differ by nanoseconds).
  struct IssuePart {
    std::string name;
    int64_t ns = 0;
  };
  std::vector<IssuePart> gpu_issue_parts;
  // Staged CPU→GPU copies by path: on the copy stream (eager consumers, large edges), or as a
  // memcpy node inside the captured graph of the segment that reads the edge.
  int64_t copies_on_copy_stream = 0;
  int64_t copies_in_graph = 0;
  // Samples dropped instead of failing (decoders with on_error: skip; their readers read other
  // files in their place): the total, and each distinct file with its reason, per node. Counted
  // when the CPU stage reads them, which runs up to prefetch_depth iterations ahead of Outputs().
  int64_t skipped_samples = 0;
  struct SkippedFile {
    std::string node;
    std::string file;
    std::string reason;
    int64_t times = 0;
  };
  std::vector<SkippedFile> skipped_files;
  // Iterations redone because a node rejected a sample after Setup (a decoder with on_error: skip
  // whose decode failed; docs/executor.md "Re-filling a batch"): one per rejected sample.
  int64_t refilled_iterations = 0;
};

// The outputs of one iteration. They stay valid until the object is released (destroyed, moved
// from, or Release()); then the slot returns to the ring and the next iteration in it rewrites
// the buffers. Copy the data (or keep WaitOn's stream ordered) to keep it longer.
class PipelineOutputs {
 public:
  PipelineOutputs() = default;
  ~PipelineOutputs();
  PipelineOutputs(PipelineOutputs&&) noexcept;
  PipelineOutputs& operator=(PipelineOutputs&& other) noexcept;
  // Copying disallowed: one lease, one slot release.
  PipelineOutputs(const PipelineOutputs&) = delete;
  PipelineOutputs& operator=(const PipelineOutputs&) = delete;

  int64_t iteration() const { return iteration_; }
  int size() const { return static_cast<int>(names_.size()); }
  const std::vector<std::string>& names() const { return names_; }
  // Throws InvalidArgument for an unknown name.
  int Index(const std::string& name) const;
  bool IsGpu(int i) const;
  // Throw InvalidArgument when the index is out of range or the output lives on the other side.
  const TensorListGPU& Gpu(int i) const;
  const TensorListCPU& Cpu(int i) const;

  // Recorded on the compute stream after the iteration's GPU work; null for CPU-only pipelines.
  const std::shared_ptr<cuda::Event>& ready_event() const { return ready_; }
  // Orders `stream` after the outputs are ready, without blocking the host. The slot is rewritten
  // only after the work queued on `stream` up to the release.
  void WaitOn(StreamView stream);
  // Blocks the host until the outputs are ready.
  void Sync() const;
  // Returns the slot to the ring now.
  void Release();

 private:
  friend struct pipeline_internal::ExecutorState;
  int64_t iteration_ = -1;
  std::vector<std::string> names_;
  std::vector<std::variant<TensorListCPU, TensorListGPU>> lists_;
  std::shared_ptr<cuda::Event> ready_;
  std::unique_ptr<pipeline_internal::SlotLease> lease_;
};

class Executor {
 public:
  // Creates the operators, streams and slots (no stage thread yet). Throws ConfigError for a graph
  // the executor cannot schedule (a CPU node reading a GPU node's output).
  explicit Executor(Graph graph);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Starts the stage thread and schedules `iterations` (the prefetch priming).
  void Start(int iterations);
  // Schedules one more iteration. Throws InvalidArgument when an external_source node has no fed
  // batch left for it.
  void Schedule();
  // The outputs of the oldest iteration not yet handed out; blocks until its stage finished.
  // Rethrows its error. Throws InvalidArgument when nothing is scheduled, or when the slot it
  // needs is held by outputs not yet released (that would wait forever).
  PipelineOutputs Pop();
  // Queues a batch for an external_source node (InvalidArgument for any other node). A GPU batch
  // is used after its ready event; the batch is kept alive until its slot is reused.
  void Feed(const std::string& node, TensorListCPU batch);
  void Feed(const std::string& node, TensorListGPU batch);
  // Fed batches not yet claimed by a scheduled iteration, for the node with the fewest (-1: the
  // graph has no external_source node).
  int64_t FedAhead() const;

  // Checkpoints (docs/distributed.md). Resume, before Start: the first iteration gets index
  // `first_iteration` (the counter the RNG draws are keyed by) and each (node, state) goes to that
  // node's Operator::RestoreCheckpoint (InvalidArgument for an unknown node, an external_source,
  // or a state the operator refuses). NextSnapshot: the iteration index and the stateful
  // operators' states from which the first iteration not yet handed out by Pop is reproduced;
  // kept per iteration when the stage thread takes it up, so it never waits for the stage.
  struct Snapshot {
    int64_t iteration = 0;
    std::vector<std::pair<std::string, std::string>> states;  // (node, Operator::CheckpointState)
  };
  void Resume(int64_t first_iteration, const std::vector<std::pair<std::string, std::string>>& states);
  Snapshot NextSnapshot() const;

  const Graph& graph() const;
  ExecutorCounters counters() const;
  // The operator of node `node` (null for external_source nodes); InvalidArgument for an unknown
  // node. For queries between iterations (a reader's epoch size), not for running it.
  const Operator* FindOperator(const std::string& node) const;

 private:
  std::shared_ptr<pipeline_internal::ExecutorState> state_;
};

// The op name the executor feeds from Feed() instead of running the operator.
inline constexpr const char* kExternalSourceOp = "external_source";

}  // namespace conveyor
