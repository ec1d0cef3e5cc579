#include "operators/video/clip_decoder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/error.h"

namespace conveyor::ops::video {
namespace {

constexpr int64_t kPacketSlack = 64;   // packets an attempt may read beyond the stream's count
constexpr int kMaxStalledSends = 16;   // kFull answers in a row with no frame received between

std::string Quoted(const std::string& name) { return "\"" + name + "\""; }

}  // namespace

ClipDecoder::ClipDecoder(std::unique_ptr<Demuxer> demuxer, std::unique_ptr<FrameDecoder> decoder,
                         std::shared_ptr<const ClipIndex> index, const VideoLimits& limits)
    : demuxer_(std::move(demuxer)), decoder_(std::move(decoder)), index_(std::move(index)), limits_(limits) {}

std::string ClipDecoder::FrameWhere(int64_t frame) const {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.3f s", index_->Seconds(frame));
  return Quoted(index_->name) + ": frame " + std::to_string(frame) + " (pts " +
         std::to_string(index_->pts[static_cast<size_t>(frame)]) + ", " + seconds + ")";
}

void ClipDecoder::Decode(const std::vector<int64_t>& frames, uint8_t* out) {
  std::vector<uint8_t*> outs(frames.size());
  for (size_t i = 0; i < frames.size(); ++i) outs[i] = out + static_cast<int64_t>(i) * frame_bytes();
  Decode(frames, outs);
}

void ClipDecoder::Decode(const std::vector<int64_t>& frames, const std::vector<uint8_t*>& outs) {
  if (outs.size() != frames.size()) {
    throw InvalidArgument(Quoted(index_->name) + ": " + std::to_string(frames.size()) + " frames asked with " +
                          std::to_string(outs.size()) + " destinations");
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    if (frames[i] < 0 || frames[i] >= index_->frame_count() || (i > 0 && frames[i] <= frames[i - 1])) {
      throw InvalidArgument(Quoted(index_->name) + ": frame " + std::to_string(frames[i]) +
                            " asked: expected strictly increasing frames in [0, " +
                            std::to_string(index_->frame_count()) + ")");
    }
  }
  if (frames.empty()) return;
  ++stats_.clips;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits_.timeout_ms);
  demuxer_->SetDeadline(deadline);
  int64_t key = index_->KeyframeBefore(frames[0]);
  // Once a clip of this file needed an earlier keyframe (non-IDR keyframes whose decode the
  // backend refuses: H.264 open GOPs), every seek starts one keyframe earlier.
  if (start_earlier_ && key > 0) --key;
  // Decoding on is cheaper than seeking when the keyframe before k was already passed (or is the
  // next frame: a seek would decode the same frames again, and those the decoder holds twice).
  bool resume = positioned_ && last_frame_ < frames[0] &&
                index_->keyframes[static_cast<size_t>(key)] <= last_frame_ + 1;
  positioned_ = false;
  std::string problem;
  for (int attempt = 0;;) {
    if (resume) {
      ++stats_.continued;
      packets_this_attempt_ = 0;
      rejected_.clear();
    } else {
      SeekTo(key);
    }
    if (Run(frames, outs, &problem) == Outcome::kDone) {
      if (attempt > 0) start_earlier_ = true;
      positioned_ = true;
      last_frame_ = frames.back();
      demuxer_->SetDeadline(std::chrono::steady_clock::time_point::max());
      return;
    }
    if (resume) {  // decoding on went wrong: try properly, from the keyframe before the clip
      resume = false;
      continue;
    }
    if (attempt >= limits_.keyframe_retries || key == 0) {
      // AVI stores decode order only: libavformat derives presentation timestamps, right for
      // MPEG-4 Part 2's B-frames, wrong for H.264's (pyramids, several in a row).
      const bool avi = demuxer_->format_name() == "avi" && rejected_.empty();
      throw InvalidArgument(problem + (attempt > 0 ? ", also when decoding from " + std::to_string(attempt) +
                                                         (attempt == 1 ? " keyframe" : " keyframes") + " earlier"
                                                   : "") +
                            (rejected_.empty() ? "" : " (" + rejected_ + ")") +
                            (avi ? "; AVI has no presentation timestamps, and the ones libavformat derives do not "
                                   "describe this stream's frame order (e.g. H.264 B-frames): remux to MP4 or MKV"
                                 : ""));
    }
    ++attempt;
    ++stats_.retries;
    --key;
  }
}

void ClipDecoder::SeekTo(int64_t keyframe) {
  ++stats_.seeks;
  landing_pts_ = index_->pts[static_cast<size_t>(index_->keyframes[static_cast<size_t>(keyframe)])];
  demuxer_->SeekToKeyframe(landing_pts_);
  decoder_->Flush();
  need_keyframe_ = true;
  restarted_ = false;
  stream_ended_ = false;
  pending_ = false;
  damaged_ = false;
  clean_from_pts_ = INT64_MAX;
  last_pts_ = INT64_MIN;
  packets_this_attempt_ = 0;
  rejected_.clear();
}

// The next packet to send, past the skipped ones after a seek; false at the end of the stream.
bool ClipDecoder::NextPacket(VideoPacket* packet) {
  for (;;) {
    if (!demuxer_->Next(packet)) return false;
    if (++packets_this_attempt_ > index_->packets + kPacketSlack) {
      throw InvalidArgument(Quoted(index_->name) + ": read " + std::to_string(packets_this_attempt_) +
                            " packets from a keyframe, more than the stream's " + std::to_string(index_->packets) +
                            " (a demuxer that loops)");
    }
    if (!need_keyframe_) return true;
    if (!packet->keyframe) continue;  // no decoder can start here
    const int64_t t = packet->pts != kNoTimestamp ? packet->pts : packet->dts;
    if (t != kNoTimestamp && t > landing_pts_ && !restarted_) {
      // The container's index sent us past the keyframe we asked for: start from the beginning.
      demuxer_->SeekToStart();
      restarted_ = true;
      packets_this_attempt_ = 0;
      continue;
    }
    need_keyframe_ = false;
    return true;
  }
}

ClipDecoder::Outcome ClipDecoder::Run(const std::vector<int64_t>& frames, const std::vector<uint8_t*>& outs,
                                      std::string* problem) {
  size_t next = 0;  // the position in `frames` of the frame wanted next
  stalled_ = 0;
  for (;;) {
    bool drained = false;
    const Outcome taken = TakeFrames(frames, outs, &next, &drained, problem);
    if (taken != Outcome::kNeedInput) return taken;
    // The decoder has nothing more: the stream ended before the wanted frame, or it wants input.
    if (drained || stream_ended_) {
      *problem = FrameWhere(frames[next]) + ": not produced by the decoder (the stream ended before it)";
      return Outcome::kBroken;
    }
    if (demuxer_->DeadlinePassed()) {
      throw InvalidArgument(FrameWhere(frames[next]) + ": timed out after " + std::to_string(limits_.timeout_ms) +
                            " ms (decode_timeout_ms)");
    }
    SendNextPacket(frames[next]);
  }
}

// Receives every frame the decoder has ready (presentation order), writing the wanted ones.
ClipDecoder::Outcome ClipDecoder::TakeFrames(const std::vector<int64_t>& frames, const std::vector<uint8_t*>& outs,
                                             size_t* next, bool* drained, std::string* problem) {
  DecodedFrame frame;
  std::string error;
  for (;;) {
    const int64_t want = frames[*next];
    switch (decoder_->Receive(&frame, &error)) {
      case FrameDecoder::Received::kNeedInput:
        return Outcome::kNeedInput;
      case FrameDecoder::Received::kDrained:
        *drained = true;
        return Outcome::kNeedInput;
      case FrameDecoder::Received::kError:
        if (rejected_.empty()) rejected_ = "the decoder reported: " + error;
        damaged_ = true;
        clean_from_pts_ = INT64_MAX;
        if (++stalled_ > kMaxStalledSends) throw InvalidArgument(FrameWhere(want) + ": the decoder keeps failing: " + error);
        continue;
      case FrameDecoder::Received::kFrame:
        break;
    }
    stalled_ = 0;
    ++stats_.frames_decoded;
    if (frame.pts == INT64_MIN) throw InvalidArgument(FrameWhere(want) + ": the decoder gave a frame without a timestamp");
    if (frame.pts <= last_pts_) {
      throw InvalidArgument(FrameWhere(want) + ": decoded frames' timestamps are not in presentation order (" +
                            std::to_string(last_pts_) + " then " + std::to_string(frame.pts) +
                            "): the container's timestamps do not describe this stream's frame order, so frames "
                            "cannot be found by timestamp; remux to MP4 or MKV");
    }
    last_pts_ = frame.pts;
    const int64_t want_pts = index_->pts[static_cast<size_t>(want)];
    if (frame.pts < want_pts) continue;  // only a reference on the way
    if (frame.pts > want_pts) {
      *problem = FrameWhere(want) + ": not produced by the decoder (it went on to pts " + std::to_string(frame.pts) + ")";
      return Outcome::kBroken;
    }
    if (frame.damaged || (damaged_ && frame.pts < clean_from_pts_)) {
      *problem = FrameWhere(want) + ": decoded with errors (damaged data or missing reference frames)";
      return Outcome::kBroken;
    }
    if (frame.width != index_->info.width || frame.height != index_->info.height) {
      throw InvalidArgument(FrameWhere(want) + ": decoded as " + std::to_string(frame.width) + "x" +
                            std::to_string(frame.height) + ", the stream declares " + std::to_string(index_->info.width) +
                            "x" + std::to_string(index_->info.height) +
                            " (resolution changes within a stream are not supported)");
    }
    decoder_->Output(outs[*next]);
    ++stats_.frames_output;
    if (++*next == frames.size()) return Outcome::kDone;
  }
}

// Sends the next packet (or the one the decoder refused as full, or the end of the stream), and
// keeps the damage state (above) up to date.
void ClipDecoder::SendNextPacket(int64_t want) {
  std::string error;
  if (!pending_ && !NextPacket(&packet_)) {
    decoder_->Send(nullptr, &error);
    stream_ended_ = true;
    return;
  }
  switch (decoder_->Send(&packet_, &error)) {
    case FrameDecoder::Sent::kAccepted:
      pending_ = false;
      ++stats_.packets_sent;
      if (damaged_ && packet_.keyframe && packet_.pts != kNoTimestamp) clean_from_pts_ = std::min(clean_from_pts_, packet_.pts);
      return;
    case FrameDecoder::Sent::kFull:
      pending_ = true;
      if (++stalled_ > kMaxStalledSends) throw InvalidArgument(FrameWhere(want) + ": the decoder takes no input and gives no frame");
      return;
    case FrameDecoder::Sent::kRejected:
      pending_ = false;
      // A leading picture of the keyframe we started from: nothing after it references it.
      if (packet_.pts == kNoTimestamp || packet_.pts >= landing_pts_) {
        damaged_ = true;
        clean_from_pts_ = INT64_MAX;
      }
      if (rejected_.empty()) {
        rejected_ = "the decoder rejected the packet at pts " +
                    (packet_.pts == kNoTimestamp ? std::string("(none)") : std::to_string(packet_.pts)) + ": " + error;
      }
      return;
  }
}

}  // namespace conveyor::ops::video
