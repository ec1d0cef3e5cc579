#include "core/pipeline/graph.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/cuda/device.h"
#include "core/error.h"
#include "core/op/plugin.h"
#include "core/pipeline/conditions.h"
#include "core/util/strings.h"

namespace conveyor {

namespace {

struct Producer {
  int node;  // file index
  int output;
};

std::string PipelineError(const PipelineSpec& spec, const std::string& field, const std::string& what) {
  const SourceLocation at = spec.Location(field);
  return (at.empty() ? "" : at.ToString() + ": ") + what;
}

// The device a node runs on, or a SpecError when its op cannot run where it must.
Device Place(const OpSpec& op, const OpSchema& schema, Device pipeline) {
  const bool cpu = schema.SupportsDevice(Device::kCpu);
  const bool gpu = schema.SupportsDevice(Device::kGpu);
  switch (op.device()) {
    case DeviceRequest::kCpu:
      return Device::kCpu;  // Validate() checked the backend
    case DeviceRequest::kGpu:
      if (pipeline == Device::kGpu) return Device::kGpu;
      if (cpu) return Device::kCpu;  // the same file runs on machines without a GPU
      throw SpecError(op, "device", "not available on cpu, and the pipeline runs on the CPU (no CUDA device)");
    case DeviceRequest::kAuto:
      if (pipeline == Device::kGpu && gpu) return Device::kGpu;
      if (cpu) return Device::kCpu;
      throw SpecError(op, "device", "not available on cpu, and the pipeline runs on the CPU (no CUDA device)");
  }
  return Device::kCpu;
}

// Finds a cycle among `nodes` (those left after the topological sort) and names it.
std::string DescribeCycle(const std::vector<std::vector<int>>& producers_of, const std::vector<bool>& left,
                          const PipelineSpec& spec, int& first) {
  // Walk producer links from any leftover node: in a leftover set every node has a leftover
  // producer, so the walk must revisit a node, and the revisited stretch is a cycle.
  int at = -1;
  for (size_t i = 0; i < left.size() && at < 0; ++i) {
    if (left[i]) at = static_cast<int>(i);
  }
  std::vector<int> order;
  std::map<int, size_t> seen;
  while (!seen.count(at)) {
    seen[at] = order.size();
    order.push_back(at);
    for (int p : producers_of[static_cast<size_t>(at)]) {
      if (left[static_cast<size_t>(p)]) {
        at = p;
        break;
      }
    }
  }
  // Producers were followed backwards: reverse so the text reads in data-flow order, then rotate
  // so it starts at the node written first.
  std::vector<int> cycle(order.rbegin(), order.rend() - static_cast<std::ptrdiff_t>(seen[at]));
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  first = cycle.front();
  std::vector<std::string> names;
  for (int i : cycle) names.push_back(spec.ops[static_cast<size_t>(i)].name());
  names.push_back(names.front());
  return Join(names, " -> ");
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// `message` without a leading `op "x" (node): `, which SpecError adds again.
std::string Detail(const OpSpec& spec, const std::string& message) {
  const std::string self = spec.Describe() + ": ";
  return message.compare(0, self.size(), self) == 0 ? message.substr(self.size()) : message;
}

}  // namespace

std::string ArgumentNamedIn(const GraphNode& node, const std::string& message, bool quoted_only) {
  // The node's own description may contain an argument's name (a node called "range").
  std::string text = message;
  const std::string self = node.spec.Describe();
  for (size_t at = text.find(self); at != std::string::npos; at = text.find(self, at)) {
    text.replace(at, self.size(), std::string(self.size(), ' '));
  }
  std::string best;
  size_t best_at = std::string::npos;
  const auto consider = [&](const std::string& name, size_t at) {
    if (at < best_at || (at == best_at && name.size() > best.size())) {
      best = name;
      best_at = at;
    }
  };
  for (const ArgSchema& arg : node.schema().args()) {
    if (const size_t at = text.find("\"" + arg.name + "\""); at != std::string::npos) consider(arg.name, at);
  }
  if (!best.empty() || quoted_only) return best;
  for (const ArgSchema& arg : node.schema().args()) {
    for (size_t at = text.find(arg.name); at != std::string::npos; at = text.find(arg.name, at + 1)) {
      const size_t end = at + arg.name.size();
      if ((at == 0 || !IsWordChar(text[at - 1])) && (end == text.size() || !IsWordChar(text[end]))) {
        consider(arg.name, at);
        break;
      }
    }
  }
  return best;
}

std::unique_ptr<Operator> GraphNode::CreateOperator() const {
  // Operators check what the schema cannot express (lo < hi, list lengths, combinations) in their
  // constructors and know nothing of YAML; the position is added here, once for every operator.
  const auto position = [&](const std::string& message) {
    const SourceLocation at = spec.Location("node");
    const std::string what = Detail(spec, message);
    return (at.empty() ? "" : at.ToString() + ": ") + spec.Describe() + ": " + what;
  };
  try {
    return entry->factory(spec);
  } catch (const SpecError&) {
    throw;  // positioned already
  } catch (const InvalidArgument& e) {
    if (const std::string arg = ArgumentNamedIn(*this, e.what()); !arg.empty()) {
      throw ArgumentError(spec, arg, Detail(spec, e.what()));
    }
    throw InvalidArgument(position(e.what()));
  } catch (const ConfigError& e) {
    if (const std::string arg = ArgumentNamedIn(*this, e.what()); !arg.empty()) {
      throw ArgumentError(spec, arg, Detail(spec, e.what()));
    }
    throw ConfigError(position(e.what()));
  }
}

Graph Graph::Build(const PipelineSpec& written, const GraphOptions& options) {
  OpRegistry& registry = options.registry ? *options.registry : OpRegistry::Global();
  Graph g;
  g.spec_ = written;
  // Below, `spec` is the written one with its nodes' conditions expanded (conditions.h) once the
  // plugins are loaded and the pipeline's device is known.
  PipelineSpec spec = written;
  for (size_t i = 0; i < spec.plugins.size(); ++i) {
    try {
      LoadPlugin(spec.plugins[i], registry);
    } catch (const PluginError& e) {
      throw PluginError(PipelineError(spec, "plugins." + std::to_string(i), e.what()));
    }
  }
  // Operators of on-demand plugins (readers.video): their plugin loads now (an unknown name is
  // reported with the nodes below).
  for (const OpSpec& op : spec.ops) FindOrLoadOperator(op, registry);

  const bool has_gpu = options.has_gpu.value_or(cuda::HasCudaDevice());
  switch (spec.device) {
    case DeviceRequest::kCpu:
      g.device_ = Device::kCpu;
      break;
    case DeviceRequest::kGpu:
      if (!has_gpu) {
        throw ConfigError(PipelineError(spec, "pipeline.device",
                                        "device: gpu, but no CUDA device is usable (use auto to fall back to cpu)"));
      }
      g.device_ = Device::kGpu;
      break;
    case DeviceRequest::kAuto:
      g.device_ = has_gpu ? Device::kGpu : Device::kCpu;
      break;
  }

  if (!spec.conditions.empty()) {
    spec.ops = ExpandConditions(written, registry, [&](const OpSpec& op) {
      const OpRegistry::Entry* entry = registry.Find(op.op());
      return entry ? Place(op, entry->schema, g.device_) : Device::kCpu;
    });
  }

  // Nodes in file order first; names, outputs and devices.
  const size_t n = spec.ops.size();
  std::vector<GraphNode> nodes(n);
  std::map<std::string, int> by_name;
  std::map<std::string, Producer> producers;
  for (size_t i = 0; i < n; ++i) {
    const OpSpec& op = spec.ops[i];
    op.Validate();
    GraphNode& node = nodes[i];
    node.spec = op;
    node.entry = &registry.Get(op.op());
    if (auto [it, inserted] = by_name.emplace(op.name(), static_cast<int>(i)); !inserted) {
      const OpSpec& first = spec.ops[static_cast<size_t>(it->second)];
      throw SpecError(op, "name", "duplicate node name \"" + op.name() + "\" (first used by " + first.Describe() +
                                      (first.Location("name").empty() ? "" : " at " + first.Location("name").ToString()) +
                                      ")");
    }
    node.device = Place(op, node.schema(), g.device_);
    for (size_t j = 0; j < op.outputs().size(); ++j) {
      const std::string& out = op.outputs()[j];
      auto [it, inserted] = producers.emplace(out, Producer{static_cast<int>(i), static_cast<int>(j)});
      if (!inserted) {
        const OpSpec& other = spec.ops[static_cast<size_t>(it->second.node)];
        const SourceLocation at = other.Location("outputs." + std::to_string(it->second.output));
        throw SpecError(op, "outputs." + std::to_string(j),
                        "duplicate output name \"" + out + "\": also produced by " + other.Describe() +
                            (at.empty() ? "" : " at " + at.ToString()));
      }
      node.output_devices.push_back(node.schema().device_to_host() ? Device::kCpu : node.device);
    }
    node.consumers.resize(op.outputs().size());
  }
  std::vector<std::string> output_names;
  for (const auto& [name, p] : producers) output_names.push_back(name);

  // Edges, by file index for now.
  std::vector<std::vector<int>> producers_of(n);
  for (size_t i = 0; i < n; ++i) {
    GraphNode& node = nodes[i];
    const OpSpec& op = node.spec;
    const auto resolve = [&](const std::string& name, const std::string& field, const std::string& what) {
      auto it = producers.find(name);
      if (it == producers.end()) {
        throw SpecError(op, field, what + " \"" + name + "\" is not produced by any node" + DidYouMean(name, output_names));
      }
      const GraphNode& from = nodes[static_cast<size_t>(it->second.node)];
      producers_of[i].push_back(it->second.node);
      return GraphEdge{name, it->second.node, it->second.output,
                       from.output_devices[static_cast<size_t>(it->second.output)], Device::kCpu};
    };
    for (size_t k = 0; k < op.inputs().size(); ++k) {
      const std::string field = "inputs." + std::to_string(k);
      GraphEdge e = resolve(op.inputs()[k], field, "input");
      const bool host = node.schema().InputAt(k).placement == Placement::kHost;
      e.wanted = node.device == Device::kGpu && !host ? Device::kGpu : Device::kCpu;
      if (e.data_device == Device::kGpu && e.wanted == Device::kCpu) {
        const OpSpec& from = spec.ops[static_cast<size_t>(e.producer)];
        throw SpecError(op, field,
                        "input \"" + e.name + "\" is produced on the GPU by " + from.Describe() +
                            " but read on the host; data flows back only through a transfer op (to_host)");
      }
      node.inputs.push_back(e);
    }
    for (const auto& [arg, source] : op.arg_inputs()) {
      GraphEdge e = resolve(source, "args." + arg, "argument \"" + arg + "\": \"$" + source + "\":");
      if (e.data_device == Device::kGpu) {
        const OpSpec& from = spec.ops[static_cast<size_t>(e.producer)];
        throw SpecError(op, "args." + arg,
                        "argument \"" + arg + "\" is fed from \"" + source + "\", which " + from.Describe() +
                            " produces on the GPU; per-sample arguments are read on the host (run it on cpu)");
      }
      node.arg_inputs.push_back({arg, e});
    }
  }

  // Topological order: repeatedly the first node in file order whose producers are all placed, so
  // independent nodes keep the order the author wrote.
  std::vector<int> order;
  std::vector<bool> placed(n, false);
  std::vector<int> new_index(n, -1);
  while (order.size() < n) {
    int next = -1;
    for (size_t i = 0; i < n && next < 0; ++i) {
      if (placed[i]) continue;
      bool ready = true;
      for (int p : producers_of[i]) ready = ready && placed[static_cast<size_t>(p)];
      if (ready) next = static_cast<int>(i);
    }
    if (next < 0) {
      std::vector<bool> left(n);
      for (size_t i = 0; i < n; ++i) left[i] = !placed[i];
      int first = 0;
      const std::string cycle = DescribeCycle(producers_of, left, spec, first);
      throw SpecError(spec.ops[static_cast<size_t>(first)], "inputs", "the graph has a cycle: " + cycle);
    }
    placed[static_cast<size_t>(next)] = true;
    new_index[static_cast<size_t>(next)] = static_cast<int>(order.size());
    order.push_back(next);
  }
  for (int file_index : order) {
    GraphNode node = std::move(nodes[static_cast<size_t>(file_index)]);
    node.index = static_cast<int>(g.nodes_.size());
    for (GraphEdge& e : node.inputs) e.producer = new_index[static_cast<size_t>(e.producer)];
    for (GraphArgInput& a : node.arg_inputs) a.source.producer = new_index[static_cast<size_t>(a.source.producer)];
    g.nodes_.push_back(std::move(node));
  }
  for (GraphNode& node : g.nodes_) {
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const GraphEdge& e = node.inputs[k];
      g.nodes_[static_cast<size_t>(e.producer)].consumers[static_cast<size_t>(e.output)].emplace_back(
          node.index, static_cast<int>(k));
    }
    for (const GraphArgInput& a : node.arg_inputs) {
      g.nodes_[static_cast<size_t>(a.source.producer)].consumers[static_cast<size_t>(a.source.output)].emplace_back(
          node.index, -1);
    }
  }

  if (spec.outputs.empty()) {
    throw ConfigError(PipelineError(spec, "pipeline", "the pipeline has no outputs: list them under \"outputs:\""));
  }
  std::map<std::string, size_t> listed;
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    const std::string& name = spec.outputs[i];
    // Twice in the list would hand the consumer the same buffer under two indices (and a DALI-style
    // output_map would silently shadow one name): almost always a typo for another output.
    if (auto [first, inserted] = listed.emplace(name, i); !inserted) {
      const SourceLocation at = spec.Location("outputs." + std::to_string(first->second));
      throw ConfigError(PipelineError(spec, "outputs." + std::to_string(i),
                                      "pipeline output \"" + name + "\" is listed twice (first as outputs[" +
                                          std::to_string(first->second) + "]" +
                                          (at.empty() ? "" : " at " + at.ToString()) + "); list each output once"));
    }
    auto it = producers.find(name);
    if (it == producers.end()) {
      throw ConfigError(PipelineError(spec, "outputs." + std::to_string(i),
                                      "pipeline output \"" + name + "\" is not produced by any node" +
                                          DidYouMean(name, output_names)));
    }
    const int node = new_index[static_cast<size_t>(it->second.node)];
    g.outputs_.push_back({name, node, it->second.output,
                          g.nodes_[static_cast<size_t>(node)].output_devices[static_cast<size_t>(it->second.output)]});
  }
  return g;
}

const GraphNode& Graph::node(const std::string& name) const {
  for (const GraphNode& n : nodes_) {
    if (n.name() == name) return n;
  }
  std::vector<std::string> names;
  for (const GraphNode& n : nodes_) names.push_back(n.name());
  throw InvalidArgument("no node named \"" + name + "\" in pipeline \"" + spec_.name + "\"" + DidYouMean(name, names));
}

std::vector<std::pair<int, int>> Graph::StagedEdges() const {
  std::vector<std::pair<int, int>> edges;
  for (const GraphNode& n : nodes_) {
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k].staged()) edges.emplace_back(n.index, static_cast<int>(k));
    }
  }
  return edges;
}

}  // namespace conveyor
