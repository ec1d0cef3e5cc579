#include "tools/make_test_videos/test_video.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <cmath>
#include <map>
#include <memory>
#include <random>

#include "tools/make_test_videos/frame_code.h"

namespace conveyor::testvideos {
namespace {

std::string AvText(int error) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(error, text, sizeof(text));
  return text;
}

void Check(int error, const std::string& what) {
  if (error < 0) throw std::runtime_error(what + ": " + AvText(error));
}

const char* MuxerName(const std::string& container) {
  if (container == "mp4") return "mp4";
  if (container == "mkv") return "matroska";
  if (container == "webm") return "webm";
  if (container == "avi") return "avi";
  throw std::runtime_error("unknown container \"" + container + "\" (expected mp4, mkv, webm or avi)");
}

struct CodecContextFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
struct DictFree {
  void operator()(AVDictionary* d) const { av_dict_free(&d); }
};

// An output file: the muxer context and its AVIO, closed and freed together.
class Muxer {
 public:
  Muxer(const std::string& path, const std::string& container) : path_(path) {
    Check(avformat_alloc_output_context2(&fmt_, nullptr, MuxerName(container), path.c_str()),
          "\"" + path + "\": muxer " + container);
  }
  ~Muxer() {
    if (fmt_ == nullptr) return;
    if (fmt_->pb != nullptr) avio_closep(&fmt_->pb);
    avformat_free_context(fmt_);
  }
  Muxer(const Muxer&) = delete;
  Muxer& operator=(const Muxer&) = delete;

  AVFormatContext* get() const { return fmt_; }
  bool global_header() const { return (fmt_->oformat->flags & AVFMT_GLOBALHEADER) != 0; }

  AVStream* AddStream(const AVCodecContext* enc) {
    AVStream* st = avformat_new_stream(fmt_, nullptr);
    if (st == nullptr) throw std::runtime_error("\"" + path_ + "\": cannot add a stream");
    Check(avcodec_parameters_from_context(st->codecpar, enc), "\"" + path_ + "\": stream parameters");
    st->time_base = enc->time_base;
    return st;
  }
  void Begin() {
    Check(avio_open(&fmt_->pb, path_.c_str(), AVIO_FLAG_WRITE), "\"" + path_ + "\": open for writing");
    Check(avformat_write_header(fmt_, nullptr), "\"" + path_ + "\": container header");
  }
  // Moves every packet the encoder has ready into the file. `durations` (pts -> duration, encoder
  // time base) gives each packet its frame's duration: MP4's edit list ends after the last one.
  void Drain(AVCodecContext* enc, AVStream* st, const std::map<int64_t, int64_t>* durations = nullptr) {
    std::unique_ptr<AVPacket, PacketFree> pkt(av_packet_alloc());
    for (;;) {
      const int got = avcodec_receive_packet(enc, pkt.get());
      if (got == AVERROR(EAGAIN) || got == AVERROR_EOF) return;
      Check(got, "\"" + path_ + "\": encoder");
      if (durations != nullptr) {
        const auto it = durations->find(pkt->pts);
        if (it != durations->end()) pkt->duration = it->second;
      }
      av_packet_rescale_ts(pkt.get(), enc->time_base, st->time_base);
      pkt->stream_index = st->index;
      Check(av_interleaved_write_frame(fmt_, pkt.get()), "\"" + path_ + "\": writing a packet");
    }
  }
  void End() { Check(av_write_trailer(fmt_), "\"" + path_ + "\": container trailer"); }

 private:
  std::string path_;
  AVFormatContext* fmt_ = nullptr;
};

// Encoder-specific options: fixed GOPs (no scene cuts), B-frames exactly as asked, quality high
// enough that the frame code survives, one thread (reproducible output).
void SetEncoderOptions(const std::string& encoder, const TestVideoOptions& o, AVCodecContext* enc,
                       AVDictionary** opts) {
  const std::string gop = std::to_string(o.gop), b = std::to_string(o.b_frames);
  if (encoder == "libx264") {
    av_dict_set(opts, "preset", "veryfast", 0);
    av_dict_set(opts, "crf", "20", 0);
    const std::string params = "keyint=" + gop + ":min-keyint=" + gop + ":scenecut=0:bframes=" + b +
                               ":b-adapt=0:open-gop=" + (o.open_gop ? "1" : "0") + ":log=-1";
    av_dict_set(opts, "x264-params", params.c_str(), 0);
  } else if (encoder == "libx265") {
    av_dict_set(opts, "preset", "ultrafast", 0);
    av_dict_set(opts, "crf", "22", 0);
    const std::string params = "keyint=" + gop + ":min-keyint=" + gop + ":scenecut=0:bframes=" + b +
                               ":b-adapt=0:open-gop=" + (o.open_gop ? "1" : "0") +
                               ":log-level=error:frame-threads=1:pools=none";
    av_dict_set(opts, "x265-params", params.c_str(), 0);
  } else if (encoder == "libvpx-vp9") {
    enc->bit_rate = 0;
    enc->keyint_min = o.gop;
    av_dict_set(opts, "crf", "28", 0);
    av_dict_set(opts, "deadline", "good", 0);
    av_dict_set(opts, "cpu-used", "8", 0);
    av_dict_set(opts, "lag-in-frames", o.b_frames > 0 ? "16" : "0", 0);
    av_dict_set(opts, "auto-alt-ref", o.b_frames > 0 ? "1" : "0", 0);
  } else if (encoder == "libaom-av1") {
    enc->keyint_min = o.gop;
    av_dict_set(opts, "crf", "30", 0);
    av_dict_set(opts, "cpu-used", "8", 0);
    av_dict_set(opts, "lag-in-frames", o.b_frames > 0 ? "16" : "0", 0);
    av_dict_set(opts, "auto-alt-ref", o.b_frames > 0 ? "1" : "0", 0);
  } else if (encoder == "libsvtav1") {
    av_dict_set(opts, "preset", "12", 0);
    av_dict_set(opts, "crf", "30", 0);
  } else if (encoder == "librav1e") {
    av_dict_set(opts, "speed", "10", 0);
    av_dict_set(opts, "qp", "80", 0);
  } else if (encoder == "mpeg4") {
    enc->flags |= AV_CODEC_FLAG_QSCALE;
    enc->global_quality = FF_QP2LAMBDA * 3;
  }
}

std::vector<int64_t> FramePts(const TestVideoOptions& o) {
  std::vector<int64_t> pts(static_cast<size_t>(o.frames));
  if (!o.vfr) {
    for (int n = 0; n < o.frames; ++n) pts[static_cast<size_t>(n)] = n;
    return pts;
  }
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  int64_t t = 0;
  for (int n = 0; n < o.frames; ++n) {
    pts[static_cast<size_t>(n)] = t;
    t += std::max<int64_t>(1, std::llround(1000.0 / o.fps * jitter(rng)));
  }
  return pts;
}

std::unique_ptr<AVCodecContext, CodecContextFree> OpenVideoEncoder(const TestVideoOptions& o, bool global_header,
                                                                   std::string* encoder_name) {
  *encoder_name = EncoderFor(o.codec);
  if (encoder_name->empty()) throw std::runtime_error("no encoder for codec \"" + o.codec + "\" in this FFmpeg");
  const AVCodec* codec = avcodec_find_encoder_by_name(encoder_name->c_str());
  std::unique_ptr<AVCodecContext, CodecContextFree> enc(avcodec_alloc_context3(codec));
  enc->width = o.width;
  enc->height = o.height;
  enc->pix_fmt = AV_PIX_FMT_YUV420P;
  enc->time_base = o.vfr ? AVRational{1, 1000} : AVRational{1, o.fps};
  enc->framerate = AVRational{o.fps, 1};
  enc->gop_size = o.gop;
  enc->max_b_frames = o.b_frames;
  enc->thread_count = 1;
  if (global_header) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  AVDictionary* raw = nullptr;
  SetEncoderOptions(*encoder_name, o, enc.get(), &raw);
  Check(avcodec_open2(enc.get(), codec, &raw), "encoder " + *encoder_name);
  std::unique_ptr<AVDictionary, DictFree> left(raw);
  if (const AVDictionaryEntry* e = av_dict_get(left.get(), "", nullptr, AV_DICT_IGNORE_SUFFIX)) {
    throw std::runtime_error("encoder " + *encoder_name + " does not take option \"" + e->key + "\"");
  }
  return enc;
}

// The encoders' banners (x264's options line, libvpx's version) are not test output.
void QuietLogs() {
  if (av_log_get_level() > AV_LOG_ERROR) av_log_set_level(AV_LOG_ERROR);
}

void CheckOptions(const TestVideoOptions& o) {
  if (o.width < 16 || o.height < 16 || o.width % 2 != 0 || o.height % 2 != 0) {
    throw std::runtime_error("size " + std::to_string(o.width) + "x" + std::to_string(o.height) +
                             ": expected even sides of at least 16");
  }
  if (o.frames < 0 || o.gop < 1 || o.b_frames < 0 || o.fps < 1 || o.first_frame < 0 ||
      o.first_frame + o.frames > (1 << kFrameCodeBits)) {
    throw std::runtime_error("frames, gop, b_frames, fps or first_frame out of range");
  }
  if (o.vfr && o.container == "avi") throw std::runtime_error("avi has no variable frame rate");
}

}  // namespace

std::string EncoderFor(const std::string& codec) {
  std::vector<const char*> names;
  if (codec == "h264") names = {"libx264"};
  if (codec == "hevc") names = {"libx265"};
  if (codec == "vp9") names = {"libvpx-vp9"};
  if (codec == "av1") names = {"libaom-av1", "libsvtav1", "librav1e"};
  if (codec == "mpeg4") names = {"mpeg4"};
  for (const char* name : names) {
    if (avcodec_find_encoder_by_name(name) != nullptr) return name;
  }
  return "";
}

TestVideo WriteTestVideo(const std::string& path, const TestVideoOptions& o) {
  CheckOptions(o);
  QuietLogs();
  Muxer mux(path, o.container);
  TestVideo video;
  video.path = path;
  auto enc = OpenVideoEncoder(o, mux.global_header(), &video.encoder);
  AVStream* st = mux.AddStream(enc.get());
  mux.Begin();

  std::unique_ptr<SwsContext, SwsFree> sws(sws_getContext(o.width, o.height, AV_PIX_FMT_RGB24, o.width, o.height,
                                                          AV_PIX_FMT_YUV420P, SWS_BICUBIC, nullptr, nullptr, nullptr));
  std::unique_ptr<AVFrame, FrameFree> frame(av_frame_alloc());
  frame->format = AV_PIX_FMT_YUV420P;
  frame->width = o.width;
  frame->height = o.height;
  Check(av_frame_get_buffer(frame.get(), 0), "frame buffer");
  std::vector<uint8_t> rgb(static_cast<size_t>(o.width) * static_cast<size_t>(o.height) * 3);
  const std::vector<int64_t> pts = FramePts(o);
  std::map<int64_t, int64_t> durations;
  for (size_t n = 0; n < pts.size(); ++n) {
    durations[pts[n]] = n + 1 < pts.size() ? pts[n + 1] - pts[n] : (o.vfr ? std::llround(1000.0 / o.fps) : 1);
  }
  for (int n = 0; n < o.frames; ++n) {
    DrawTestFrame(o.first_frame + n, o.width, o.height, rgb.data(), o.width * 3);
    if (o.detail) AddTestDetail(o.first_frame + n, o.seed, o.width, o.height, rgb.data(), o.width * 3);
    Check(av_frame_make_writable(frame.get()), "frame buffer");
    const uint8_t* src[1] = {rgb.data()};
    const int src_stride[1] = {o.width * 3};
    sws_scale(sws.get(), src, src_stride, 0, o.height, frame->data, frame->linesize);
    frame->pts = pts[static_cast<size_t>(n)];
    Check(avcodec_send_frame(enc.get(), frame.get()), "\"" + path + "\": encoding frame " + std::to_string(n));
    mux.Drain(enc.get(), st, &durations);
  }
  Check(avcodec_send_frame(enc.get(), nullptr), "\"" + path + "\": flushing the encoder");
  mux.Drain(enc.get(), st, &durations);
  mux.End();
  for (int64_t p : pts) video.timestamps.push_back(o.vfr ? static_cast<double>(p) / 1000.0 : static_cast<double>(p) / o.fps);
  return video;
}

void WriteAudioOnly(const std::string& path) {
  QuietLogs();
  Muxer mux(path, "mkv");
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PCM_S16LE);
  std::unique_ptr<AVCodecContext, CodecContextFree> enc(avcodec_alloc_context3(codec));
  enc->sample_rate = 8000;
  enc->sample_fmt = AV_SAMPLE_FMT_S16;
  av_channel_layout_default(&enc->ch_layout, 1);
  enc->time_base = AVRational{1, 8000};
  Check(avcodec_open2(enc.get(), codec, nullptr), "encoder pcm_s16le");
  AVStream* st = mux.AddStream(enc.get());
  mux.Begin();
  std::unique_ptr<AVFrame, FrameFree> frame(av_frame_alloc());
  frame->format = AV_SAMPLE_FMT_S16;
  frame->sample_rate = 8000;
  frame->nb_samples = 800;
  Check(av_channel_layout_copy(&frame->ch_layout, &enc->ch_layout), "channel layout");
  Check(av_frame_get_buffer(frame.get(), 0), "audio buffer");
  for (int k = 0; k < 10; ++k) {
    Check(av_frame_make_writable(frame.get()), "audio buffer");
    auto* s = reinterpret_cast<int16_t*>(frame->data[0]);
    for (int i = 0; i < frame->nb_samples; ++i) s[i] = static_cast<int16_t>(8000 * std::sin(0.05 * (k * 800 + i)));
    frame->pts = k * 800;
    Check(avcodec_send_frame(enc.get(), frame.get()), "encoding audio");
    mux.Drain(enc.get(), st);
  }
  Check(avcodec_send_frame(enc.get(), nullptr), "flushing audio");
  mux.Drain(enc.get(), st);
  mux.End();
}

void WriteVideoWithoutFrames(const std::string& path, const std::string& codec, const std::string& container) {
  TestVideoOptions o;
  o.codec = codec;
  o.container = container;
  o.frames = 0;
  CheckOptions(o);
  QuietLogs();
  Muxer mux(path, container);
  std::string encoder;
  auto enc = OpenVideoEncoder(o, mux.global_header(), &encoder);
  mux.AddStream(enc.get());
  mux.Begin();
  mux.End();
}

}  // namespace conveyor::testvideos
