// FrameDecoder: the decode step behind the clip logic — packets in, frames in presentation order
// out, each written as RGB where the caller says. The CPU backend is libavcodec + libswscale
// (cpu_decoder.h); NVDEC slots in as a second implementation without touching ClipDecoder.
//
//                         ClipDecoder (clip_decoder.h): which keyframe, seek, which frames to keep,
//                         retries, limits, deadline — shared by every backend
//                            │ Flush / Send(packet) / Receive(frame) / Output(dst)
//              ┌─────────────┴──────────────┐
//   CpuFrameDecoder (now)              NvdecFrameDecoder (next)
//   avcodec_send_packet                cuvidParseVideoData: the parser's callbacks queue
//   avcodec_receive_frame              decoded surfaces in display order (pts from the packet)
//   sws_scale → RGB in host memory     cuvidMapVideoFrame → NV12→RGB kernel on the decoder's own
//                                      stream (after the reader's) → RGB in device memory; unmap
//
// Contract (both backends):
// - Send(nullptr) ends the stream: frames still held are released to Receive, then kDrained.
// - Frames come out in presentation order with the pts of the packet that carried them.
// - kFull: the decoder holds as many frames as it can; Receive them, then Send the same packet
//   again (its bytes stay valid until the caller's next Demuxer::Next).
// - A damaged packet is kRejected (with the decoder's reason) and decoding goes on; frames decoded
//   from damaged data or missing references come out with `damaged` set, never silently.
// - Flush drops every reference and queued frame: the next packet sent must be a keyframe. H.264
//   and HEVC backends must know the stream's parameter sets after a Flush (NVDEC: feed
//   VideoStreamInfo::annexb_headers first), since non-IDR keyframes do not repeat them.
// - Output(dst) writes the frame last received as packed RGB, height x width x 3 bytes, to dst
//   (host memory for the CPU backend; device memory for NVDEC: written after the work queued on
//   the reader's stream so far, and finished when Output returns).
#pragma once

#include <cstdint>
#include <string>

#include "operators/video/video_types.h"

namespace conveyor::ops::video {

struct DecodedFrame {
  int64_t pts = INT64_MIN;  // stream time base; INT64_MIN: none
  int width = 0, height = 0;
  bool damaged = false;     // concealed errors or missing references
};

class FrameDecoder {
 public:
  enum class Sent { kAccepted, kFull, kRejected };
  enum class Received { kFrame, kNeedInput, kDrained, kError };

  virtual ~FrameDecoder() = default;
  // "libavcodec h264 (cpu)": what messages and counters name.
  virtual std::string Describe() const = 0;
  virtual void Flush() = 0;
  // `error` receives the decoder's reason for kRejected.
  virtual Sent Send(const VideoPacket* packet, std::string* error) = 0;
  // kError: the decoder reported a problem (reason in `error`) and may go on.
  virtual Received Receive(DecodedFrame* frame, std::string* error) = 0;
  virtual void Output(uint8_t* dst) = 0;
};

}  // namespace conveyor::ops::video
