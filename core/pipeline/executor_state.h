// ExecutorState: the executor's shared state, internal to //core/pipeline (not installed; only the
// executor_*.cc files include it). executor.h holds the diagram and the ordering rules; the code
// is split along them:
//
//   file                     │ holds
//   ─────────────────────────┼──────────────────────────────────────────────────────────────────
//   executor_state.cc        │ graph analysis (CPU order, segments, staged edges), slots, teardown
//   executor_stage.cc        │ the stage thread: slot ring hand-off, RunIteration, BindCommon
//   executor_ahead.cc        │ cpu_stage_thread: the CPU thread and the issue thread, their rewind
//   executor_cpu.cc          │ the CPU stage (TBB arena, node tasks), CPU external sources
//   executor_gpu.cc          │ the GPU stage: consumer waits, staging copies, eager nodes
//   executor_captured.cc     │ captured segments: signature, capture, replay, in-graph copies
//   executor_outputs.cc      │ Pop, PipelineOutputs, leases and Release
//   executor.cc              │ the Executor facade: Start, Schedule, Feed, counters
//
// Who touches what: `mu` guards the scheduling counters, the feeds and the slots' busy / leased /
// done / iteration / error / consumer_pending fields; everything else in a Slot is written only by
// the stage thread while the slot is busy (and read by the consumer only after `done`).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/op/descriptor_arena.h"
#include "core/op/operator.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/workspace.h"
#include "core/pipeline/captured_segment.h"
#include "core/pipeline/executor.h"
#include "core/pipeline/graph.h"
#include "core/tensor/tensor_list.h"

namespace conveyor::pipeline_internal {

using Fed = std::variant<TensorListCPU, TensorListGPU>;

// Rethrows the exception in flight with `prefix` in front of its message, keeping its type so
// that callers (and the C API's status codes) still tell a CUDA error from bad data.
[[noreturn]] void RethrowWithContext(const std::string& prefix);
// RethrowWithContext for an error of `node`; an InvalidArgument that names one of its arguments
// in quotes (`argument "std": ...`) leads with that argument's file:line:col.
[[noreturn]] void RethrowNodeError(const GraphNode& node, const std::string& prefix);
std::string MessageOf(const std::exception_ptr& error);
// Gives each bound output of a node with inputs input 0's per-sample sources when it has as many
// samples (one-to-one operators carry file names on), else none. Before the op runs: it may set
// its own.
void CarrySources(Workspace& ws);

// A contiguous TensorList's bytes start at its buffer's base (sample 0 has offset 0).
inline const void* HostBase(const TensorListCPU& list) { return list.buffer().host_ptr(); }
inline const void* DeviceBase(const TensorListGPU& list) { return list.buffer().device_ptr(); }

// Staged copies at most this big (device buffer capacity) go into the captured graph of the
// segment that reads them (executor.h); larger ones keep the copy stream, whose overlap with the
// previous iteration's compute is worth more than the few host calls it costs. Override with
// CONVEYOR_GRAPH_COPY_MAX_BYTES (0: never; a tuning and benchmarking knob).
inline constexpr size_t kGraphCopyMaxBytes = size_t(256) << 10;
size_t GraphCopyMaxBytes();
// The CPU stage's arenas with cpu_stage_thread: `behind` (num_threads) for an iteration the issue
// thread may be waiting for, `ahead` (num_threads / 4, at least 1) for one taken up after the CPU
// thread had to wait for a slot — it is ahead, and the cores go to the GPU stage's host work (the
// JPEG decoder's). Both CONVEYOR_CPU_STAGE_THREADS where set (a tuning and benchmarking knob: 1
// runs the CPU stage on its own thread alone). Throws ConfigError for a value that is not 1-1024.
struct CpuStageSizes {
  int behind = 1;
  int ahead = 1;
};
CpuStageSizes CpuStageThreads(int num_threads);

// Bytes an in-graph staged copy moves: the batch's, at least 16 (a memcpy node cannot be empty;
// both buffers hold at least 256 bytes, staging.h).
inline size_t GraphCopyBytes(const TensorListCPU& src) { return std::max<size_t>(src.nbytes(), 16); }

using Clock = std::chrono::steady_clock;
inline int64_t Nanos(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }
inline int64_t NanosSince(Clock::time_point t) { return Nanos(Clock::now() - t); }

// The operators' CpuThreadPool: the executor's TBB arena, except that a range of one chunk (or a
// pool of one thread) runs on the calling thread — entering the arena for it costs microseconds,
// about as much as a small pipeline's whole CPU stage.
class ExecutorPool final : public CpuThreadPool {
 public:
  explicit ExecutorPool(int num_threads) : tbb_(num_threads) {}
  int num_threads() const override { return tbb_.num_threads(); }
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) override {
    if (n <= 0) return;
    if (n <= std::max<int64_t>(1, grain) || tbb_.num_threads() <= 1) {
      fn(0, n);  // one chunk of at least `grain` items, as the contract allows
      return;
    }
    tbb_.ParallelFor(n, grain, fn);
  }
  void RunBeside(const std::function<void()>& a, const std::function<void()>& b) override { tbb_.RunBeside(a, b); }
  tbb::task_arena& arena() { return tbb_.arena(); }

 private:
  TbbThreadPool tbb_;
};

struct Segment {
  std::vector<int> nodes;
  bool captured = false;
};

// Everything one iteration writes; reused by every D-th iteration (see executor.h).
struct Slot {
  int index = 0;
  int64_t iteration = -1;
  bool busy = false;    // from the start of its stage until released (or its error was reported)
  bool leased = false;  // its outputs are held by a PipelineOutputs
  bool done = false;    // its stage finished (outputs ready to hand out, or error)
  bool cpu_done = false;  // cpu_stage_thread: its CPU stage finished (or failed: `error`)
  int refills = 0;        // rejected samples this iteration re-filled (kMaxRefills)
  bool gpu_used = false;
  std::exception_ptr error;
  std::vector<std::vector<TensorListCPU>> cpu_out;  // [node][output]: host data (pinned when staged)
  std::vector<std::vector<TensorListGPU>> gpu_out;  // [node][output]: device data
  std::vector<TensorListGPU> staged;                // [staged output]: device copies of pinned CPU outputs
  std::vector<char> staged_in_graph;                // [staged output]: this iteration copies it inside a graph
  std::vector<std::unique_ptr<Workspace>> ws;       // [node]
  std::vector<std::optional<Fed>> fed;              // [node]: the batch fed for this iteration
  std::shared_ptr<cuda::Event> ready;               // compute stream, after the iteration's GPU work
  cuda::Event alloc_done;                           // compute stream, after slot allocations
  cuda::Event copy_done;                            // copy stream, after the H2D copies
  std::vector<cuda::Event> consumer_done;           // consumer streams, at release
  int consumer_pending = 0;
  std::vector<CapturedSegment> captured;  // [segment]
  std::vector<DescriptorArena> arenas;    // [segment]: captured segments' descriptors (descriptor_arena.h)
  CaptureSignature scratch;               // reused every iteration: no per-iteration allocation
};

// Iteration k's stateful operators as they were before k's Setup (Operator::CheckpointState):
// those of the CPU stage, taken when the CPU stage takes k up, and those of the GPU stage, taken
// when its GPU stage starts (with cpu_stage_thread the two run on different threads; without, both
// parts are taken at once and `gpu` stays empty).
struct IterationSnapshot {
  std::vector<std::pair<int, std::string>> cpu;
  std::vector<std::pair<int, std::string>> gpu;
  bool gpu_taken = false;
};

struct SlotLease {
  std::shared_ptr<ExecutorState> state;
  int slot = 0;
  std::vector<StreamView> streams;  // WaitOn streams
  ~SlotLease();
};

struct ExecutorState : std::enable_shared_from_this<ExecutorState> {
  explicit ExecutorState(Graph g);  // executor_state.cc
  ~ExecutorState();

  // executor_stage.cc
  void Main();
  // Iteration k's stage finished (its outputs or `error` ready for Pop); wakes the waiters.
  void Complete(int64_t k, Slot& slot, const std::exception_ptr& error);
  // executor_ahead.cc (cpu_stage_thread): the CPU thread runs CPU stages ahead, up to the free
  // slots; the issue thread issues the GPU stages in order and completes the iterations.
  void CpuMain();
  void IssueMain();
  void RunCpuAhead(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming);
  // A rejected sample in the GPU stage of k: pauses the CPU thread, waits for the device, puts
  // every stateful node back to k's snapshot and has the CPU thread redo k and every later CPU
  // stage it already ran.
  void RewindAhead(int64_t k);
  // Counts a re-fill of `slot`'s iteration k; throws once it passed kMaxRefills.
  void CountRefill(Slot& slot, int64_t k, const SampleRejected& e);
  void RunIteration(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming);
  // Before a slot's CPU stage: makes the device current on this thread (once, `thread_device_set`),
  // host-waits the slot's previous GPU work and moves in the iteration's fed batches. Returns the
  // nanoseconds it waited for the GPU.
  int64_t PrepareSlot(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming, bool& thread_device_set);
  // Re-filling a batch: waits for the GPU, then puts every stateful node back to iteration k's
  // snapshot (Operator::RewindIteration) so that RunIteration(k) can run again.
  void RewindIteration(int64_t k);
  // Operator::RewindIteration of each (node, state), errors prefixed with the node and iteration k.
  void RewindNodes(int64_t k, const std::vector<std::pair<int, std::string>>& states);
  // Rejected samples one iteration may re-fill before it fails (a decoder that rejects every
  // sample, or a reader that cannot skip, must not loop forever).
  static constexpr int kMaxRefills = 64;
  void BindCommon(Workspace& ws, const GraphNode& node, int64_t k, Slot& slot);
  // executor_cpu.cc
  void RunCpuStage(int64_t k, Slot& slot);
  // Operator::LookAhead of every look-ahead node on iteration k's inputs (its CPU stage has run).
  void LookAhead(int64_t k, Slot& slot);
  void RunCpuNode(int n, int64_t k, Slot& slot);
  // executor_gpu.cc
  void RunGpuStage(int64_t k, Slot& slot);
  void StageCopies(Slot& slot);
  void BindGpuNode(int n, int64_t k, Slot& slot, CaptureSignature* signature);
  void RunExternalGpu(int n, Slot& slot);
  // executor_captured.cc
  void RunCaptured(int segment, int64_t k, Slot& slot);
  // executor_outputs.cc
  PipelineOutputs Pop();
  void Release(int slot, const std::vector<StreamView>& streams) noexcept;

  // Wakes every waiter of Await (call after changing the state, with or without `mu`).
  void Notify() {
    generation.fetch_add(1, std::memory_order_release);
    cv.notify_all();
  }
  // Waits under `lock` (on `mu`) until `ready()`: spins up to kSpin first, then blocks on `cv`.
  template <typename Pred>
  void Await(std::unique_lock<std::mutex>& lock, Pred ready);
  std::string NodePrefix(const GraphNode& node, int64_t k) const {
    return "pipeline \"" + graph.spec().name + "\": iteration " + std::to_string(k) + ": node \"" + node.name() +
           "\" (op \"" + node.op() + "\"): ";
  }
  std::string IterationPrefix(int64_t k) const {
    return "pipeline \"" + graph.spec().name + "\": iteration " + std::to_string(k) + ": ";
  }
  bool IsExternal(int n) const { return graph.node(n).op() == kExternalSourceOp; }

  // Streams first: members are destroyed in reverse order, and every buffer below may be
  // returned stream-ordered on them.
  bool has_gpu = false;
  int device = 0;
  bool device_set = false;  // the stage thread made `device` current
  cuda::Stream compute;
  cuda::Stream copy;
  Graph graph;
  int depth = 1;
  std::unique_ptr<ExecutorPool> pool;      // the GPU stage's nodes (all nodes with one stage thread)
  // cpu_stage_thread: the CPU stage's arenas (CpuStageSizes; one when both sizes agree), and the one
  // the CPU thread chose for the stage it runs (read only for the CPU stage's nodes).
  std::unique_ptr<ExecutorPool> cpu_pool;
  std::unique_ptr<ExecutorPool> cpu_pool_ahead;
  ExecutorPool* cpu_stage_pool = nullptr;
  std::vector<std::unique_ptr<Operator>> ops;  // [node]; null for external sources
  std::vector<Segment> segments;
  std::vector<int> cpu_nodes;
  std::vector<char> cpu_side;                    // [node]: runs in the CPU stage
  std::vector<int> cpu_dep_count;                // [node]: CPU producers it waits for
  std::vector<std::vector<int>> cpu_consumers;   // [node]: CPU nodes that wait for it
  std::vector<std::atomic<int>> cpu_pending;     // [node]: scratch for one CPU stage
  std::vector<std::pair<int, int>> staged_outputs;       // (node, output) copied H2D
  std::map<std::pair<int, int>, int> staged_index;       // (node, output) → index
  // [staged output]: the captured segment holding every node that reads it (-1: none such; its
  // copy always uses the copy stream), and [segment]: the staged outputs it may copy in-graph.
  std::vector<int> staged_segment;
  std::vector<std::vector<int>> segment_staged;
  size_t graph_copy_max_bytes = kGraphCopyMaxBytes;
  std::vector<std::vector<bool>> pinned_output;          // [node][output]
  std::vector<int> external_sources;
  // GPU nodes with a host input from the CPU stage: Operator::LookAhead after each CPU stage.
  std::vector<int> look_ahead_nodes;
  std::vector<Slot> slots;

  mutable std::mutex mu;
  std::condition_variable cv;
  int64_t scheduled = 0;  // iterations asked for
  int64_t started = 0;    // iterations the stage thread took up
  int64_t completed = 0;  // iterations whose stage finished
  int64_t consumed = 0;   // iterations handed to the consumer
  // Checkpoints: the index of the first iteration (a resumed run continues the RNG's counter), and
  // for every iteration taken up but not yet handed out, the stateful operators' CheckpointState
  // as it was before that iteration's Setup — (node, state), taken under `mu` by the thread that
  // takes the iteration up (with cpu_stage_thread the GPU stage's part when its GPU stage starts).
  int64_t first_iteration = 0;
  std::map<int64_t, IterationSnapshot> snapshots;
  // executor_stage.cc: the (node, state) of every stateful operator of the CPU stage, the GPU
  // stage, or both.
  std::vector<std::pair<int, std::string>> SnapshotStates(bool cpu_stage, bool gpu_stage) const;
  bool stop = false;
  bool failed = false;
  int64_t failed_iteration = -1;
  std::string failed_message;
  std::map<int, std::deque<Fed>> feeds;
  std::thread thread;
  // cpu_stage_thread (the spec's, when the pipeline has CPU nodes): `thread` runs
  // CpuMain and `issue_thread` IssueMain. Under `mu`: `started` is then the CPU thread's next
  // iteration, `issued` the issue thread's; `taken` every iteration whose fed batches were claimed
  // (started may step back on a rewind, taken never does); `cpu_running` while the CPU thread
  // is inside an iteration; `rewinding` holds it between iterations; `cpu_failed` after a
  // CPU stage failed (the issue thread reports it in order).
  bool ahead = false;
  std::thread issue_thread;
  int64_t issued = 0;
  int64_t taken = 0;
  bool cpu_running = false;
  bool cpu_failed = false;
  bool rewinding = false;
  bool cpu_device_set = false;  // the CPU thread made `device` current
  std::atomic<int64_t> stage_cpu_wait_ns{0};  // the issue thread waiting for a CPU stage
  std::atomic<int64_t> cpu_stage_ahead_iterations{0};  // CPU stages run in the smaller arena
  std::atomic<int64_t> captures{0};
  std::atomic<int64_t> replays{0};
  // Bumped by Notify(): a spinning waiter re-checks its condition only when something changed.
  std::atomic<uint64_t> generation{0};
  // Stage-thread time split (see ExecutorCounters); written by the stage thread only.
  std::atomic<int64_t> stage_work_ns{0};
  std::atomic<int64_t> stage_gpu_wait_ns{0};
  std::atomic<int64_t> stage_idle_ns{0};
  // The stage thread's clock: the end of its last timed step (3 clock reads per iteration).
  std::chrono::steady_clock::time_point stage_mark;
  std::atomic<int64_t> stage_cpu_ns{0};
  std::atomic<int64_t> stage_issue_ns{0};
  // Parts of stage_issue_ns (ExecutorCounters::gpu_issue_parts), sized once the segments are known:
  // [0] consumer waits and staging copies; GPU segment s at [1 + 3s] its nodes' Setup and output
  // placement, [2 + 3s] PrepareGpu (and a captured segment's descriptor upload), [3 + 3s] RunGpu or
  // the graph's replay; last the ready record. Without issue_detail a segment's time all goes to
  // [3 + 3s] (one clock read per segment); CONVEYOR_ISSUE_DETAIL=1 reads the clock at each step.
  std::vector<std::atomic<int64_t>> issue_part_ns;
  bool issue_detail = false;
  std::chrono::steady_clock::time_point issue_mark;  // the stage thread's, between IssueMark calls
  // Adds the time since the last mark to part `part`; a `fine` mark is skipped without issue_detail.
  void IssueMark(size_t part, bool fine) {
    if (fine && !issue_detail) return;
    const auto now = std::chrono::steady_clock::now();
    issue_part_ns[part].fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(now - issue_mark).count(),
                                  std::memory_order_relaxed);
    issue_mark = now;
  }
  static size_t IssueSetupPart(size_t segment) { return 1 + 3 * segment; }
  std::atomic<int64_t> refilled_iterations{0};  // ExecutorCounters::refilled_iterations
  std::atomic<int64_t> copies_on_copy_stream{0};
  std::atomic<int64_t> copies_in_graph{0};
};

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a waiter spins before it sleeps. A futex wake-up of a sleeping thread costs 5-50 us
// (more on a VM); one iteration of a small pipeline is about that long, so the stage thread and
// the consumer hand off without sleeping while they keep pace, and both sleep when idle.
inline constexpr auto kSpin = std::chrono::microseconds(200);

template <typename Pred>
void ExecutorState::Await(std::unique_lock<std::mutex>& lock, Pred ready) {
  if (ready()) return;
  const auto deadline = Clock::now() + kSpin;
  for (;;) {
    // Read under the lock that ready() was checked under: a change after it bumps `generation`.
    const uint64_t seen = generation.load(std::memory_order_acquire);
    lock.unlock();
    bool expired = false;
    for (int spins = 0; generation.load(std::memory_order_acquire) == seen; ++spins) {
      CpuRelax();
      if ((spins & 63) == 63 && Clock::now() >= deadline) {
        expired = true;
        break;
      }
    }
    lock.lock();
    if (ready()) return;
    if (expired) break;
  }
  cv.wait(lock, ready);
}

}  // namespace conveyor::pipeline_internal
