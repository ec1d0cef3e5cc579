// Which frames of a video one decoders.video sample shows: DALI's fn.decoders.video rules for
// start_frame, sequence_length / end_frame, stride and pad_mode, in one place, free of decoding
// (unit-tested on frame numbers alone).
//
//   wanted frames: start, start + stride, ... — sequence_length of them, or those before end_frame
//   (exclusive), or, with neither, those before the video's end
//        │ each wanted frame k past the video's last frame (frame_count - 1), by pad_mode:
//        ▼
//   none          k is not wanted: the sequence stops at the video's end (a shorter output)
//   constant      a frame of fill_value                                      ABC → ABCPPP
//   edge/repeat   the video's last frame                                     ABC → ABCCCC
//   reflect_1001  mirrored at the end, the last frame repeated (symmetric)   ABC → ABCCBA
//   reflect_101   mirrored at the end, the last frame once (reflect)         ABC → ABCBA
//
// Padding maps the frame number k (DALI's HandleBoundary), so with stride > 1 a padded frame is
// the mirror of k, not a repeat of the sequence's own frames. start_frame must lie in the video.
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conveyor::ops::video {

enum class PadMode { kNone, kConstant, kEdge, kReflect1001, kReflect101 };

// DALI's names, aliases included: none, constant, edge | repeat, reflect_1001 | symmetric,
// reflect_101 | reflect. nullopt for anything else.
std::optional<PadMode> ParsePadMode(std::string_view name);
// Every name ParsePadMode takes, for the schema's choices.
std::vector<std::string> PadModeNames();

// One sample's request. sequence_length and end_frame exclude each other (the caller checks).
struct FrameRequest {
  int64_t start = 0;
  int64_t sequence_length = 0;        // 0: not given
  std::optional<int64_t> end;         // end_frame (exclusive), > start
  int64_t stride = 1;                 // >= 1
};

// Output frame i shows video frame sources[i], or is fill_value's frame where sources[i] is kFill.
struct FramePlan {
  static constexpr int64_t kFill = -1;
  std::vector<int64_t> sources;
  std::vector<int64_t> decode;      // the distinct video frames shown, increasing
  std::vector<int64_t> first_slot;  // decode[j] is decoded into output frame first_slot[j]

  int64_t frames() const { return static_cast<int64_t>(sources.size()); }
};

// How many frames the sample's output holds, for a video of `frame_count` frames. Throws
// InvalidArgument (the bare reason) when start lies beyond the video.
int64_t SelectedFrameCount(const FrameRequest& request, PadMode pad, int64_t frame_count);

// The plan for SelectedFrameCount(request, pad, frame_count) frames.
FramePlan SelectFrames(const FrameRequest& request, PadMode pad, int64_t frame_count);

// After decode[j] was written to output frame first_slot[j] of `out` (frames of `frame_bytes`
// packed RGB bytes): copies each frame shown again to its other places and fills kFill frames
// with `fill` (R, G, B).
void FillRepeatedFrames(const FramePlan& plan, uint8_t* out, int64_t frame_bytes, const std::array<uint8_t, 3>& fill);

// The same walk for a caller that pads elsewhere (decoders.video on the GPU: copies on a stream):
// f(k, first) for each output frame k that is not a decoded frame's first place, `first` the
// output frame that holds its picture, or FramePlan::kFill for a fill frame.
void ForEachPaddedFrame(const FramePlan& plan, const std::function<void(int64_t k, int64_t first)>& f);

}  // namespace conveyor::ops::video
