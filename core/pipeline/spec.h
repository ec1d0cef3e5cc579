// PipelineSpec: a whole pipeline as data — what a YAML file says after parsing, environment
// substitution, typing of argument values by their schemas, and resolution of relative paths.
// It can be written back to YAML (ToYaml) and reloaded to an equal spec.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/op/spec.h"

namespace conveyor {

// A node's `enable:` or `probability:` (docs/yaml.md, "Conditions"): per sample, its output where
// the sample is selected, else its first input unchanged. Exactly one of the two is set.
struct NodeCondition {
  std::string enable;                 // output name of a per-sample bool/int scalar ("" with probability)
  std::optional<double> probability;  // a coin per sample, 1 with this probability
  friend bool operator==(const NodeCondition&, const NodeCondition&) = default;
};

struct PipelineSpec {
  std::string name = "pipeline";
  int batch_size = 1;
  DeviceRequest device = DeviceRequest::kAuto;  // auto: gpu when a CUDA device is present
  int device_id = 0;
  int num_threads = 4;
  int prefetch_depth = 2;
  uint64_t seed = 0;
  bool graph_capture = false;
  // The CPU stage on its own thread, ahead of the thread that issues the GPU stage (executor.h).
  // kAuto: on when the pipeline has both a CPU and a GPU stage.
  enum class StageThread { kAuto, kOn, kOff };
  StageThread cpu_stage_thread = StageThread::kAuto;
  std::vector<std::string> plugins;  // absolute (or as given, for specs built in C++)
  std::vector<OpSpec> ops;           // in file order
  std::vector<std::string> outputs;  // output names of nodes
  // Node name → its condition; Graph::Build turns each into hidden nodes (core/pipeline/conditions.h).
  std::map<std::string, NodeCondition> conditions;

  // The YAML file it came from ("" when built in C++), and where its own fields were:
  // "pipeline" (the section), "pipeline.KEY", "plugins.N", "outputs.N".
  std::string source_file;
  std::map<std::string, SourceLocation> locations;
  SourceLocation Location(const std::string& field) const;

  // Equal ignoring source file and locations (the YAML round trip).
  friend bool operator==(const PipelineSpec& a, const PipelineSpec& b) {
    return a.name == b.name && a.batch_size == b.batch_size && a.device == b.device &&
           a.device_id == b.device_id && a.num_threads == b.num_threads &&
           a.prefetch_depth == b.prefetch_depth && a.seed == b.seed && a.graph_capture == b.graph_capture &&
           a.cpu_stage_thread == b.cpu_stage_thread &&
           a.plugins == b.plugins && a.ops == b.ops && a.outputs == b.outputs && a.conditions == b.conditions;
  }
};

// The YAML text of a spec, in the format yaml_loader.h reads (every argument value written with
// its type's spelling; defaults are not written).
std::string ToYaml(const PipelineSpec& spec);

}  // namespace conveyor
