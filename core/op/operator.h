// Operator: the work of one node. Constructed from a validated OpSpec (so arguments are known to
// be present, typed and in range); the executor then calls, every iteration:
//
//   Setup(ws)      → output descriptors (shapes, dtype, layout), inputs bound, outputs not yet
//   [executor allocates outputs from the descriptors and binds them]
//   RunCpu(ws)     — CPU nodes: host work, may use ws.ParallelFor / the TBB arena
//   PrepareGpu(ws) — GPU nodes: host work that must happen every iteration (per-sample parameters
//                    written into descriptor buffers); never captured into a CUDA graph
//   RunGpu(ws)     — GPU nodes: queues work on ws.stream() only; for a capturable schema this is
//                    captured once and replayed, so it may not bake per-iteration values into
//                    launches — kernels read them from the buffers PrepareGpu wrote
//
// Three shapes of operator, by what the schema declares:
//
// | shape                      | schema                               | where the work runs          |
// |----------------------------|--------------------------------------|------------------------------|
// | CPU                        | Backends({kCpu})                     | RunCpu: CPU stage, TBB pool  |
// | GPU (maybe Capturable)     | Backends({kGpu}), inputs kOpDevice   | RunGpu: queued on ws.stream()|
// | GPU with a host phase      | Backends({kGpu}), not Capturable,    | RunGpu: host work on the     |
// |   (decoders: "mixed")      | inputs Placement::kHost              | pool, then device work queued|
//
// A GPU operator with a host phase:
//   - its host-placed inputs arrive as host data (ws.InputCpu), never staged to the device;
//     Setup may parse them (headers) to produce the output shapes;
//   - RunGpu runs on the executor's stage thread during the GPU stage: it may do host work in
//     parallel with ws.ParallelFor (the executor's TBB pool, idle then: the CPU stage of the
//     iteration has finished), then queue device work (async copies, kernels) on ws.stream();
//   - host buffers it writes per slot (pinned staging indexed by ws.slot()) may be rewritten
//     without waiting: the executor runs slot s's next iteration only after all GPU work of
//     slot s's previous one finished;
//   - it is never captured; GPU operators after it are (it ends one captured segment, the next
//     starts after it), and its host phase for iteration k+1 runs while the GPU executes k;
//   - with the CPU stage on its own thread, LookAhead(ws) shows it each iteration's host inputs as
//     soon as that thread has made them, before that iteration's Setup and while RunGpu of an
//     earlier iteration may still run: it may start work for that iteration early (the JPEG
//     decoder starts its costliest photos) but RunGpu must give the same result without it.
//
// Errors are thrown (InvalidArgument for bad data, CudaError from CONVEYOR_CUDA_CHECK); the
// executor adds the node, operator and iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/op/spec.h"
#include "core/op/workspace.h"

namespace conveyor {

class Operator {
 public:
  explicit Operator(const OpSpec& spec) : spec_(spec) {}
  virtual ~Operator() = default;
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  virtual OutputDescs Setup(const Workspace& ws) = 0;
  // The defaults throw InvalidArgument: a schema that lists a backend must override its Run.
  virtual void RunCpu(Workspace& ws);
  virtual void PrepareGpu(Workspace& ws) { (void)ws; }
  virtual void RunGpu(Workspace& ws);
  // GPU operators with a host phase (above), where the CPU stage runs on its own thread:
  // iteration ws.iteration()'s inputs, once the CPU stage produced them, on that thread (so
  // possibly while RunGpu of an earlier iteration runs on another). ws has the inputs, iteration,
  // seed, slot and the CPU stage's pool (idle then); no outputs, no stream. The inputs stay valid
  // only until the call returns: copy what work started here keeps. A hint, called again when a
  // rewind redoes the iteration (with its new inputs); RunGpu of an iteration must not depend on
  // it. Default: nothing.
  virtual void LookAhead(const Workspace& ws) { (void)ws; }

  // Readers: the samples one epoch of this node delivers at `batch_size` per iteration (its
  // shard, padding included), which Pipeline::EpochSize reports; nullopt for every other
  // operator. Called from any thread while iterations run: it must read only immutable state.
  virtual std::optional<int64_t> EpochSize(int64_t batch_size) const {
    (void)batch_size;
    return std::nullopt;
  }

  // Checkpoints (docs/distributed.md): the state beyond (seed, iteration) that decides this node's
  // future batches — a reader's epoch and position — as one line of text; "" (the default) for
  // stateless operators. Called by the executor between this node's iterations (the thread that
  // runs its stage).
  // RestoreCheckpoint (before the first iteration) takes a line CheckpointState wrote and throws
  // InvalidArgument naming what differs when it belongs to another configuration (dataset size,
  // shard); the default refuses any non-empty line.
  virtual std::string CheckpointState() const { return ""; }
  virtual void RestoreCheckpoint(const std::string& state);
  // Re-filling a batch (docs/executor.md): the executor redoes an iteration after a node threw
  // SampleRejected, and first puts every stateful node back where it was before that iteration's
  // Setup — `state` is what CheckpointState returned then. With the CPU stage on its own thread
  // (cpu_stage_thread, docs/executor.md) a node of the CPU stage may have run the Setups of later
  // iterations since: the rewind undoes them all. Called by the executor with no Setup or Run of
  // this node in flight. Default: RestoreCheckpoint.
  virtual void RewindIteration(const std::string& state) { RestoreCheckpoint(state); }

  // Wiring, once, after every operator of the pipeline exists: input `input` of this node reads
  // output `output` of the node `producer_spec` describes, whose operator is `producer` (null for
  // an external_source: the application feeds it). Lets a consumer attach itself to its producer
  // (a decoder with `on_error: skip` hands its reader a sample check). Throws InvalidArgument when
  // the producer cannot serve it. Default: nothing.
  virtual void ConnectInput(int input, const OpSpec& producer_spec, Operator* producer, int output) {
    (void)input;
    (void)producer_spec;
    (void)producer;
    (void)output;
  }

  // Samples this node dropped instead of failing (readers serving a decoder with on_error: skip),
  // one entry per distinct source, for the pipeline's counters. Called from any thread while
  // iterations run (implementations lock).
  struct Skipped {
    std::string source;  // the file
    std::string reason;  // why, the first time
    int64_t times = 0;   // how often (once per epoch that met it)
  };
  virtual std::vector<Skipped> SkippedSamples() const { return {}; }

  const OpSpec& spec() const { return spec_; }

 private:
  OpSpec spec_;  // a copy: the operator outlives the YAML document it came from
};

using OperatorFactory = std::function<std::unique_ptr<Operator>(const OpSpec& spec)>;

}  // namespace conveyor
