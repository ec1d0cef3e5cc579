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
// pipeline outputs exist. Errors are ConfigError with file:line:col when the spec came from YAML.
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
  std::unique_ptr<Operator> CreateOperator() const { return entry->factory(spec); }
};

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
