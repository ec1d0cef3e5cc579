// What the C API's pipeline files share (pipeline_capi.cc: life cycle and outputs;
// pipeline_capi_feed.cc: external sources): the pipeline handle and two helpers for messages.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/spec.h"
#include "core/pipeline/pipeline.h"

struct conveyor_pipeline_s {
  explicit conveyor_pipeline_s(conveyor::Pipeline p) : pipeline(std::move(p)) {}
  conveyor::Pipeline pipeline;
  std::vector<std::string> external_sources;  // node names, file order
  // Copies of fed device data that cannot be used in place run here (made on first need).
  std::optional<conveyor::cuda::Stream> feed_stream;
};

namespace conveyor::capi {

// "a, b, c", or "none".
std::string JoinNames(const std::vector<std::string>& names);
// The spec of the external_source node `node`, or InvalidArgument saying what the pipeline has.
const OpSpec& ExternalSource(const conveyor_pipeline_s& p, const std::string& node);

}  // namespace conveyor::capi
