#include "operators/video/nvdec/nvdec_decoder.h"

#include <algorithm>

#include "operators/video/demux.h"
#include "operators/video/nvdec/nv12_to_rgb.h"
#include "operators/video/nvdec/nv12_to_rgb_gpu.h"
#include "operators/video/nvdec/nvdec_loader.h"
#include "operators/video/nvdec/nvdec_sessions.h"

namespace conveyor::ops::video {
namespace {

constexpr unsigned kMaxSurfaces = 32;  // NVDEC's limit on decode surfaces

bool CodecFor(VideoCodec c, cudaVideoCodec* out) {
  switch (c) {
    case VideoCodec::kH264: *out = cudaVideoCodec_H264; return true;
    case VideoCodec::kHevc: *out = cudaVideoCodec_HEVC; return true;
    case VideoCodec::kVp9: *out = cudaVideoCodec_VP9; return true;
    case VideoCodec::kAv1: *out = cudaVideoCodec_AV1; return true;
    default: return false;
  }
}

}  // namespace

struct NvdecFrameDecoder::Impl {
  struct Shown {
    int index = -1, progressive = 1, top_field_first = 0;
    int64_t pts = INT64_MIN;
  };

  const NvdecApi* api = nullptr;
  VideoStreamInfo info;
  std::string name;
  NvdecOptions options;
  cudaVideoCodec codec = cudaVideoCodec_H264;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CUvideoparser parser = nullptr;
  std::unique_ptr<NvdecSession> session;  // the decoder and the stream frames are converted on
  bool session_healthy = true;            // false after a failed cuvid / CUDA call: never reused
  YuvToRgb matrix{};
  int width = 0, height = 0;        // display area = output size
  bool p016 = false;
  std::deque<Shown> shown;          // display queue (presentation order)
  Shown current;
  bool drained = false;
  bool headers_pending = false;
  std::vector<uint8_t> headers;     // parameter sets fed in front of the first packet after a Flush
  std::vector<uint8_t> joined;
  std::string callback_error;       // set by a callback that failed; `fatal`: the stream is unusable
  bool fatal = false;

  std::string Where() const { return "\"" + name + "\": NVDEC " + info.codec_name + ": "; }

  ~Impl() {
    if (api == nullptr || ctx == nullptr) return;
    {
      NvdecContextScope scope(api, ctx);
      if (parser != nullptr) api->cuvid->cuvidDestroyVideoParser(parser);
    }
    ReleaseSession();
    api->cu->cuDevicePrimaryCtxRelease(device);
  }

  // "" when the engines take a 4:2:0 stream of this codec, depth and coded size, else why not.
  std::string Refuses(cudaVideoCodec c, int bit_depth, unsigned w, unsigned h) {
    CUVIDDECODECAPS caps{};
    CUresult r;
    {
      NvdecContextScope scope(api, ctx);
      r = DecoderCaps(*api, device, c, bit_depth, &caps);
    }
    const std::string what = info.codec_name + " 4:2:0 " + std::to_string(bit_depth) + "-bit";
    if (r != CUDA_SUCCESS) return CuResultText(*api, r, "cuvidGetDecoderCaps");
    if (!caps.bIsSupported) return "this GPU's NVDEC does not decode " + what;
    const unsigned surface = bit_depth > 8 ? cudaVideoSurfaceFormat_P016 : cudaVideoSurfaceFormat_NV12;
    if ((caps.nOutputFormatMask & (1u << surface)) == 0) return "this GPU's NVDEC has no suitable output format for " + what;
    const uint64_t mbs = uint64_t{(w + 15) / 16} * ((h + 15) / 16);
    if (w > caps.nMaxWidth || h > caps.nMaxHeight || mbs > caps.nMaxMBCount || w < caps.nMinWidth || h < caps.nMinHeight) {
      return "this GPU's NVDEC takes " + what + " from " + std::to_string(caps.nMinWidth) + "x" +
             std::to_string(caps.nMinHeight) + " to " + std::to_string(caps.nMaxWidth) + "x" +
             std::to_string(caps.nMaxHeight) + " (" + std::to_string(caps.nMaxMBCount) + " macroblocks), not " +
             std::to_string(w) + "x" + std::to_string(h);
    }
    return "";
  }

  void CreateParser() {
    CUVIDPARSERPARAMS p{};
    p.CodecType = codec;
    p.ulMaxNumDecodeSurfaces = 1;  // the sequence callback returns the stream's need
    p.ulErrorThreshold = 100;      // decode damaged pictures too: cuvidGetDecodeStatus flags them
    // Frames decoded ahead of the one shown: the engine works on them while it is converted.
    p.ulMaxDisplayDelay = static_cast<unsigned>(std::max(0, options.display_delay));
    p.pUserData = this;
    p.pfnSequenceCallback = [](void* user, CUVIDEOFORMAT* f) { return static_cast<Impl*>(user)->OnSequence(f); };
    p.pfnDecodePicture = [](void* user, CUVIDPICPARAMS* pic) { return static_cast<Impl*>(user)->OnDecode(pic); };
    p.pfnDisplayPicture = [](void* user, CUVIDPARSERDISPINFO* d) { return static_cast<Impl*>(user)->OnDisplay(d); };
    NvdecContextScope scope(api, ctx);
    const CUresult r = api->cuvid->cuvidCreateVideoParser(&parser, &p);
    if (r != CUDA_SUCCESS) {
      parser = nullptr;
      throw InvalidArgument(Where() + CuResultText(*api, r, "cuvidCreateVideoParser"));
    }
  }

  void Fail(const std::string& why, bool is_fatal) {
    if (callback_error.empty()) callback_error = why;
    fatal = fatal || is_fatal;
  }

  // Returns the session (our decoder) to the cache for the next file of its format, or destroys it
  // when there is no cache or a call on it failed.
  void ReleaseSession() {
    if (session == nullptr) return;
    if (session_healthy && options.sessions != nullptr) {
      options.sessions->Give(std::move(session));
    }
    session.reset();
    session_healthy = true;
  }

  int OnSequence(CUVIDEOFORMAT* f) {
    const int w = f->display_area.right - f->display_area.left;
    const int h = f->display_area.bottom - f->display_area.top;
    if (f->chroma_format != cudaVideoChromaFormat_420) {
      Fail("the stream switched to a chroma format other than 4:2:0", true);
      return 0;
    }
    const int depth = 8 + f->bit_depth_luma_minus8;
    const std::string refused = Refuses(f->codec, depth, f->coded_width, f->coded_height);
    if (!refused.empty()) {
      Fail(refused, true);
      return 0;
    }
    if (w <= 0 || h <= 0 || (w % 2) != 0 || (h % 2) != 0) {
      Fail("display area " + std::to_string(w) + "x" + std::to_string(h) + " (NVDEC's output needs even sizes)", true);
      return 0;
    }
    // The parser holds display_delay decoded frames beyond the stream's references.
    const unsigned slack =
        static_cast<unsigned>(std::max(0, options.display_delay) + std::max(0, options.extra_surfaces));
    const unsigned surfaces = std::min<unsigned>(kMaxSurfaces, f->min_num_decode_surfaces + slack);
    const CUVIDDECODECREATEINFO want = CreateInfo(*f, w, h, surfaces);
    // A new parser (Flush) over the same stream keeps the session; another format needs another.
    if (session == nullptr || !CompatibleSession(session->created(), want)) {
      if (session != nullptr && !shown.empty()) {
        // Their surfaces belong to the session being replaced.
        Fail("the stream's format changed with frames of the previous format not yet output", true);
        return 0;
      }
      ReleaseSession();
      if (options.sessions != nullptr) session = options.sessions->Take(device, want);
      if (session == nullptr) {
        std::string why;
        session = options.sessions != nullptr ? options.sessions->Create(*api, device, want, &why)
                                              : NvdecSession::Create(*api, device, want, &why);
        if (session == nullptr) {
          Fail(why + " (" + std::to_string(f->coded_width) + "x" + std::to_string(f->coded_height) + ", " +
                   std::to_string(surfaces) + " surfaces)",
               true);
          return 0;
        }
      }
    }
    width = w;
    height = h;
    p016 = depth > 8;
    matrix = YuvToRgbFor(MatrixFromH273(f->video_signal_description.matrix_coefficients, h),
                         f->video_signal_description.video_full_range_flag != 0);
    // The parser cycles through as many surfaces as the session has (at least `surfaces`).
    return static_cast<int>(session->created().ulNumDecodeSurfaces);
  }

  static CUVIDDECODECREATEINFO CreateInfo(const CUVIDEOFORMAT& f, int w, int h, unsigned surfaces) {
    CUVIDDECODECREATEINFO ci{};
    ci.ulWidth = f.coded_width;
    ci.ulHeight = f.coded_height;
    ci.ulNumDecodeSurfaces = surfaces;
    ci.CodecType = f.codec;
    ci.ChromaFormat = f.chroma_format;
    ci.ulCreationFlags = cudaVideoCreate_PreferCUVID;
    ci.bitDepthMinus8 = f.bit_depth_luma_minus8;
    ci.ulMaxWidth = f.coded_width;
    ci.ulMaxHeight = f.coded_height;
    ci.display_area.left = static_cast<short>(f.display_area.left);
    ci.display_area.top = static_cast<short>(f.display_area.top);
    ci.display_area.right = static_cast<short>(f.display_area.right);
    ci.display_area.bottom = static_cast<short>(f.display_area.bottom);
    ci.OutputFormat = f.bit_depth_luma_minus8 > 0 ? cudaVideoSurfaceFormat_P016 : cudaVideoSurfaceFormat_NV12;
    ci.DeinterlaceMode = f.progressive_sequence ? cudaVideoDeinterlaceMode_Weave : cudaVideoDeinterlaceMode_Adaptive;
    ci.ulTargetWidth = static_cast<unsigned>(w);
    ci.ulTargetHeight = static_cast<unsigned>(h);
    ci.ulNumOutputSurfaces = 2;
    return ci;
  }

  int OnDecode(CUVIDPICPARAMS* pic) {
    if (session == nullptr) {
      Fail("a picture before the sequence header", false);
      return 0;
    }
    for (const Shown& s : shown) {
      if (s.index == pic->CurrPicIdx) {
        Fail("decode surface " + std::to_string(s.index) + " reused before its frame was output", true);
        return 0;
      }
    }
    const CUresult r = api->cuvid->cuvidDecodePicture(session->decoder(), pic);
    if (r != CUDA_SUCCESS) {
      session_healthy = false;
      Fail(CuResultText(*api, r, "cuvidDecodePicture"), false);
      return 0;
    }
    return 1;
  }

  int OnDisplay(CUVIDPARSERDISPINFO* d) {
    if (d == nullptr) {  // end of stream
      drained = true;
      return 1;
    }
    Shown s;
    s.index = d->picture_index;
    s.progressive = d->progressive_frame;
    s.top_field_first = d->top_field_first;
    s.pts = d->timestamp;
    shown.push_back(s);
    return 1;
  }

  // The packet's bytes, with the parameter sets in front after a Flush (AV1: after the temporal
  // delimiter OBU that starts a temporal unit).
  const uint8_t* WithHeaders(const VideoPacket& packet, size_t* size) {
    *size = packet.size;
    if (!headers_pending || headers.empty() || !packet.keyframe) return packet.data;
    headers_pending = false;
    joined.clear();
    size_t at = 0;
    if (codec == cudaVideoCodec_AV1 && packet.size >= 2 && packet.data[0] == 0x12 && packet.data[1] == 0x00) at = 2;
    joined.insert(joined.end(), packet.data, packet.data + at);
    joined.insert(joined.end(), headers.begin(), headers.end());
    joined.insert(joined.end(), packet.data + at, packet.data + packet.size);
    *size = joined.size();
    return joined.data();
  }
};

NvdecFrameDecoder::NvdecFrameDecoder(const VideoStreamInfo& info, std::string name, NvdecOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.info = info;
  m.name = std::move(name);
  m.options = std::move(options);
  std::string why;
  const NvdecApi* api = SharedNvdec(&why);
  if (api == nullptr) throw NvdecUnsupported("NVDEC unavailable: " + why);
  if (!CodecFor(info.codec, &m.codec)) throw NvdecUnsupported("NVDEC does not decode " + info.codec_name + " here");
  if (info.chroma_format != 420) {
    throw NvdecUnsupported("NVDEC decodes 4:2:0 here, the stream is " + std::to_string(info.chroma_format));
  }
  if (info.width % 2 != 0 || info.height % 2 != 0) {
    throw NvdecUnsupported("NVDEC's output needs even sizes, the stream is " + std::to_string(info.width) + "x" +
                           std::to_string(info.height));
  }
  const int runtime_device = RuntimeDevice(&why);
  if (runtime_device < 0) throw NvdecUnsupported("no CUDA device for NVDEC: " + why);
  CUresult r = api->cu->cuDeviceGet(&m.device, runtime_device);
  if (r == CUDA_SUCCESS) r = api->cu->cuDevicePrimaryCtxRetain(&m.ctx, m.device);
  if (r != CUDA_SUCCESS) throw NvdecUnsupported(CuResultText(*api, r, "cuDevicePrimaryCtxRetain"));
  m.api = api;  // from here on ~Impl releases the context
  const std::string refused = m.Refuses(m.codec, info.bit_depth, static_cast<unsigned>(info.width),
                                        static_cast<unsigned>(info.height));
  if (!refused.empty()) throw NvdecUnsupported(refused);
  if (info.codec == VideoCodec::kH264 || info.codec == VideoCodec::kHevc) {
    m.headers = info.annexb_headers;
  } else if (info.codec == VideoCodec::kAv1 && info.extradata.size() > 4 && (info.extradata[0] & 0x80) != 0) {
    m.headers.assign(info.extradata.begin() + 4, info.extradata.end());  // av1C's configOBUs
  }
  m.CreateParser();
  m.headers_pending = true;
}

NvdecFrameDecoder::~NvdecFrameDecoder() = default;

std::string NvdecFrameDecoder::Describe() const { return "nvdec " + impl_->info.codec_name + " (gpu)"; }

void NvdecFrameDecoder::Flush() {
  Impl& m = *impl_;
  {
    NvdecContextScope scope(m.api, m.ctx);
    if (m.parser != nullptr) m.api->cuvid->cuvidDestroyVideoParser(m.parser);
    m.parser = nullptr;
  }
  m.shown.clear();
  m.drained = false;
  m.callback_error.clear();
  m.fatal = false;
  m.headers_pending = true;
  m.CreateParser();
}

FrameDecoder::Sent NvdecFrameDecoder::Send(const VideoPacket* packet, std::string* error) {
  Impl& m = *impl_;
  if (!m.shown.empty()) return Sent::kFull;  // frames first: their surfaces must not be reused
  if (m.parser == nullptr) m.CreateParser();
  m.callback_error.clear();
  CUVIDSOURCEDATAPACKET p{};
  if (packet == nullptr) {
    p.flags = CUVID_PKT_ENDOFSTREAM;
  } else {
    size_t size = 0;
    p.payload = m.WithHeaders(*packet, &size);
    p.payload_size = static_cast<tcu_ulong>(size);
    if (packet->pts != kNoTimestamp) {
      p.flags = CUVID_PKT_TIMESTAMP;
      p.timestamp = packet->pts;
    }
  }
  CUresult r;
  {
    NvdecContextScope scope(m.api, m.ctx);
    r = m.api->cuvid->cuvidParseVideoData(m.parser, &p);
  }
  const std::string at = packet == nullptr ? std::string("at the end of the stream")
                                           : "at the packet with pts " +
                                                 (packet->pts == kNoTimestamp ? std::string("(none)") : std::to_string(packet->pts));
  if (m.fatal) throw InvalidArgument(m.Where() + at + ": " + m.callback_error);
  if (packet == nullptr) m.drained = true;
  if (!m.callback_error.empty()) {
    *error = m.callback_error;
    return Sent::kRejected;
  }
  if (r != CUDA_SUCCESS) {
    *error = CuResultText(*m.api, r, "cuvidParseVideoData");
    return Sent::kRejected;
  }
  return Sent::kAccepted;
}

FrameDecoder::Received NvdecFrameDecoder::Receive(DecodedFrame* frame, std::string* error) {
  (void)error;
  Impl& m = *impl_;
  if (m.shown.empty()) return m.drained ? Received::kDrained : Received::kNeedInput;
  m.current = m.shown.front();
  m.shown.pop_front();
  frame->pts = m.current.pts;
  frame->width = m.width;
  frame->height = m.height;
  frame->damaged = false;
  if (m.session == nullptr) {  // a picture shown without a decoder: nothing to trust
    frame->damaged = true;
    return Received::kFrame;
  }
  CUVIDGETDECODESTATUS status{};
  CUresult r;
  {
    NvdecContextScope scope(m.api, m.ctx);
    r = m.api->cuvid->cuvidGetDecodeStatus(m.session->decoder(), m.current.index, &status);
  }
  // Not every codec reports a status (CUDA_ERROR_NOT_SUPPORTED): only a reported error counts.
  if (r == CUDA_SUCCESS && (status.decodeStatus == cuvidDecodeStatus_Error ||
                            status.decodeStatus == cuvidDecodeStatus_Error_Concealed)) {
    frame->damaged = true;
  }
  return Received::kFrame;
}

void NvdecFrameDecoder::Output(uint8_t* dst) {
  Impl& m = *impl_;
  if (m.session == nullptr) throw InvalidArgument(m.Where() + "Output without a decoded frame");
  OutputStream& out = m.session->stream();
  const auto failed = [&](const std::string& problem) {
    m.session_healthy = false;
    return InvalidArgument(m.Where() + "frame with pts " + std::to_string(m.current.pts) + ": " + problem);
  };
  NvdecContextScope scope(m.api, m.ctx);
  // The destination may still be in use by the work queued on the caller's stream.
  std::string problem = out.After(m.options.stream->stream.load());
  if (!problem.empty()) throw failed(problem);
  CUVIDPROCPARAMS pp{};
  pp.progressive_frame = m.current.progressive;
  pp.top_field_first = m.current.top_field_first;
  pp.output_stream = static_cast<CUstream>(out.get());
  CUdeviceptr frame = 0;
  unsigned int pitch = 0;
  const CUresult r = m.api->cuvid->cuvidMapVideoFrame(m.session->decoder(), m.current.index, &frame, &pitch, &pp);
  if (r != CUDA_SUCCESS) throw failed(CuResultText(*m.api, r, "cuvidMapVideoFrame"));
  Nv12Planes planes;
  planes.luma = reinterpret_cast<const uint8_t*>(frame);
  planes.chroma = planes.luma + static_cast<size_t>(pitch) * ((m.session->created().ulTargetHeight + 1) & ~1ul);
  planes.pitch = pitch;
  planes.width = m.width;
  planes.height = m.height;
  planes.bytes_per_sample = m.p016 ? 2 : 1;
  problem = Nv12ToRgbGpu(planes, m.matrix, dst, out.get());
  // The surface may be unmapped (and reused by the decoder) only once the kernel read it; waiting
  // here also makes the frame final before the caller's stream goes on (no event back to it).
  if (problem.empty()) problem = out.Wait();
  m.api->cuvid->cuvidUnmapVideoFrame(m.session->decoder(), frame);
  if (!problem.empty()) throw failed(problem);
}

std::shared_ptr<NvdecSessionCache> NewNvdecSessionCache() { return std::make_shared<NvdecSessionCache>(); }

NvdecSessionStats SessionStats(const NvdecSessionCache& cache) {
  NvdecSessionStats s;
  s.created = cache.created();
  s.reused = cache.reused();
  s.idle = cache.idle();
  return s;
}

}  // namespace conveyor::ops::video
