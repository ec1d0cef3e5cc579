// Owners for FFmpeg's handles and its error text: what every .cc of the video family that talks to
// libavformat / libavcodec / libswscale shares. Only .cc files and this header include FFmpeg; the
// family's public headers forward-declare what they hold.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <string>

#include "operators/video/video_types.h"

namespace conveyor::ops::video {

struct AvCodecContextFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct AvFrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct AvPacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct AvBsfFree {
  void operator()(AVBSFContext* b) const { av_bsf_free(&b); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct AvCodecParametersFree {
  void operator()(AVCodecParameters* p) const { avcodec_parameters_free(&p); }
};

using AvCodecContextPtr = std::unique_ptr<AVCodecContext, AvCodecContextFree>;
using AvFramePtr = std::unique_ptr<AVFrame, AvFrameFree>;
using AvPacketPtr = std::unique_ptr<AVPacket, AvPacketFree>;
using AvBsfPtr = std::unique_ptr<AVBSFContext, AvBsfFree>;
using SwsPtr = std::unique_ptr<SwsContext, SwsFree>;
using AvCodecParametersPtr = std::unique_ptr<AVCodecParameters, AvCodecParametersFree>;

// av_strerror's text for an AVERROR code ("Invalid data found when processing input").
std::string AvErrorText(int error);

VideoCodec CodecFromAvId(AVCodecID id);

// Keeps FFmpeg's own logging to errors only (once per process): its messages would otherwise go to
// stderr per damaged packet; ours name the file and frame instead.
void QuietFfmpegLogs();

}  // namespace conveyor::ops::video
