#include "core/pipeline/executor.h"

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/error.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/workspace.h"
#include "core/pipeline/captured_segment.h"
#include "core/pipeline/staging.h"
#include "core/tensor/copy.h"

namespace conveyor {
namespace pipeline_internal {
namespace {

using Fed = std::variant<TensorListCPU, TensorListGPU>;

// Rethrows the exception in flight with `prefix` in front of its message, keeping its type so
// that callers (and the C API's status codes) still tell a CUDA error from bad data.
[[noreturn]] void RethrowWithContext(const std::string& prefix) {
  try {
    throw;
  } catch (const CudaError& e) {
    throw CudaError(prefix + e.what(), e.code());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(prefix + e.what());
  } catch (const ConfigError& e) {
    throw ConfigError(prefix + e.what());
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(prefix + e.what());
  } catch (const PluginError& e) {
    throw PluginError(prefix + e.what());
  } catch (const InteropError& e) {
    throw InteropError(prefix + e.what());
  } catch (const std::exception& e) {
    throw Error(prefix + e.what());
  } catch (...) {
    throw Error(prefix + "unknown exception");
  }
}

std::string MessageOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// A contiguous TensorList's bytes start at its buffer's base (sample 0 has offset 0).
const void* HostBase(const TensorListCPU& list) { return list.buffer().host_ptr(); }
const void* DeviceBase(const TensorListGPU& list) { return list.buffer().device_ptr(); }

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
  tbb::task_arena& arena() { return tbb_.arena(); }

 private:
  TbbThreadPool tbb_;
};

// Staged copies at most this big (device buffer capacity) go into the captured graph of the
// segment that reads them (executor.h); larger ones keep the copy stream, whose overlap with the
// previous iteration's compute is worth more than the few host calls it costs. Override with
// CONVEYOR_GRAPH_COPY_MAX_BYTES (0: never; a tuning and benchmarking knob).
constexpr size_t kGraphCopyMaxBytes = size_t(256) << 10;
size_t GraphCopyMaxBytes() {
  const char* env = std::getenv("CONVEYOR_GRAPH_COPY_MAX_BYTES");
  if (env == nullptr || *env == '\0') return kGraphCopyMaxBytes;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  return (end != nullptr && *end == '\0') ? static_cast<size_t>(v) : kGraphCopyMaxBytes;
}

// Bytes an in-graph staged copy moves: the batch's, at least 16 (a memcpy node cannot be empty;
// both buffers hold at least 256 bytes, staging.h).
size_t GraphCopyBytes(const TensorListCPU& src) { return std::max<size_t>(src.nbytes(), 16); }

}  // namespace

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
  CaptureSignature scratch;               // reused every iteration: no per-iteration allocation
};

struct SlotLease {
  std::shared_ptr<ExecutorState> state;
  int slot = 0;
  std::vector<StreamView> streams;  // WaitOn streams
  ~SlotLease();
};

struct ExecutorState : std::enable_shared_from_this<ExecutorState> {
  explicit ExecutorState(Graph g);
  ~ExecutorState();

  void Main();
  void RunIteration(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming);
  void RunCpuStage(int64_t k, Slot& slot);
  void RunCpuNode(int n, int64_t k, Slot& slot);
  void RunGpuStage(int64_t k, Slot& slot);
  void BindCommon(Workspace& ws, const GraphNode& node, int64_t k, Slot& slot);
  void BindGpuNode(int n, int64_t k, Slot& slot, CaptureSignature* signature);
  void RunExternalGpu(int n, Slot& slot);
  void RunCaptured(int segment, int64_t k, Slot& slot);
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
  std::unique_ptr<ExecutorPool> pool;
  std::vector<std::unique_ptr<Operator>> ops;  // [node]; null for external sources
  std::vector<Segment> segments;
  std::vector<int> cpu_nodes;
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
  std::vector<Slot> slots;

  mutable std::mutex mu;
  std::condition_variable cv;
  int64_t scheduled = 0;  // iterations asked for
  int64_t started = 0;    // iterations the stage thread took up
  int64_t completed = 0;  // iterations whose stage finished
  int64_t consumed = 0;   // iterations handed to the consumer
  bool stop = false;
  bool failed = false;
  int64_t failed_iteration = -1;
  std::string failed_message;
  std::map<int, std::deque<Fed>> feeds;
  std::thread thread;
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
  std::atomic<int64_t> copies_on_copy_stream{0};
  std::atomic<int64_t> copies_in_graph{0};
};

namespace {
using Clock = std::chrono::steady_clock;
int64_t Nanos(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }
int64_t NanosSince(Clock::time_point t) { return Nanos(Clock::now() - t); }
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
constexpr auto kSpin = std::chrono::microseconds(200);
}  // namespace

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

ExecutorState::ExecutorState(Graph g) : graph(std::move(g)) {
  const PipelineSpec& spec = graph.spec();
  const auto& nodes = graph.nodes();
  const int num_nodes = static_cast<int>(nodes.size());
  depth = std::max(1, spec.prefetch_depth);
  for (const GraphNode& node : nodes) has_gpu = has_gpu || node.device == Device::kGpu;

  auto reject = [&](const GraphNode& node, const std::string& what) {
    const SourceLocation where = node.spec.Location("node");
    throw ConfigError((where.empty() ? "" : where.ToString() + ": ") + node.spec.Describe() + ": " + what);
  };
  pinned_output.resize(nodes.size());
  cpu_dep_count.assign(nodes.size(), 0);
  cpu_consumers.resize(nodes.size());
  for (const GraphNode& node : nodes) {
    pinned_output[node.index].assign(node.spec.outputs().size(), false);
    if (node.op() == kExternalSourceOp) external_sources.push_back(node.index);
  }
  for (const GraphNode& node : nodes) {
    std::vector<int> producers;
    for (const GraphEdge& edge : node.inputs) {
      const GraphNode& producer = graph.node(edge.producer);
      if (node.device == Device::kCpu && producer.device == Device::kGpu) {
        reject(node, "reads \"" + edge.name + "\" from GPU node \"" + producer.name() +
                         "\": the executor runs every CPU node before the GPU stage of an iteration");
      }
      if (node.device == Device::kGpu && producer.device == Device::kGpu && edge.data_device != edge.wanted) {
        reject(node, "reads \"" + edge.name + "\" across devices from GPU node \"" + producer.name() +
                         "\": not supported by the executor");
      }
      if (edge.staged()) {
        const auto key = std::make_pair(edge.producer, edge.output);
        if (!staged_index.count(key)) {
          staged_index[key] = static_cast<int>(staged_outputs.size());
          staged_outputs.push_back(key);
          pinned_output[edge.producer][edge.output] = true;
        }
      }
      producers.push_back(edge.producer);
    }
    for (const GraphArgInput& arg : node.arg_inputs) {
      const GraphNode& producer = graph.node(arg.source.producer);
      if (producer.device == Device::kGpu) {
        reject(node, "argument \"" + arg.arg + "\" reads \"" + arg.source.name + "\" from GPU node \"" +
                         producer.name() + "\": argument inputs must come from CPU nodes");
      }
      producers.push_back(arg.source.producer);
    }
    if (node.device == Device::kCpu) {
      cpu_nodes.push_back(node.index);
      std::sort(producers.begin(), producers.end());
      producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
      for (int p : producers) {
        ++cpu_dep_count[node.index];
        cpu_consumers[p].push_back(node.index);
      }
    }
  }
  cpu_pending = std::vector<std::atomic<int>>(nodes.size());

  // Runs of consecutive capturable GPU nodes (in GPU order; the CPU stage runs before all of them).
  for (const GraphNode& node : nodes) {
    if (node.device != Device::kGpu) continue;
    const bool capture = spec.graph_capture && node.capturable() && node.op() != kExternalSourceOp;
    if (capture && !segments.empty() && segments.back().captured) {
      segments.back().nodes.push_back(node.index);
    } else {
      segments.push_back(Segment{{node.index}, capture});
    }
  }

  // Staged outputs whose readers all sit in one captured segment may be copied inside its graph.
  std::vector<int> segment_of(nodes.size(), -1);
  for (size_t s = 0; s < segments.size(); ++s) {
    if (segments[s].captured) {
      for (int n : segments[s].nodes) segment_of[n] = static_cast<int>(s);
    }
  }
  staged_segment.assign(staged_outputs.size(), -2);  // -2: no reader seen yet
  for (const GraphNode& node : nodes) {
    for (const GraphEdge& edge : node.inputs) {
      if (!edge.staged()) continue;
      int& seg = staged_segment[staged_index.at({edge.producer, edge.output})];
      const int mine = segment_of[node.index];
      seg = (seg == -2 || seg == mine) ? mine : -1;
    }
  }
  segment_staged.resize(segments.size());
  for (size_t j = 0; j < staged_outputs.size(); ++j) {
    if (staged_segment[j] < 0) staged_segment[j] = -1;
    else segment_staged[staged_segment[j]].push_back(static_cast<int>(j));
  }
  graph_copy_max_bytes = GraphCopyMaxBytes();

  std::optional<cuda::DeviceGuard> guard;
  if (has_gpu) {
    device = spec.device_id;
    guard.emplace(device);
    compute = cuda::Stream::Create();
    copy = cuda::Stream::Create();
  }
  pool = std::make_unique<ExecutorPool>(std::max(1, spec.num_threads));
  ops.resize(nodes.size());
  for (const GraphNode& node : nodes) {
    if (node.op() == kExternalSourceOp) continue;
    try {
      ops[node.index] = node.CreateOperator();
    } catch (...) {
      RethrowWithContext("pipeline \"" + spec.name + "\": creating node \"" + node.name() + "\" (op \"" +
                         node.op() + "\"): ");
    }
  }
  slots.resize(static_cast<size_t>(depth));
  for (int s = 0; s < depth; ++s) {
    Slot& slot = slots[s];
    slot.index = s;
    slot.cpu_out.resize(nodes.size());
    slot.gpu_out.resize(nodes.size());
    for (int n = 0; n < num_nodes; ++n) {
      slot.cpu_out[n].resize(nodes[n].spec.outputs().size());
      slot.gpu_out[n].resize(nodes[n].spec.outputs().size());
      slot.ws.push_back(std::make_unique<Workspace>(nodes[n].spec, spec.batch_size));
    }
    slot.staged.resize(staged_outputs.size());
    slot.staged_in_graph.assign(staged_outputs.size(), 0);
    slot.fed.resize(nodes.size());
    slot.captured.resize(segments.size());
    if (has_gpu) {
      slot.ready = std::make_shared<cuda::Event>(cuda::Event::Create());
      slot.alloc_done = cuda::Event::Create();
      slot.copy_done = cuda::Event::Create();
    }
  }
}

ExecutorState::~ExecutorState() {
  if (has_gpu) {
    // Shutdown may block: let queued GPU work finish before its buffers go back to the pools.
    CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(copy.get()));
    CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(compute.get()));
    // Copies of slot lists may outlive the streams (a TensorList taken from the outputs): their
    // buffers must not be returned on a destroyed stream, and nothing is in flight any more.
    auto detach = [](auto& list) {
      Buffer b = list.buffer();
      b.set_release_stream(std::nullopt);
    };
    for (Slot& slot : slots) {
      for (auto& lists : slot.cpu_out) std::for_each(lists.begin(), lists.end(), detach);
      for (auto& lists : slot.gpu_out) std::for_each(lists.begin(), lists.end(), detach);
      std::for_each(slot.staged.begin(), slot.staged.end(), detach);
    }
  }
}

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
    try {
      RunIteration(k, *slot, incoming);  // moves stage_mark to its end
    } catch (...) {
      error = std::current_exception();
      stage_mark = Clock::now();
    }
    stage_work_ns.fetch_add(Nanos(stage_mark - work_from), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu);
      slot->error = error;
      slot->done = true;
      completed = k + 1;
      if (error) {
        failed = true;
        failed_iteration = k;
        failed_message = MessageOf(error);
      }
    }
    Notify();
  }
}

void ExecutorState::RunIteration(int64_t k, Slot& slot, std::vector<std::optional<Fed>>& incoming) {
  int64_t waited = 0;
  if (has_gpu) {
    try {
      if (!device_set) {
        CONVEYOR_CUDA_CHECK(cudaSetDevice(device));
        device_set = true;
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
  for (int src : external_sources) slot.fed[src] = std::move(incoming[src]);
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
  ws.set_thread_pool(pool.get());
}

// ---------------------------------------------------------------------------------------------
// CPU stage

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
    ops[n]->RunCpu(ws);
  } catch (...) {
    RethrowWithContext(NodePrefix(node, k));
  }
}

void ExecutorState::RunCpuStage(int64_t k, Slot& slot) {
  if (cpu_nodes.empty()) return;
  if (cpu_nodes.size() == 1 || pool->num_threads() <= 1) {
    for (int n : cpu_nodes) RunCpuNode(n, k, slot);
    return;
  }
  // Independent nodes run as concurrent tasks in the arena; a node starts when its last CPU
  // producer finished. After the first error no further node starts.
  for (int n : cpu_nodes) cpu_pending[n].store(cpu_dep_count[n], std::memory_order_relaxed);
  std::mutex error_mu;
  std::exception_ptr first_error;
  std::atomic<bool> cancelled{false};
  pool->arena().execute([&] {
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
  });
  if (first_error) std::rethrow_exception(first_error);
}

// ---------------------------------------------------------------------------------------------
// GPU stage

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

void ExecutorState::RunCaptured(int segment, int64_t k, Slot& slot) {
  const Segment& seg = segments[segment];
  // Built every iteration into the slot's scratch (capacity kept): allocation-free steady state.
  CaptureSignature& signature = slot.scratch;
  signature.clear();
  for (int n : seg.nodes) {
    try {
      BindGpuNode(n, k, slot, &signature);
    } catch (...) {
      RethrowWithContext(NodePrefix(graph.node(n), k));
    }
  }
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
  // Host work of every node first: it rewrites the descriptors the graph's kernels read.
  for (int n : seg.nodes) {
    try {
      ops[n]->PrepareGpu(*slot.ws[n]);
    } catch (...) {
      RethrowWithContext(NodePrefix(graph.node(n), k));
    }
  }
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

void ExecutorState::RunGpuStage(int64_t k, Slot& slot) {
  const StreamView stream = compute.view();
  try {
    // Device buffers of this slot may still be read by the consumer of iteration k - depth.
    for (int i = 0; i < slot.consumer_pending; ++i) slot.consumer_done[i].Wait(stream);
    slot.consumer_pending = 0;
    if (!staged_outputs.empty()) {
      bool allocated = false;
      int on_copy_stream = 0;
      for (size_t j = 0; j < staged_outputs.size(); ++j) {
        const auto [p, o] = staged_outputs[j];
        const TensorListCPU& src = slot.cpu_out[p][o];
        const bool grew = Place(slot.staged[j], src.shapes(), src.dtype(), MemoryKind::kDevice, stream);
        slot.staged[j].set_layout(src.layout());
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
  } catch (...) {
    RethrowWithContext(IterationPrefix(k) + "staging: ");
  }
  for (size_t s = 0; s < segments.size(); ++s) {
    const Segment& seg = segments[s];
    if (seg.captured) {
      RunCaptured(static_cast<int>(s), k, slot);
      continue;
    }
    const int n = seg.nodes.front();
    try {
      if (IsExternal(n)) {
        RunExternalGpu(n, slot);
        continue;
      }
      BindGpuNode(n, k, slot, nullptr);
      ops[n]->PrepareGpu(*slot.ws[n]);
      ops[n]->RunGpu(*slot.ws[n]);
      CONVEYOR_CHECK_LAUNCH("RunGpu");
    } catch (...) {
      RethrowWithContext(NodePrefix(graph.node(n), k));
    }
  }
  try {
    slot.ready->Record(stream);
    slot.gpu_used = true;
  } catch (...) {
    RethrowWithContext(IterationPrefix(k));
  }
}

// ---------------------------------------------------------------------------------------------
// Consumer side

PipelineOutputs ExecutorState::Pop() {
  std::unique_lock<std::mutex> lock(mu);
  const std::string& name = graph.spec().name;
  if (failed && consumed > failed_iteration) {
    throw Error("pipeline \"" + name + "\": stopped after the error in iteration " +
                std::to_string(failed_iteration) + ": " + failed_message);
  }
  if (consumed >= scheduled) {
    throw InvalidArgument("pipeline \"" + name + "\": Outputs(): no iteration is scheduled; call Run() first");
  }
  const int64_t k = consumed;
  Slot& slot = slots[k % depth];
  if (slot.leased) {
    throw InvalidArgument("pipeline \"" + name + "\": Outputs(): iteration " + std::to_string(k) +
                          " needs prefetch slot " + std::to_string(slot.index) + ", still held by the outputs of "
                          "iteration " + std::to_string(slot.iteration) + "; release them first (prefetch_depth " +
                          std::to_string(depth) + ")");
  }
  Await(lock, [&] { return stop || (slot.iteration == k && slot.done); });
  if (stop) throw Error("pipeline \"" + name + "\": Outputs(): the pipeline is shutting down");
  ++consumed;
  if (slot.error) {
    std::exception_ptr error = slot.error;
    slot.busy = false;
    lock.unlock();
    Notify();
    std::rethrow_exception(error);
  }
  slot.leased = true;
  PipelineOutputs out;
  out.iteration_ = k;
  out.ready_ = slot.ready;
  for (const GraphOutput& o : graph.outputs()) {
    out.names_.push_back(o.name);
    if (o.device == Device::kGpu) {
      out.lists_.emplace_back(slot.gpu_out[o.node][o.output]);
    } else {
      out.lists_.emplace_back(slot.cpu_out[o.node][o.output]);
    }
    std::visit([&](auto& list) { list.set_ready_event(slot.ready); }, out.lists_.back());
  }
  out.lease_ = std::make_unique<SlotLease>();
  out.lease_->state = shared_from_this();
  out.lease_->slot = slot.index;
  return out;
}

void ExecutorState::Release(int index, const std::vector<StreamView>& streams) noexcept {
  Slot& slot = slots[index];
  int recorded = 0;
  for (StreamView stream : streams) {
    try {
      if (static_cast<size_t>(recorded) == slot.consumer_done.size()) slot.consumer_done.push_back(cuda::Event::Create());
      slot.consumer_done[recorded].Record(stream);
      ++recorded;
    } catch (...) {
      // Without an event, keep the slot safe the slow way.
      CONVEYOR_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream.get()));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    slot.consumer_pending = recorded;
    slot.leased = false;
    slot.busy = false;
  }
  Notify();
}

SlotLease::~SlotLease() { state->Release(slot, streams); }

}  // namespace pipeline_internal

using pipeline_internal::ExecutorState;

// ---------------------------------------------------------------------------------------------
// PipelineOutputs

PipelineOutputs::~PipelineOutputs() = default;
PipelineOutputs::PipelineOutputs(PipelineOutputs&&) noexcept = default;
PipelineOutputs& PipelineOutputs::operator=(PipelineOutputs&& other) noexcept = default;

int PipelineOutputs::Index(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  std::string known;
  for (const std::string& n : names_) known += (known.empty() ? "" : ", ") + n;
  throw InvalidArgument("PipelineOutputs: no output \"" + name + "\" (outputs: " + known + ")");
}

bool PipelineOutputs::IsGpu(int i) const {
  if (i < 0 || i >= static_cast<int>(lists_.size())) {
    throw InvalidArgument("PipelineOutputs: output " + std::to_string(i) + " out of range (" +
                          std::to_string(lists_.size()) + " outputs" + (lease_ ? "" : ", released") + ")");
  }
  return std::holds_alternative<TensorListGPU>(lists_[i]);
}

const TensorListGPU& PipelineOutputs::Gpu(int i) const {
  if (!IsGpu(i)) throw InvalidArgument("PipelineOutputs: output \"" + names_[i] + "\" is on the host; use Cpu()");
  return std::get<TensorListGPU>(lists_[i]);
}

const TensorListCPU& PipelineOutputs::Cpu(int i) const {
  if (IsGpu(i)) throw InvalidArgument("PipelineOutputs: output \"" + names_[i] + "\" is on the GPU; use Gpu()");
  return std::get<TensorListCPU>(lists_[i]);
}

void PipelineOutputs::WaitOn(StreamView stream) {
  if (!lease_) throw InvalidArgument("PipelineOutputs::WaitOn: the outputs were released");
  if (!ready_) return;
  ready_->Wait(stream);
  auto& streams = lease_->streams;
  if (std::find(streams.begin(), streams.end(), stream) == streams.end()) streams.push_back(stream);
}

void PipelineOutputs::Sync() const {
  if (ready_) ready_->Synchronize();
}

void PipelineOutputs::Release() {
  lists_.clear();
  lease_.reset();
}

// ---------------------------------------------------------------------------------------------
// Executor

Executor::Executor(Graph graph) : state_(std::make_shared<ExecutorState>(std::move(graph))) {}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->Notify();
  if (state_->thread.joinable()) state_->thread.join();
  // Outputs still held keep the state (and the buffers they reference) alive until released.
}

void Executor::Start(int iterations) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->thread.joinable()) throw InvalidArgument("Executor::Start: already started");
    state_->scheduled += std::max(0, iterations);
  }
  ExecutorState* state = state_.get();
  state_->thread = std::thread([state] { state->Main(); });
}

void Executor::Schedule() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    const int64_t claimed = state_->scheduled - state_->started;
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
    ahead = std::min(ahead, have - (state_->scheduled - state_->started));
  }
  return ahead;
}

const Graph& Executor::graph() const { return state_->graph; }

const Operator* Executor::FindOperator(const std::string& node) const {
  return state_->ops.at(static_cast<size_t>(state_->graph.node(node).index)).get();
}

ExecutorCounters Executor::counters() const {
  ExecutorCounters c;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    c.iterations = state_->completed;
  }
  c.captures = state_->captures.load();
  c.replays = state_->replays.load();
  c.stage_work_ns = state_->stage_work_ns.load();
  c.stage_gpu_wait_ns = state_->stage_gpu_wait_ns.load();
  c.stage_idle_ns = state_->stage_idle_ns.load();
  c.stage_cpu_ns = state_->stage_cpu_ns.load();
  c.stage_issue_ns = state_->stage_issue_ns.load();
  c.copies_on_copy_stream = state_->copies_on_copy_stream.load();
  c.copies_in_graph = state_->copies_in_graph.load();
  return c;
}

}  // namespace conveyor
