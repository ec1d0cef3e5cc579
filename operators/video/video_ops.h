// The video operators as schema + factory pairs, for the two ways they are registered: statically
// into a binary that links //operators/video (video_registration.cc), or by the plugin
// libconveyor_video.so (video_plugin.cc) that pipelines load on demand (docs/video.md).
#pragma once

#include <memory>

#include "core/op/operator.h"
#include "core/op/schema.h"
#include "core/op/spec.h"

namespace conveyor::ops::video {

struct VideoOperator {
  const OpSchema& (*schema)();
  std::unique_ptr<Operator> (*make)(const OpSpec& spec);
};

const OpSchema& VideoReaderSchema();  // readers.video (video_reader_op.cc)
std::unique_ptr<Operator> MakeVideoReader(const OpSpec& spec);
const OpSchema& VideoDecoderSchema();  // decoders.video (video_decoder_op.cc)
std::unique_ptr<Operator> MakeVideoDecoder(const OpSpec& spec);

// Both, in the order they register.
inline constexpr VideoOperator kVideoOperators[] = {
    {&VideoReaderSchema, &MakeVideoReader},
    {&VideoDecoderSchema, &MakeVideoDecoder},
};

}  // namespace conveyor::ops::video
