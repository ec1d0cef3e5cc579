// `--set key=value` overrides of a loaded pipeline, applied to the PipelineSpec before its graph
// is built.
//
// | key                       | sets                                                        |
// |---------------------------|-------------------------------------------------------------|
// | pipeline.batch_size       | batch_size (also name, device, device_id, num_threads,      |
// |                           | prefetch_depth, seed, graph_capture, cpu_stage_thread)      |
// | NODE.ARG                  | argument ARG of node NODE, typed by the operator's schema   |
//
// Values are parsed with the target's type: `true`/`false`, integers, floats, dtype and layout
// names, strings; lists as `[1, 2]` or `1,2`. The value must be in the argument's range or
// choices. Every mistake throws ConfigError naming the `--set` text and what was expected
// ("--set reader.file_rot=/data: node "reader" (op "readers.file") has no argument
// "file_rot"; did you mean "file_root"?").
#pragma once

#include <string>
#include <vector>

#include "core/op/arg.h"
#include "core/pipeline/spec.h"

namespace conveyor::cli {

void ApplyOverride(PipelineSpec& spec, const std::string& assignment);
void ApplyOverrides(PipelineSpec& spec, const std::vector<std::string>& assignments);

// Parses `text` as a value of `type`; throws ConfigError "expected <type>, got "text"".
ArgValue ParseArgValue(const std::string& text, ArgType type);

}  // namespace conveyor::cli
