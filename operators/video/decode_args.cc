#include "operators/video/decode_args.h"

namespace conveyor::ops::video {

OpSchema& AddDecodeArgs(OpSchema& schema, const DecodeArgsDoc& doc) {
  const VideoLimits defaults;
  return schema
      .Arg<int64_t>("decoder_threads", 1,
                    "libavcodec threads per decoder (" + doc.in_parallel + " already decode in parallel).")
      .Range(1, 64)
      .Arg<int64_t>("max_pixels", defaults.max_pixels,
                    "Largest frame (width x height as the stream declares it); a larger one is an error naming the " +
                        doc.unit + ", before anything is allocated for it.")
      .Min(1)
      .Arg<int64_t>("max_frames", defaults.max_frames, "Most packets (frames) a " + doc.unit + "'s video stream may hold.")
      .Min(1)
      .Arg<int64_t>("decode_timeout_ms", defaults.timeout_ms,
                    "Wall-clock bound on indexing one " + doc.unit + " and on decoding " + doc.decoded +
                        " (a damaged file cannot hang the pipeline).")
      .Range(1, 86400000);
}

void ReadDecodeArgs(const OpSpec& spec, VideoLimits& limits, CpuDecoderOptions& options) {
  limits.max_pixels = spec.Arg<int64_t>("max_pixels");
  limits.max_frames = spec.Arg<int64_t>("max_frames");
  limits.timeout_ms = spec.Arg<int64_t>("decode_timeout_ms");
  options.threads = static_cast<int>(spec.Arg<int64_t>("decoder_threads"));
}

}  // namespace conveyor::ops::video
