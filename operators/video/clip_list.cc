#include "operators/video/clip_list.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace conveyor::ops::video {
namespace {

// The first frame whose time from frame 0 is at least `seconds` (1 µs of slack for rounding).
int64_t FrameAtSeconds(const ClipIndex& index, double seconds) {
  const double t0 = index.Seconds(0);
  int64_t lo = 0, hi = index.frame_count();
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (index.Seconds(mid) - t0 < seconds - 1e-6) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

int64_t FrameNumber(double value, int64_t frames, bool start) {
  const double v = value < 0 ? value + static_cast<double>(frames) : value;
  const double rounded = start ? std::ceil(v) : std::floor(v);
  return static_cast<int64_t>(std::clamp(rounded, 0.0, static_cast<double>(frames)));
}

}  // namespace

std::pair<int64_t, int64_t> ResolveRange(const ClipIndex& index, const VideoFileEntry& e, bool frame_num_ranges) {
  const int64_t n = index.frame_count();
  if (frame_num_ranges) {
    return {e.start ? FrameNumber(*e.start, n, true) : 0, e.end ? FrameNumber(*e.end, n, false) : n};
  }
  for (const std::optional<double>& v : {e.start, e.end}) {
    if (v && *v < 0) {
      throw InvalidArgument("\"" + e.path + "\" (file_list line " + std::to_string(e.line) + "): range " +
                            std::to_string(*v) + " s: times are seconds from the first frame, not negative "
                            "(negative numbers count from the end with file_list_frame_num: true)");
    }
  }
  return {e.start ? FrameAtSeconds(index, *e.start) : 0, e.end ? FrameAtSeconds(index, *e.end) : n};
}

std::string ClipList::Add(int64_t entry, std::shared_ptr<const ClipIndex> index, const VideoFileEntry& e) {
  const auto [begin, end] = ResolveRange(*index, e, params_.frame_num_ranges);
  const int64_t frames = std::max<int64_t>(0, end - begin);
  if (frames < span()) {
    const bool ranged = e.start || e.end;
    return (ranged ? "frames [" + std::to_string(begin) + ", " + std::to_string(end) + ") of its " +
                         std::to_string(index->frame_count()) + " (file_list line " + std::to_string(e.line) + ")"
                   : "its " + std::to_string(index->frame_count()) + (index->frame_count() == 1 ? " frame" : " frames")) +
           (frames == 1 && !ranged ? " is" : " are") + " fewer than one sequence spans: sequence_length " +
           std::to_string(params_.sequence_length) + " at stride " + std::to_string(params_.stride) + " spans " +
           std::to_string(span()) + " frames";
  }
  File f;
  f.entry = entry;
  f.index = std::move(index);
  f.begin = begin;
  f.end = end;
  f.first_clip = size_;
  f.clips = (frames - span()) / params_.step + 1;
  size_ += f.clips;
  files_.push_back(std::move(f));
  return "";
}

ClipList::Clip ClipList::At(int64_t clip) const {
  const auto it = std::upper_bound(files_.begin(), files_.end(), clip,
                                   [](int64_t c, const File& f) { return c < f.first_clip; });
  const File& f = *(it - 1);
  return Clip{&f, f.begin + (clip - f.first_clip) * params_.step};
}

std::vector<int64_t> ClipList::Frames(int64_t start) const {
  std::vector<int64_t> frames(static_cast<size_t>(params_.sequence_length));
  for (int64_t i = 0; i < params_.sequence_length; ++i) frames[static_cast<size_t>(i)] = start + i * params_.stride;
  return frames;
}

uint64_t ClipList::Fingerprint() const {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  const int64_t shape[3] = {params_.sequence_length, params_.stride, params_.step};
  mix(shape, sizeof(shape));
  for (const File& f : files_) {
    mix(f.index->name.data(), f.index->name.size() + 1);
    const int64_t numbers[3] = {f.index->frame_count(), f.begin, f.end};
    mix(numbers, sizeof(numbers));
  }
  return h;
}

}  // namespace conveyor::ops::video
