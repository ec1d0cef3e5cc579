// The CPU backend of the video family (frame_decoder.h): libavcodec decodes, libswscale converts
// to packed RGB uint8 in host memory.
//
// | input (VideoPacket)              | output                                                   |
// |----------------------------------|----------------------------------------------------------|
// | any codec libavcodec decodes:    | RGB uint8, height x width x 3 (the stream's size),       |
// | H.264, HEVC, VP9, AV1 (dav1d),   | 8-bit from any bit depth and chroma format; colours by   |
// | MPEG-4 Part 2, VP8, MJPEG, ...   | the frame's matrix (BT.601 / 709 / 2020) and range; an   |
// |                                  | unspecified matrix is BT.709 from 720 lines up, else 601 |
//
// `threads` (the reader's decoder_threads): libavcodec's frame and slice threads per decoder. The
// reader decodes its clips in parallel on the pipeline's threads, so 1 (the default) usually
// keeps every core busy; more helps when a batch holds fewer clips than cores.
#pragma once

#include <memory>
#include <string>

#include "operators/readers/io/byte_source.h"
#include "operators/video/clip_decoder.h"
#include "operators/video/clip_index.h"
#include "operators/video/frame_decoder.h"
#include "operators/video/video_limits.h"

struct AVCodecParameters;

namespace conveyor::ops::video {

struct CpuDecoderOptions {
  int threads = 1;
  // libavcodec's own bound on a frame's width x height (OpenCpuClipDecoder sets the limits').
  int64_t max_pixels = int64_t{1} << 26;
};

class CpuFrameDecoder final : public FrameDecoder {
 public:
  // Opens libavcodec's decoder for `params` (Demuxer::codec_parameters()). Throws InvalidArgument
  // naming `name` when this FFmpeg has no decoder for the codec or the decoder refuses them.
  CpuFrameDecoder(const AVCodecParameters* params, const VideoStreamInfo& info, std::string name,
                  const CpuDecoderOptions& options);
  ~CpuFrameDecoder() override;

  std::string Describe() const override;
  void Flush() override;
  Sent Send(const VideoPacket* packet, std::string* error) override;
  Received Receive(DecodedFrame* frame, std::string* error) override;
  void Output(uint8_t* dst) override;

 private:
  struct Av;
  std::unique_ptr<Av> av_;
  std::string name_;
};

// A ClipDecoder over `source` with the CPU backend: a fresh Demuxer, checked against `index` (a
// file changed since it was indexed is an error naming it).
std::unique_ptr<ClipDecoder> OpenCpuClipDecoder(std::shared_ptr<const ByteSource> source,
                                                std::shared_ptr<const ClipIndex> index, const VideoLimits& limits,
                                                const CpuDecoderOptions& options);

}  // namespace conveyor::ops::video
