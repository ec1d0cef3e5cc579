#include "operators/video/ffmpeg_util.h"

#include <mutex>

namespace conveyor::ops::video {

std::string AvErrorText(int error) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {0};
  if (av_strerror(error, text, sizeof(text)) < 0) return "error " + std::to_string(error);
  return text;
}

VideoCodec CodecFromAvId(AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_H264:
      return VideoCodec::kH264;
    case AV_CODEC_ID_HEVC:
      return VideoCodec::kHevc;
    case AV_CODEC_ID_VP9:
      return VideoCodec::kVp9;
    case AV_CODEC_ID_AV1:
      return VideoCodec::kAv1;
    case AV_CODEC_ID_MPEG4:
      return VideoCodec::kMpeg4;
    default:
      return VideoCodec::kOther;
  }
}

void QuietFfmpegLogs() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(AV_LOG_FATAL); });
}

}  // namespace conveyor::ops::video
