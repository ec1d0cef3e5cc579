#include "operators/video/frame_selection.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace conveyor::ops::video {
namespace {

struct PadModeName {
  std::string_view name;
  PadMode mode;
};

constexpr PadModeName kPadModeNames[] = {
    {"none", PadMode::kNone},
    {"constant", PadMode::kConstant},
    {"edge", PadMode::kEdge},
    {"repeat", PadMode::kEdge},
    {"reflect_1001", PadMode::kReflect1001},
    {"symmetric", PadMode::kReflect1001},
    {"reflect_101", PadMode::kReflect101},
    {"reflect", PadMode::kReflect101},
};

// The video frame wanted frame `frame` shows in a video of `n` frames (frame >= 0).
int64_t Padded(int64_t frame, PadMode pad, int64_t n) {
  if (frame < n) return frame;
  switch (pad) {
    case PadMode::kConstant:
      return FramePlan::kFill;
    case PadMode::kEdge:
      return n - 1;
    case PadMode::kReflect1001: {  // period 2n: 0 .. n-1, n-1 .. 0
      const int64_t m = frame % (2 * n);
      return m < n ? m : 2 * n - 1 - m;
    }
    case PadMode::kReflect101: {  // period 2n - 2: 0 .. n-1, n-2 .. 1
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = frame % period;
      return m < n ? m : period - m;
    }
    case PadMode::kNone:
      break;  // SelectedFrameCount stops at the video's end
  }
  return n - 1;
}

}  // namespace

std::optional<PadMode> ParsePadMode(std::string_view name) {
  for (const PadModeName& entry : kPadModeNames) {
    if (entry.name == name) return entry.mode;
  }
  return std::nullopt;
}

std::vector<std::string> PadModeNames() {
  std::vector<std::string> names;
  for (const PadModeName& entry : kPadModeNames) names.emplace_back(entry.name);
  return names;
}

int64_t SelectedFrameCount(const FrameRequest& request, PadMode pad, int64_t frame_count) {
  if (request.start >= frame_count) {
    throw InvalidArgument("start_frame " + std::to_string(request.start) + " is beyond the end: the video has " +
                          std::to_string(frame_count) + " frames");
  }
  const int64_t available = (frame_count - request.start + request.stride - 1) / request.stride;
  if (request.sequence_length > 0) {
    return pad == PadMode::kNone ? std::min(request.sequence_length, available) : request.sequence_length;
  }
  if (request.end) {
    const int64_t end = pad == PadMode::kNone ? std::min(*request.end, frame_count) : *request.end;
    return std::max<int64_t>(0, (end - request.start + request.stride - 1) / request.stride);
  }
  return available;
}

FramePlan SelectFrames(const FrameRequest& request, PadMode pad, int64_t frame_count) {
  const int64_t count = SelectedFrameCount(request, pad, frame_count);
  FramePlan plan;
  plan.sources.resize(static_cast<size_t>(count));
  std::vector<std::pair<int64_t, int64_t>> shown;  // (video frame, output frame)
  shown.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    const int64_t source = Padded(request.start + k * request.stride, pad, frame_count);
    plan.sources[static_cast<size_t>(k)] = source;
    if (source != FramePlan::kFill) shown.emplace_back(source, k);
  }
  std::sort(shown.begin(), shown.end());
  for (const auto& [source, slot] : shown) {
    if (!plan.decode.empty() && plan.decode.back() == source) continue;  // sorted: its first slot came first
    plan.decode.push_back(source);
    plan.first_slot.push_back(slot);
  }
  return plan;
}

void ForEachPaddedFrame(const FramePlan& plan, const std::function<void(int64_t k, int64_t first)>& f) {
  for (int64_t k = 0; k < plan.frames(); ++k) {
    const int64_t source = plan.sources[static_cast<size_t>(k)];
    if (source == FramePlan::kFill) {
      f(k, FramePlan::kFill);
      continue;
    }
    const size_t j = static_cast<size_t>(std::lower_bound(plan.decode.begin(), plan.decode.end(), source) -
                                         plan.decode.begin());
    const int64_t first = plan.first_slot[j];
    if (first != k) f(k, first);
  }
}

void FillRepeatedFrames(const FramePlan& plan, uint8_t* out, int64_t frame_bytes, const std::array<uint8_t, 3>& fill) {
  ForEachPaddedFrame(plan, [&](int64_t k, int64_t first) {
    uint8_t* frame = out + k * frame_bytes;
    if (first == FramePlan::kFill) {
      for (int64_t b = 0; b + 2 < frame_bytes; b += 3) std::memcpy(frame + b, fill.data(), 3);
    } else {
      std::memcpy(frame, out + first * frame_bytes, static_cast<size_t>(frame_bytes));
    }
  });
}

}  // namespace conveyor::ops::video
