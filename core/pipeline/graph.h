// Graph: a PipelineSpec checked as a whole and put in execution order.
//
//   reader ──jpegs──▶ decode(gpu) ──images──▶ crop(gpu) ──▶ out
//     │ cpu             ▲ staged: cpu→gpu edge
//   coin_flip ──flip──$mirror (argument input, host)
//
// Build() places every node (auto → gpu when the pipeline runs on a GPU; a gpu node in a pipeline
// that runs on the CPU falls back to cpu when its op has a CPU backend), loads the spec's plugins,
// and checks: unique node and output names, every input and `$arg` produced, no cycles (the
// message names the cycle), the op available on its device, CPU→GPU edges marked for staging,
// GPU→CPU edges only out of a DeviceToHost transfer op, argument inputs produced on the host,
// pipeline outputs exist and are listed once. Errors are ConfigError with file:line:col when the
// spec came from YAML. Operators are constructed later (GraphNode::CreateOperator, by the executor),
// and what their constructors refuse is reported at the argument's position too (ArgumentError).
//
// A node with `enable:` / `probability:` (spec.conditions) is followed by the hidden nodes that
// make its output conditional (conditions.h: "<node>.coin", "<node>.select"); they are ordinary
// nodes of nodes(), while spec() stays as written.
//
// nodes() is in topological order (producers first, file order among independent nodes): the
// executor runs them in that order, the CPU ones in its TBB stage and the GPU ones on its streams.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/op/operator.h"
#include "core/op/registry.h"
#include "core/pipeline/spec.h"

namespace conveyor {

// Where an input comes from.
struct GraphEdge {
  std::string name;     // the output name as written
  int producer = -1;    // index into Graph::nodes()
  int output = 0;       // the producer's output index
  Device data_device;   // where the producer writes it (Graph::output_device)
  Device wanted;        // where the consumer reads it (its device, or host for Placement::kHost)
  // True for a CPU→GPU edge: the executor writes the producer's output into pinned staging and
  // copies it to the device once per iteration.
  bool staged() const { return data_device == Device::kCpu && wanted == Device::kGpu; }
};

struct GraphArgInput {
  std::string arg;   // the argument it feeds
  GraphEdge source;  // always host data (wanted == kCpu)
};

struct GraphNode {
  int index = 0;                    // position in Graph::nodes()
  OpSpec spec;                      // node name: spec.name()
  Device device = Device::kCpu;     // resolved
  const OpRegistry::Entry* entry = nullptr;
  std::vector<GraphEdge> inputs;    // in schema order
  std::vector<GraphArgInput> arg_inputs;
  std::vector<Device> output_devices;  // kCpu for a DeviceToHost op's outputs
  // (consumer node index, input index) per output; argument inputs are listed with input = -1.
  std::vector<std::vector<std::pair<int, int>>> consumers;

  const std::string& name() const { return spec.name(); }
  const std::string& op() const { return spec.op(); }
  const OpSchema& schema() const { return entry->schema; }
  bool capturable() const { return device == Device::kGpu && entry->schema.capturable(); }
  // Constructs the node's operator. An InvalidArgument or ConfigError from the constructor that
  // names one of the op's arguments becomes an ArgumentError at that argument's position; any
  // other one keeps its type and gains the node's position. Other errors pass unchanged.
  std::unique_ptr<Operator> CreateOperator() const;
};

// An argument value that an operator refused (in its constructor, or later through
// RethrowNamingArgument): what() is `file:line:col: op "x" (node): <the operator's reason>` with
// the position of the argument's value in the YAML (of the node when the spec was built in C++
// without positions); arg() is the argument's name. A ConfigError, like every other mistake in
// a pipeline file.
class ArgumentError : public SpecError {
 public:
  ArgumentError(const OpSpec& spec, std::string arg, const std::string& detail)
      : SpecError(spec, "args." + arg, detail), arg_(std::move(arg)) {}
  const std::string& arg() const { return arg_; }

 private:
  std::string arg_;
};

// The argument of `spec`'s schema that `message` is about, or "": an argument named in quotes
// (`argument "dtype": ...`) first, else the first schema argument the text names as a whole
// word (`range must be [lo, hi]`); the node's own description is ignored, and with
// `quoted_only` bare words do not count.
std::string ArgumentNamedIn(const GraphNode& node, const std::string& message, bool quoted_only = false);

struct GraphOutput {
  std::string name;
  int node = -1;
  int output = 0;
  Device device = Device::kCpu;
};

struct GraphOptions {
  // Whether a CUDA device is usable; nullopt asks cuda::HasCudaDevice().
  std::optional<bool> has_gpu;
  OpRegistry* registry = nullptr;  // null: OpRegistry::Global()
};

class Graph {
 public:
  // Throws ConfigError (file:line:col when known) or PluginError for a plugin that fails to load.
  static Graph Build(const PipelineSpec& spec, const GraphOptions& options = {});

  const PipelineSpec& spec() const { return spec_; }
  Device device() const { return device_; }  // where the pipeline runs (auto resolved)
  const std::vector<GraphNode>& nodes() const { return nodes_; }
  const GraphNode& node(int index) const { return nodes_.at(static_cast<size_t>(index)); }
  // Throws InvalidArgument for an unknown node name.
  const GraphNode& node(const std::string& name) const;
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  // Every CPU→GPU edge (consumer node, input index), for the executor's staging buffers.
  std::vector<std::pair<int, int>> StagedEdges() const;

 private:
  PipelineSpec spec_;
  Device device_ = Device::kCpu;
  std::vector<GraphNode> nodes_;
  std::vector<GraphOutput> outputs_;
};

}  // namespace conveyor
