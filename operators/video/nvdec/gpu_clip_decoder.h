// A ClipDecoder for readers.video's GPU backend: NVDEC where it can take the file
// (nvdec_decoder.h), else the CPU decoder, whose frames the caller uploads. The choice is made per
// file when it is opened, and says why NVDEC was not used.
#pragma once

#include <memory>
#include <string>

#include "operators/readers/io/byte_source.h"
#include "operators/video/clip_decoder.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/nvdec/nvdec_decoder.h"
#include "operators/video/video_limits.h"

namespace conveyor::ops::video {

struct GpuClipDecoder {
  std::unique_ptr<ClipDecoder> decoder;
  bool nvdec = false;    // frames land in device memory; else host memory (CPU fallback)
  std::string fallback;  // why not NVDEC ("" when nvdec)
};

// Throws what OpenCpuClipDecoder throws (the file cannot be opened, changed since indexed).
GpuClipDecoder OpenGpuClipDecoder(std::shared_ptr<const ByteSource> source, std::shared_ptr<const ClipIndex> index,
                                  const VideoLimits& limits, const CpuDecoderOptions& cpu_options,
                                  const NvdecOptions& nvdec_options);

// True when `decoder` decodes with NVDEC (its frames are written to device memory).
bool IsNvdec(const ClipDecoder& decoder);

}  // namespace conveyor::ops::video
