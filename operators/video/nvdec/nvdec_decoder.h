// The NVDEC backend of the video family (frame_decoder.h): cuvid's parser + decoder on the GPU's
// video engines, frames converted to RGB by our kernel (nv12_to_rgb_gpu.h) straight into device
// memory, ordered after the caller's stream. Frame accuracy is ClipDecoder's, exactly as for the
// CPU backend.
//
//   Send(packet) ── cuvidParseVideoData (pts as CUVID_PKT_TIMESTAMP, one picture per packet)
//        │  callbacks, on this thread, inside the call:
//        │   sequence → caps checked, a session (decoder + stream) taken from the cache or created
//        │              (once per file; again only if the format changes)
//        │   decode   → cuvidDecodePicture
//        │   display  → queue {surface, pts} (presentation order)
//   Receive ── pops the queue; `damaged` from cuvidGetDecodeStatus
//   Output(dst) ── on the session's own stream, after the caller's: cuvidMapVideoFrame → NV12/P016
//                  → RGB kernel → host wait (this session's work only) → unmap
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
// decoders of several files run at once (the engines are shared by the driver), each converting on
// its own stream so that no thread waits for another's frames.
#pragma once

#include <atomic>
#include <cstdint>
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

// The stream Output's writes are ordered after (a cudaStream_t: the reader's, set before each
// Decode): the frames are converted on the session's own stream, which waits for the work queued
// on this one so far (the output buffer may still be in use there), and are finished when Output
// returns.
struct NvdecStreamSlot {
  std::atomic<void*> stream{nullptr};
};

// Decoders (with their surfaces and streams) handed from closed files to newly opened ones
// (nvdec_sessions.h). Opaque here: its header carries the driver API's types.
class NvdecSessionCache;
std::shared_ptr<NvdecSessionCache> NewNvdecSessionCache();

struct NvdecSessionStats {
  int64_t created = 0;  // cuvid decoders created
  int64_t reused = 0;   // files that took an idle decoder instead
  int64_t idle = 0;     // decoders waiting in the cache now
};
NvdecSessionStats SessionStats(const NvdecSessionCache& cache);

struct NvdecOptions {
  std::shared_ptr<NvdecStreamSlot> stream = std::make_shared<NvdecStreamSlot>();
  // Shared by every decoder made with these options (null: each creates and destroys its own).
  std::shared_ptr<NvdecSessionCache> sessions = NewNvdecSessionCache();
  // Frames the parser decodes ahead of the one it shows (CUVIDPARSERPARAMS::ulMaxDisplayDelay): the
  // engine decodes them while the shown one is mapped and converted. 0: no overlap.
  int display_delay = 2;
  int extra_surfaces = 4;  // decode surfaces beyond the stream's minimum and the display delay
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
