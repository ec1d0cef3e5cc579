#include "operators/video/nvdec/gpu_clip_decoder.h"

#include "core/error.h"
#include "operators/video/demux.h"

namespace conveyor::ops::video {

GpuClipDecoder OpenGpuClipDecoder(std::shared_ptr<const ByteSource> source, std::shared_ptr<const ClipIndex> index,
                                  const VideoLimits& limits, const CpuDecoderOptions& cpu_options,
                                  const NvdecOptions& nvdec_options) {
  GpuClipDecoder out;
  std::unique_ptr<NvdecFrameDecoder> nvdec;
  try {
    nvdec = std::make_unique<NvdecFrameDecoder>(index->info, index->name, nvdec_options);
  } catch (const NvdecUnsupported& e) {
    out.fallback = e.what();
  }
  if (nvdec == nullptr) {
    out.decoder = OpenCpuClipDecoder(std::move(source), std::move(index), limits, cpu_options);
    return out;
  }
  auto demuxer = std::make_unique<Demuxer>(std::move(source), limits);
  const VideoStreamInfo& info = demuxer->info();
  CheckUnchanged(info, *index);
  out.decoder = std::make_unique<ClipDecoder>(std::move(demuxer), std::move(nvdec), std::move(index), limits);
  out.nvdec = true;
  return out;
}

bool IsNvdec(const ClipDecoder& decoder) {
  const std::string d = decoder.Describe();
  return d.rfind("nvdec ", 0) == 0;
}

}  // namespace conveyor::ops::video
