#include "operators/video/cpu_decoder.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include <algorithm>

#include "core/error.h"
#include "operators/video/ffmpeg_util.h"

namespace conveyor::ops::video {
namespace {

int SwsMatrix(const AVFrame* f) {
  switch (f->colorspace) {
    case AVCOL_SPC_BT709:
      return SWS_CS_ITU709;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
      return SWS_CS_ITU601;
    case AVCOL_SPC_SMPTE240M:
      return SWS_CS_SMPTE240M;
    case AVCOL_SPC_FCC:
      return SWS_CS_FCC;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL:
      return SWS_CS_BT2020;
    default:
      return f->height >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601;
  }
}

bool FullRange(const AVFrame* f) {
  switch (f->format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUVJ440P:
      return true;
    default:
      return f->color_range == AVCOL_RANGE_JPEG;
  }
}

}  // namespace

struct CpuFrameDecoder::Av {
  AvCodecContextPtr ctx;
  AvFramePtr frame{av_frame_alloc()};
  AvPacketPtr packet{av_packet_alloc()};
  SwsPtr sws;
  int sws_format = -1, sws_matrix = -1, sws_full_range = -1;
};

CpuFrameDecoder::CpuFrameDecoder(const AVCodecParameters* params, const VideoStreamInfo& info, std::string name,
                                 const CpuDecoderOptions& options)
    : av_(std::make_unique<Av>()), name_(std::move(name)) {
  QuietFfmpegLogs();
  const std::string where = "\"" + name_ + "\": ";
  const AVCodec* codec = avcodec_find_decoder(params->codec_id);
  if (codec == nullptr) {
    throw InvalidArgument(where + "no CPU decoder for codec " + avcodec_get_name(params->codec_id) + " in this FFmpeg");
  }
  av_->ctx.reset(avcodec_alloc_context3(codec));
  if (!av_->ctx) throw InvalidArgument(where + "out of memory opening the decoder");
  int ret = avcodec_parameters_to_context(av_->ctx.get(), params);
  if (ret < 0) throw InvalidArgument(where + "decoder " + codec->name + ": " + AvErrorText(ret));
  av_->ctx->pkt_timebase = AVRational{info.time_base_num, info.time_base_den};
  // Refuse damaged packets instead of concealing them silently: ClipDecoder marks what follows.
  av_->ctx->err_recognition = AV_EF_EXPLODE | AV_EF_CRCCHECK;
  av_->ctx->max_pixels = options.max_pixels;
  av_->ctx->thread_count = std::max(1, options.threads);
  if (options.threads > 1) av_->ctx->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  ret = avcodec_open2(av_->ctx.get(), codec, nullptr);
  if (ret < 0) throw InvalidArgument(where + "decoder " + codec->name + " refuses the stream: " + AvErrorText(ret));
}

CpuFrameDecoder::~CpuFrameDecoder() = default;

std::string CpuFrameDecoder::Describe() const { return std::string("libavcodec ") + av_->ctx->codec->name + " (cpu)"; }

void CpuFrameDecoder::Flush() { avcodec_flush_buffers(av_->ctx.get()); }

FrameDecoder::Sent CpuFrameDecoder::Send(const VideoPacket* packet, std::string* error) {
  int ret;
  if (packet == nullptr) {
    ret = avcodec_send_packet(av_->ctx.get(), nullptr);
  } else {
    AVPacket* pkt = av_->packet.get();
    av_packet_unref(pkt);
    // Not reference-counted: libavcodec copies the bytes (with its padding) before using them.
    pkt->data = const_cast<uint8_t*>(packet->data);
    pkt->size = static_cast<int>(packet->size);
    pkt->pts = packet->pts == kNoTimestamp ? AV_NOPTS_VALUE : packet->pts;
    pkt->dts = packet->dts == kNoTimestamp ? AV_NOPTS_VALUE : packet->dts;
    pkt->flags = (packet->keyframe ? AV_PKT_FLAG_KEY : 0) | (packet->discard ? AV_PKT_FLAG_DISCARD : 0);
    ret = avcodec_send_packet(av_->ctx.get(), pkt);
    pkt->data = nullptr;
    pkt->size = 0;
  }
  if (ret == 0 || ret == AVERROR_EOF) return Sent::kAccepted;
  if (ret == AVERROR(EAGAIN)) return Sent::kFull;
  *error = AvErrorText(ret);
  return Sent::kRejected;
}

FrameDecoder::Received CpuFrameDecoder::Receive(DecodedFrame* out, std::string* error) {
  AVFrame* f = av_->frame.get();
  const int ret = avcodec_receive_frame(av_->ctx.get(), f);
  if (ret == AVERROR(EAGAIN)) return Received::kNeedInput;
  if (ret == AVERROR_EOF) return Received::kDrained;
  if (ret < 0) {
    *error = AvErrorText(ret);
    return Received::kError;
  }
  out->pts = f->pts != AV_NOPTS_VALUE ? f->pts : f->best_effort_timestamp != AV_NOPTS_VALUE ? f->best_effort_timestamp
                                                                                             : INT64_MIN;
  out->width = f->width;
  out->height = f->height;
  out->damaged = (f->flags & AV_FRAME_FLAG_CORRUPT) != 0 || f->decode_error_flags != 0;
  return Received::kFrame;
}

void CpuFrameDecoder::Output(uint8_t* dst) {
  const AVFrame* f = av_->frame.get();
  const int matrix = SwsMatrix(f);
  const int full_range = FullRange(f) ? 1 : 0;
  SwsContext* sws = sws_getCachedContext(av_->sws.release(), f->width, f->height, static_cast<AVPixelFormat>(f->format),
                                         f->width, f->height, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr, nullptr);
  av_->sws.reset(sws);
  if (sws == nullptr) {
    const char* format = av_get_pix_fmt_name(static_cast<AVPixelFormat>(f->format));
    throw InvalidArgument("\"" + name_ + "\": cannot convert pixel format " + (format ? format : "unknown") + " to RGB");
  }
  if (f->format != av_->sws_format || matrix != av_->sws_matrix || full_range != av_->sws_full_range) {
    sws_setColorspaceDetails(sws, sws_getCoefficients(matrix), full_range, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0,
                             1 << 16, 1 << 16);
    av_->sws_format = f->format;
    av_->sws_matrix = matrix;
    av_->sws_full_range = full_range;
  }
  uint8_t* planes[1] = {dst};
  const int strides[1] = {f->width * 3};
  sws_scale(sws, f->data, f->linesize, 0, f->height, planes, strides);
}

std::unique_ptr<ClipDecoder> OpenCpuClipDecoder(std::shared_ptr<const ByteSource> source,
                                                std::shared_ptr<const ClipIndex> index, const VideoLimits& limits,
                                                const CpuDecoderOptions& options) {
  auto demuxer = std::make_unique<Demuxer>(std::move(source), limits);
  const VideoStreamInfo& info = demuxer->info();
  CheckUnchanged(info, *index);
  CpuDecoderOptions bounded = options;
  bounded.max_pixels = std::min(options.max_pixels, limits.max_pixels);
  auto decoder = std::make_unique<CpuFrameDecoder>(demuxer->codec_parameters(), info, index->name, bounded);
  return std::make_unique<ClipDecoder>(std::move(demuxer), std::move(decoder), std::move(index), limits);
}

}  // namespace conveyor::ops::video
