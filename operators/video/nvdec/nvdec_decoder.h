// The NVDEC backend of the video family (frame_decoder.h): cuvid's parser + decoder on the GPU's
// video engines, frames converted to RGB by our kernel (nv12_to_rgb_gpu.h) straight into device
// memory on the caller's stream. Frame accuracy is ClipDecoder's, exactly as for the CPU backend.
//
//   Send(packet) ── cuvidParseVideoData (pts as CUVID_PKT_TIMESTAMP, one picture per packet)
//        │  callbacks, on this thread, inside the call:
//        │   sequence → caps checked, decoder created (once; again only if the format changes)
//        │   decode   → cuvidDecodePicture
//        │   display  → queue {surface, pts} (presentation order)
//   Receive ── pops the queue; `damaged` from cuvidGetDecodeStatus
//   Output(dst) ── cuvidMapVideoFrame → NV12/P016 → RGB kernel on the stream → fence → unmap
//   Flush ── a new parser; the stream's parameter sets (H.264/HEVC annexb_headers, AV1 av1C OBUs)
//            go in front of the next packet (non-IDR keyframes do not repeat them)
//
// | stream                        | NVDEC                                                      |
// |-------------------------------|------------------------------------------------------------|
// | H.264, HEVC, VP9, AV1         | 4:2:0, 8 bit (NV12) or 10/12 bit (P016 → 8-bit RGB), sizes |
// |                               | cuvidGetDecoderCaps allows                                 |
// | anything else                 | NvdecUnsupported at construction: the caller decodes it on |
// |                               | the CPU (gpu_clip_decoder.h)                               |
//
// CUDA contexts: the decoder works in the primary context of the CUDA runtime's current device
// (cuDevicePrimaryCtxRetain), pushed around every driver / cuvid call, so runtime kernels and
// NVDEC share memory and streams. One decoder per thread at a time (the reader's DecoderPool);
// decoders of several files run at once (the engines are shared by the driver).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/video/frame_decoder.h"
#include "operators/video/video_types.h"

namespace conveyor::ops::video {

// NVDEC cannot take this stream (no library, codec, chroma format, bit depth, size): decode it on
// the CPU instead. The message says why.
class NvdecUnsupported : public Error {
 public:
  using Error::Error;
};

// Where Output writes: the stream (a cudaStream_t) is the reader's, set before each Decode.
struct NvdecStreamSlot {
  std::atomic<void*> stream{nullptr};
};

struct NvdecOptions {
  std::shared_ptr<NvdecStreamSlot> stream = std::make_shared<NvdecStreamSlot>();
  int extra_surfaces = 4;  // decode surfaces beyond the stream's minimum (display queue slack)
};

class NvdecFrameDecoder final : public FrameDecoder {
 public:
  // Throws NvdecUnsupported (CPU fallback) or InvalidArgument naming `name`.
  NvdecFrameDecoder(const VideoStreamInfo& info, std::string name, NvdecOptions options);
  ~NvdecFrameDecoder() override;

  std::string Describe() const override;
  void Flush() override;
  Sent Send(const VideoPacket* packet, std::string* error) override;
  Received Receive(DecodedFrame* frame, std::string* error) override;
  void Output(uint8_t* dst) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace conveyor::ops::video
