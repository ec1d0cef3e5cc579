#include "operators/video/demux.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "operators/video/ffmpeg_util.h"

namespace conveyor::ops::video {

// Containers whose demuxers are allowed to probe the bytes: the ones the reader supports, each
// with timestamps and an index to seek by. Playlists (HLS, concat) and image sequences, which would
// open other files, are never probed.
constexpr char kFormatWhitelist[] = "mov,matroska,avi,mpegts,flv,ivf";
constexpr int kIoBufferBytes = 64 << 10;

struct Demuxer::Av {
  AVIOContext* io = nullptr;
  AVFormatContext* fmt = nullptr;
  int stream = -1;
  AvBsfPtr bsf;
  AvPacketPtr packet{av_packet_alloc()};
  std::string io_error;  // why the last read callback failed

  ~Av() {
    if (fmt != nullptr) avformat_close_input(&fmt);
    if (io != nullptr) {
      av_freep(&io->buffer);
      avio_context_free(&io);
    }
  }
};

int DemuxerRead(void* opaque, uint8_t* buf, int size) {
  auto* d = static_cast<Demuxer*>(opaque);
  const int64_t left = d->source_->Size() - d->position_;
  const int n = static_cast<int>(std::min<int64_t>(size, left));
  if (n <= 0) return AVERROR_EOF;
  try {
    d->source_->ReadAt(d->position_, buf, n);
  } catch (const std::exception& e) {
    d->av_->io_error = e.what();
    return AVERROR(EIO);
  }
  d->position_ += n;
  return n;
}

int64_t DemuxerSeek(void* opaque, int64_t offset, int whence) {
  auto* d = static_cast<Demuxer*>(opaque);
  const int64_t size = d->source_->Size();
  int64_t to = 0;
  switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE:
      return size;
    case SEEK_SET:
      to = offset;
      break;
    case SEEK_CUR:
      to = d->position_ + offset;
      break;
    case SEEK_END:
      to = size + offset;
      break;
    default:
      return AVERROR(EINVAL);
  }
  if (to < 0 || to > size) return AVERROR(EINVAL);
  d->position_ = to;
  return to;
}

int DemuxerInterrupt(void* opaque) { return static_cast<Demuxer*>(opaque)->DeadlinePassed() ? 1 : 0; }

namespace {

std::string Quoted(const std::string& name) { return "\"" + name + "\""; }

// "2 streams: audio aac, subtitle mov_text": what a file without a video stream holds.
std::string DescribeStreams(const AVFormatContext* fmt) {
  std::string text = std::to_string(fmt->nb_streams) + (fmt->nb_streams == 1 ? " stream" : " streams");
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const AVCodecParameters* p = fmt->streams[i]->codecpar;
    const char* type = av_get_media_type_string(p->codec_type);
    text += std::string(i == 0 ? ": " : ", ") + (type ? type : "unknown") + " " + avcodec_get_name(p->codec_id);
    if (fmt->streams[i]->disposition & AV_DISPOSITION_ATTACHED_PIC) text += " (cover picture)";
  }
  return text;
}

void FillPixelFormat(const AVCodecParameters* p, VideoStreamInfo* info) {
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(p->format));
  if (desc == nullptr) return;  // unknown until decoded: keep the defaults
  info->bit_depth = desc->comp[0].depth;
  if (desc->nb_components < 3) {
    info->chroma_format = 400;
  } else if (desc->log2_chroma_w == 1 && desc->log2_chroma_h == 1) {
    info->chroma_format = 420;
  } else if (desc->log2_chroma_w == 1) {
    info->chroma_format = 422;
  } else {
    info->chroma_format = 444;
  }
}

}  // namespace

Demuxer::Demuxer(std::shared_ptr<const ByteSource> source, const VideoLimits& limits)
    : source_(std::move(source)), limits_(limits) {
  QuietFfmpegLogs();
  // Opening probes and decodes a few frames (avformat_find_stream_info): bounded like any read.
  deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.timeout_ms);
  Open();
  deadline_ = std::chrono::steady_clock::time_point::max();
}

Demuxer::~Demuxer() = default;

const AVCodecParameters* Demuxer::codec_parameters() const {
  return av_->bsf ? av_->bsf->par_out : av_->fmt->streams[av_->stream]->codecpar;
}

std::string Demuxer::format_name() const { return av_->fmt->iformat->name; }

void Demuxer::Open() {
  const std::string where = Quoted(name());
  av_ = std::make_unique<Av>();
  position_ = 0;
  input_done_ = false;
  auto* buffer = static_cast<uint8_t*>(av_malloc(kIoBufferBytes));
  av_->io = avio_alloc_context(buffer, kIoBufferBytes, 0, this, DemuxerRead, nullptr, DemuxerSeek);
  if (av_->io == nullptr) {
    av_free(buffer);
    throw InvalidArgument(where + ": out of memory opening the demuxer");
  }
  av_->fmt = avformat_alloc_context();
  if (av_->fmt == nullptr) throw InvalidArgument(where + ": out of memory opening the demuxer");
  av_->fmt->pb = av_->io;
  av_->fmt->flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_GENPTS;
  av_->fmt->interrupt_callback = AVIOInterruptCB{DemuxerInterrupt, this};
  av_->fmt->format_whitelist = av_strdup(kFormatWhitelist);
  if (source_->Size() == 0) throw InvalidArgument(where + ": empty file (0 bytes)");
  int ret = avformat_open_input(&av_->fmt, nullptr, nullptr, nullptr);  // frees fmt on failure
  if (ret < 0) {
    if (DeadlinePassed()) throw InvalidArgument(where + ": timed out opening the container");
    throw InvalidArgument(where + ": not a video libavformat can read (containers: MP4/MOV, MKV/WebM, AVI, MPEG-TS, " +
                          "FLV, IVF): " + (av_->io_error.empty() ? AvErrorText(ret) : av_->io_error));
  }
  ret = FindStreamInfo();
  if (ret < 0) {
    if (DeadlinePassed()) throw InvalidArgument(where + ": timed out reading the streams' parameters");
    throw InvalidArgument(where + ": cannot read the streams' parameters: " + AvErrorText(ret));
  }
  const int stream = av_find_best_stream(av_->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (stream < 0 || (av_->fmt->streams[stream]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
    throw InvalidArgument(where + ": no video stream (" + DescribeStreams(av_->fmt) + ")");
  }
  av_->stream = stream;
  for (unsigned i = 0; i < av_->fmt->nb_streams; ++i) {
    if (static_cast<int>(i) != stream) av_->fmt->streams[i]->discard = AVDISCARD_ALL;
  }
  const AVStream* st = av_->fmt->streams[stream];
  const AVCodecParameters* p = st->codecpar;
  VideoStreamInfo info;
  info.codec = CodecFromAvId(p->codec_id);
  info.codec_name = avcodec_get_name(p->codec_id);
  info.width = p->width;
  info.height = p->height;
  if (p->width <= 0 || p->height <= 0) {
    throw InvalidArgument(where + ": the " + info.codec_name + " stream declares no frame size (" +
                          std::to_string(p->width) + "x" + std::to_string(p->height) + ")");
  }
  const int64_t pixels = static_cast<int64_t>(p->width) * p->height;
  if (pixels > limits_.max_pixels) {
    throw InvalidArgument(where + ": the " + info.codec_name + " stream declares " + std::to_string(p->width) + "x" +
                          std::to_string(p->height) + " = " + std::to_string(pixels) +
                          " pixels per frame, more than max_pixels " + std::to_string(limits_.max_pixels));
  }
  FillPixelFormat(p, &info);
  info.profile = p->profile;
  if (st->time_base.num <= 0 || st->time_base.den <= 0) {
    throw InvalidArgument(where + ": the video stream has an invalid time base " + std::to_string(st->time_base.num) +
                          "/" + std::to_string(st->time_base.den));
  }
  info.time_base_num = st->time_base.num;
  info.time_base_den = st->time_base.den;
  info.avg_fps = st->avg_frame_rate.den > 0 ? av_q2d(st->avg_frame_rate) : 0.0;
  if (p->extradata != nullptr && p->extradata_size > 0) info.extradata.assign(p->extradata, p->extradata + p->extradata_size);
  info_ = std::move(info);
  ResetFilter();
  const AVCodecParameters* out = codec_parameters();
  if (av_->bsf && out->extradata != nullptr && out->extradata_size > 0) {
    info_.annexb_headers.assign(out->extradata, out->extradata + out->extradata_size);
  }
}

// avformat_find_stream_info decodes a few frames of every stream to learn their parameters: its
// decoders get max_pixels, so a forged frame size is refused before a frame buffer is allocated.
int Demuxer::FindStreamInfo() {
  const unsigned n = av_->fmt->nb_streams;
  std::vector<AVDictionary*> options(n, nullptr);
  const std::string max_pixels = std::to_string(limits_.max_pixels);
  for (unsigned i = 0; i < n; ++i) av_dict_set(&options[i], "max_pixels", max_pixels.c_str(), 0);
  const int ret = avformat_find_stream_info(av_->fmt, n > 0 ? options.data() : nullptr);
  for (AVDictionary*& d : options) av_dict_free(&d);
  return ret;
}

void Demuxer::ResetFilter() {
  const char* filter = info_.codec == VideoCodec::kH264   ? "h264_mp4toannexb"
                       : info_.codec == VideoCodec::kHevc ? "hevc_mp4toannexb"
                                                          : nullptr;
  if (filter == nullptr) return;
  if (av_->bsf) {
    av_bsf_flush(av_->bsf.get());
    return;
  }
  const std::string where = Quoted(name()) + ": bitstream filter " + filter;
  if (info_.codec == VideoCodec::kHevc) CheckHevcParameterSets();
  AVBSFContext* bsf = nullptr;
  int ret = av_bsf_alloc(av_bsf_get_by_name(filter), &bsf);
  if (ret < 0) throw InvalidArgument(where + ": " + AvErrorText(ret));
  av_->bsf.reset(bsf);
  const AVStream* st = av_->fmt->streams[av_->stream];
  ret = avcodec_parameters_copy(bsf->par_in, st->codecpar);
  if (ret < 0) throw InvalidArgument(where + ": " + AvErrorText(ret));
  bsf->time_base_in = st->time_base;
  ret = av_bsf_init(bsf);
  if (ret < 0) throw InvalidArgument(where + ": cannot take the stream's parameter sets: " + AvErrorText(ret));
}

// hevc_mp4toannexb (FFmpeg 5.1) trusts the NAL unit counts of an hvcC record and reallocates once
// per declared unit even past the record's end: a 4 KB file asking for 16 million units costs
// minutes and gigabytes (fuzz/video_demux_fuzz found it). libavcodec's HEVC decoder checks every
// count against the bytes left, so it vets the record first: a record it refuses never reaches
// the filter.
void Demuxer::CheckHevcParameterSets() const {
  const AVCodecParameters* p = av_->fmt->streams[av_->stream]->codecpar;
  if (p->extradata == nullptr || p->extradata_size < 1 || p->extradata[0] != 1) return;  // Annex B
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_HEVC);
  if (codec == nullptr) return;
  AvCodecContextPtr ctx(avcodec_alloc_context3(codec));
  if (!ctx) throw InvalidArgument(Quoted(name()) + ": out of memory checking the HEVC parameter sets");
  int ret = avcodec_parameters_to_context(ctx.get(), p);
  ctx->thread_count = 1;
  ctx->max_pixels = limits_.max_pixels;
  if (ret >= 0) ret = avcodec_open2(ctx.get(), codec, nullptr);
  if (ret < 0) {
    throw InvalidArgument(Quoted(name()) + ": the HEVC stream's parameter sets (hvcC, " +
                          std::to_string(p->extradata_size) + " bytes) are damaged: " + AvErrorText(ret));
  }
}

bool Demuxer::Next(VideoPacket* packet) {
  const std::string where = Quoted(name());
  AVPacket* pkt = av_->packet.get();
  for (;;) {
    if (DeadlinePassed()) throw InvalidArgument(where + ": timed out reading packet " + std::to_string(packets_read_));
    if (av_->bsf) {
      av_packet_unref(pkt);
      const int got = av_bsf_receive_packet(av_->bsf.get(), pkt);
      if (got == 0) break;
      if (got == AVERROR_EOF) return false;
      if (got != AVERROR(EAGAIN)) {
        throw InvalidArgument(where + ": packet " + std::to_string(packets_read_ - 1) + ": bitstream filter " +
                              av_->bsf->filter->name + ": " + AvErrorText(got));
      }
    }
    av_packet_unref(pkt);
    if (input_done_) return false;
    const int ret = av_read_frame(av_->fmt, pkt);
    if (ret == AVERROR_EOF) {
      input_done_ = true;
      if (!av_->bsf) return false;
      av_bsf_send_packet(av_->bsf.get(), nullptr);
      continue;
    }
    if (ret < 0) {
      if (DeadlinePassed()) throw InvalidArgument(where + ": timed out reading packet " + std::to_string(packets_read_));
      throw InvalidArgument(where + ": cannot read packet " + std::to_string(packets_read_) + ": " +
                            (av_->io_error.empty() ? AvErrorText(ret) : av_->io_error));
    }
    if (pkt->stream_index != av_->stream || pkt->size == 0) continue;
    if (pkt->size > limits_.max_packet_bytes) {
      throw InvalidArgument(where + ": packet " + std::to_string(packets_read_) + " has " + std::to_string(pkt->size) +
                            " bytes, more than the limit of " + std::to_string(limits_.max_packet_bytes));
    }
    ++packets_read_;
    if (!av_->bsf) break;
    const int sent = av_bsf_send_packet(av_->bsf.get(), pkt);
    if (sent < 0) {
      throw InvalidArgument(where + ": packet " + std::to_string(packets_read_ - 1) + ": bitstream filter " +
                            av_->bsf->filter->name + ": " + AvErrorText(sent));
    }
  }
  packet->data = pkt->data;
  packet->size = static_cast<size_t>(pkt->size);
  packet->pts = pkt->pts == AV_NOPTS_VALUE ? kNoTimestamp : pkt->pts;
  packet->dts = pkt->dts == AV_NOPTS_VALUE ? kNoTimestamp : pkt->dts;
  packet->keyframe = (pkt->flags & AV_PKT_FLAG_KEY) != 0;
  packet->discard = (pkt->flags & AV_PKT_FLAG_DISCARD) != 0;
  return true;
}

void Demuxer::SeekToKeyframe(int64_t pts) {
  const int ret = av_seek_frame(av_->fmt, av_->stream, pts, AVSEEK_FLAG_BACKWARD);
  if (ret < 0) {
    SeekToStart();
    return;
  }
  input_done_ = false;
  ResetFilter();
}

void Demuxer::SeekToStart() {
  // Reopening is the one way back that works for every demuxer (some cannot seek at all).
  const int64_t read = packets_read_;
  av_.reset();
  Open();
  packets_read_ = read;
}

}  // namespace conveyor::ops::video
