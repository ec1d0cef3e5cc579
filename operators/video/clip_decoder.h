// ClipDecoder: frame-accurate access to one file — "frames k, k+s, k+2s, ... as RGB" — from its
// ClipIndex, a Demuxer and a FrameDecoder backend (frame_decoder.h). Everything a backend must not
// get wrong lives here once, for the CPU backend now and NVDEC later:
//
//   Decode(frames = [k, k+s, ...])
//     │ continue without seeking when the decoder already stands between the keyframe before k
//     │ and k (consecutive clips of one file: no frame is decoded twice)
//     ▼ else
//   keyframe K = the last keyframe at or before k in presentation order (ClipIndex), IDR or not
//   Demuxer::SeekToKeyframe(pts of K); FrameDecoder::Flush()
//     │ skip packets up to the first keyframe; one that lies after K (a container index coarser
//     │ than ours) sends us back to the stream's start
//     ▼
//   send packets, receive frames (presentation order), identify each by its pts:
//     pts < wanted      → dropped (decoded only as a reference)
//     pts == wanted     → damaged? → start again from the keyframe before K (up to
//                          limits.keyframe_retries times: a non-IDR keyframe's broken references)
//                        else Output(destination of frame i), next wanted
//     pts > wanted      → the wanted frame never came out: as damaged
//   once a clip of the file needed an earlier keyframe, later seeks start one keyframe earlier
//   (H.264 open GOPs: libavcodec refuses the frame-number gap their leading pictures leave)
//     pts not rising    → the container's timestamps do not describe the stream's order: error
//
// Damage is never passed on silently. Decoders conceal what they can and flag little of it, so a
// packet the backend rejects (or an error it reports) marks every frame that comes out after it
// as damaged, up to the next keyframe the backend accepts: frames shown from that keyframe on do
// not reference the damaged one. A rejected leading picture (shown before the keyframe decoding
// started from: open-GOP pictures that reference the previous GOP) marks nothing: no later frame
// references it.
//
// Limits: a wall-clock deadline per call (limits.timeout_ms) checked between packets and inside
// libavformat's reads; at most index.packets + 64 packets per attempt; frame sizes must be the
// stream's. Errors are InvalidArgument naming the file and the frame:
//   "clip.mkv": frame 17 (pts 680, 0.680 s): decoded with errors (damaged data or missing
//   reference frames), also when decoding from 2 keyframes earlier (the decoder rejected the
//   packet at pts 640: Invalid data found when processing input)
// Not thread-safe: one ClipDecoder per thread (the reader's DecoderPool hands them out).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operators/video/clip_index.h"
#include "operators/video/demux.h"
#include "operators/video/frame_decoder.h"
#include "operators/video/video_limits.h"

namespace conveyor::ops::video {

struct ClipDecoderStats {
  int64_t clips = 0;
  int64_t seeks = 0;           // SeekToKeyframe calls
  int64_t continued = 0;       // clips decoded on from where the previous one ended
  int64_t retries = 0;         // restarts from an earlier keyframe
  int64_t packets_sent = 0;
  int64_t frames_decoded = 0;  // frames the backend produced (kept or dropped)
  int64_t frames_output = 0;
};

class ClipDecoder {
 public:
  ClipDecoder(std::unique_ptr<Demuxer> demuxer, std::unique_ptr<FrameDecoder> decoder,
              std::shared_ptr<const ClipIndex> index, const VideoLimits& limits);

  // Writes frames `frames` (presentation indices, strictly increasing, each < frame_count()) to
  // `out`: frame i at out + i * frame_bytes(). Throws InvalidArgument (see above); the decoder is
  // reset by the next call after a failure.
  void Decode(const std::vector<int64_t>& frames, uint8_t* out);
  // The same, frame i written to outs[i] (decoders.video places frames where padding wants them).
  void Decode(const std::vector<int64_t>& frames, const std::vector<uint8_t*>& outs);

  int64_t frame_bytes() const { return static_cast<int64_t>(index_->info.width) * index_->info.height * 3; }
  const ClipIndex& index() const { return *index_; }
  const ClipDecoderStats& stats() const { return stats_; }
  std::string Describe() const { return decoder_->Describe(); }

 private:
  enum class Outcome { kDone, kBroken, kNeedInput };
  void SeekTo(int64_t keyframe);
  // One attempt from where the decoder stands: kDone or kBroken (why in `problem`).
  Outcome Run(const std::vector<int64_t>& frames, const std::vector<uint8_t*>& outs, std::string* problem);
  Outcome TakeFrames(const std::vector<int64_t>& frames, const std::vector<uint8_t*>& outs, size_t* next,
                     bool* drained, std::string* problem);
  void SendNextPacket(int64_t want);
  bool NextPacket(VideoPacket* packet);
  std::string FrameWhere(int64_t frame) const;

  std::unique_ptr<Demuxer> demuxer_;
  std::unique_ptr<FrameDecoder> decoder_;
  std::shared_ptr<const ClipIndex> index_;
  VideoLimits limits_;
  ClipDecoderStats stats_;
  // Where the decoder stands: valid after a successful Decode, until a failure or a seek.
  bool start_earlier_ = false;     // seeks start one keyframe before the one at or before the clip
  bool positioned_ = false;
  int64_t last_frame_ = -1;        // presentation index of the last frame output
  int64_t last_pts_ = INT64_MIN;   // pts of the last frame received since the last seek
  bool stream_ended_ = false;      // Send(nullptr) done since the last seek
  VideoPacket packet_;             // the packet being sent; its bytes live until the next Next()
  bool pending_ = false;           // packet_ was refused with kFull and waits to be sent again
  // After a seek: packets before the first keyframe are skipped; a keyframe later than
  // landing_pts_ means the container's index sent us too far.
  bool need_keyframe_ = false;
  bool restarted_ = false;
  int64_t landing_pts_ = 0;
  int64_t packets_this_attempt_ = 0;
  int stalled_ = 0;  // decoder answers in a row without a frame (kFull, kError)
  std::string rejected_;  // the first packet the backend rejected in this attempt, and why
  // Damage tracking (above): frames received while damaged_ with pts < clean_from_pts_ are damaged.
  bool damaged_ = false;
  int64_t clean_from_pts_ = INT64_MAX;
};

}  // namespace conveyor::ops::video
