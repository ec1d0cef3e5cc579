// YAML → PipelineSpec. The format is DESIGN.md's:
//
//   pipeline: {name, batch_size, device: auto|cpu|gpu, device_id, num_threads, prefetch_depth,
//              seed, graph_capture, cpu_stage_thread}
//   plugins: [libmy_ops.so]               # relative to the file; loaded while parsing
//   ops:
//     - {op, name, device: cpu|gpu|auto, inputs: [...], outputs: [...], args: {...},
//        enable: $name | probability: p}   # per-sample condition (conditions.h), in spec.conditions
//   outputs: [...]
//
// Scalars may use `${VAR}` / `${VAR:-default}` (the environment, substituted before typing, so
// `device_id: ${LOCAL_RANK:-0}` is an int). `$name` as an argument value feeds another node's
// per-sample output into that argument. Argument values are typed by the operator's schema;
// path-typed arguments (ArgSchema::is_path) and plugins are resolved against the file's folder.
// A node without a name is named after its op and position ("random.coin_flip_2").
//
// Every error is a ConfigError "file:line:col: <what>" (1-based), naming the node when there is
// one: `pipelines/augment.yaml:7:45: op "flip" (flip): unknown argument "horizonal"; did you mean
// "horizontal"?`. A key repeated in any map (yaml-cpp would keep one silently) is refused with
// both positions. The loader checks each node against its schema; graph-level checks (inputs
// produced, cycles, devices) are Graph::Build's.
#pragma once

#include <string>

#include "core/pipeline/spec.h"
#include "core/pipeline/yaml_env.h"  // SubstituteEnv, part of the loader's interface

namespace conveyor {

// Reads and parses `path`; relative paths inside resolve against its folder; messages name the
// path as given.
PipelineSpec LoadPipelineFile(const std::string& path);

// Parses YAML text. `display_name` is used in messages; `base_dir` resolves relative paths
// ("" = the current directory).
PipelineSpec ParsePipelineYaml(const std::string& text, const std::string& display_name = "<string>",
                               const std::string& base_dir = "");


}  // namespace conveyor
