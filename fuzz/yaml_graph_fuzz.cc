// libFuzzer target: pipeline YAML text -> PipelineSpec (ParsePipelineYaml) -> Graph (Graph::Build)
// against the built-in operators, as `conveyor run` does before any operator is constructed.
// Contract: any text either builds a graph or throws a conveyor::Error (ConfigError, SpecError,
// ...) — never a yaml-cpp or standard-library exception, a crash or UB.
// Plugins named in the text are dropped before Graph::Build: loading arbitrary paths would run
// other libraries' code (the plugin loader has its own target, plugin_fuzz).
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/yaml_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    conveyor::PipelineSpec spec = conveyor::ParsePipelineYaml(text, "fuzz.yaml", "/nonexistent-fuzz-dir");
    spec.plugins.clear();
    conveyor::GraphOptions options;
    options.has_gpu = false;
    const conveyor::Graph g = conveyor::Graph::Build(spec, options);
    if (g.nodes().size() != spec.ops.size() && g.nodes().empty()) __builtin_trap();
  } catch (const conveyor::Error&) {
  }
  return 0;
}
