#include "operators/video/video_types.h"

namespace conveyor::ops::video {

const char* VideoCodecName(VideoCodec c) {
  switch (c) {
    case VideoCodec::kH264:
      return "h264";
    case VideoCodec::kHevc:
      return "hevc";
    case VideoCodec::kVp9:
      return "vp9";
    case VideoCodec::kAv1:
      return "av1";
    case VideoCodec::kMpeg4:
      return "mpeg4";
    case VideoCodec::kOther:
      break;
  }
  return "other";
}

}  // namespace conveyor::ops::video
