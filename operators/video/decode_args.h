// The decoding bounds readers.video and decoders.video both take (max_pixels, max_frames,
// decode_timeout_ms, decoder_threads): declared and read in one place. `unit` names what one
// index covers in the docs ("file" for the reader, "sample" for the decoder), `decoded` what one
// decode covers ("one clip", "it"), `in_parallel` what already decodes in parallel.
#pragma once

#include <string>

#include "core/op/schema.h"
#include "core/op/spec.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/video_limits.h"

namespace conveyor::ops::video {

struct DecodeArgsDoc {
  std::string unit, decoded, in_parallel;
};

OpSchema& AddDecodeArgs(OpSchema& schema, const DecodeArgsDoc& doc);
void ReadDecodeArgs(const OpSpec& spec, VideoLimits& limits, CpuDecoderOptions& options);

}  // namespace conveyor::ops::video
