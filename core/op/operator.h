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
// Errors are thrown (InvalidArgument for bad data, CudaError from CONVEYOR_CUDA_CHECK); the
// executor adds the node, operator and iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

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

  // Readers: the samples one epoch of this node delivers at `batch_size` per iteration (its
  // shard, padding included), which Pipeline::EpochSize reports; nullopt for every other
  // operator. Called from any thread while iterations run: it must read only immutable state.
  virtual std::optional<int64_t> EpochSize(int64_t batch_size) const {
    (void)batch_size;
    return std::nullopt;
  }

  const OpSpec& spec() const { return spec_; }

 private:
  OpSpec spec_;  // a copy: the operator outlives the YAML document it came from
};

using OperatorFactory = std::function<std::unique_ptr<Operator>(const OpSpec& spec)>;

}  // namespace conveyor
