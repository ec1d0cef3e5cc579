#include "operators/video/clip_index.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"

namespace conveyor::ops::video {
namespace {

std::string Quoted(const std::string& name) { return "\"" + name + "\""; }

struct PacketTime {
  int64_t pts;
  int64_t packet;  // place in decode order
  bool keyframe;
};

}  // namespace

int64_t ClipIndex::FrameOfPts(int64_t t) const {
  const auto it = std::lower_bound(pts.begin(), pts.end(), t);
  return it != pts.end() && *it == t ? static_cast<int64_t>(it - pts.begin()) : -1;
}

int64_t ClipIndex::KeyframeBefore(int64_t frame) const {
  const auto it = std::upper_bound(keyframes.begin(), keyframes.end(), frame);
  return std::max<int64_t>(0, static_cast<int64_t>(it - keyframes.begin()) - 1);
}

double ClipIndex::Seconds(int64_t frame) const {
  return static_cast<double>(pts[static_cast<size_t>(frame)]) * info.time_base_num / info.time_base_den;
}

void CheckIndexLimits(const ClipIndex& index, const VideoLimits& limits) {
  const int64_t pixels = static_cast<int64_t>(index.info.width) * index.info.height;
  if (pixels > limits.max_pixels) {
    throw InvalidArgument(Quoted(index.name) + ": the " + index.info.codec_name + " stream declares " +
                          std::to_string(index.info.width) + "x" + std::to_string(index.info.height) + " = " +
                          std::to_string(pixels) + " pixels per frame, more than max_pixels " +
                          std::to_string(limits.max_pixels));
  }
  if (index.packets > limits.max_frames) {
    throw InvalidArgument(Quoted(index.name) + ": more than max_frames " + std::to_string(limits.max_frames) +
                          " packets in the video stream");
  }
}

ClipIndex BuildClipIndex(Demuxer& demuxer, const VideoLimits& limits) {
  const std::string where = Quoted(demuxer.name());
  demuxer.SetDeadline(std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.timeout_ms));
  ClipIndex index;
  index.name = demuxer.name();
  index.info = demuxer.info();
  std::vector<PacketTime> shown;
  int64_t first_key_pts = kNoTimestamp;
  VideoPacket packet;
  for (int64_t n = 0; demuxer.Next(&packet); ++n) {
    if (n >= limits.max_frames) {
      throw InvalidArgument(where + ": more than max_frames " + std::to_string(limits.max_frames) +
                            " packets in the video stream");
    }
    const int64_t t = packet.pts != kNoTimestamp ? packet.pts : packet.dts;
    if (t == kNoTimestamp) throw InvalidArgument(where + ": packet " + std::to_string(n) + " has no timestamp");
    index.packets = n + 1;
    if (packet.keyframe && first_key_pts == kNoTimestamp) first_key_pts = t;
    if (!packet.discard) shown.push_back(PacketTime{t, n, packet.keyframe});
  }
  demuxer.SetDeadline(std::chrono::steady_clock::time_point::max());
  if (shown.empty()) {
    throw InvalidArgument(where + ": the video stream (" + index.info.codec_name + ") has no frames");
  }
  if (first_key_pts == kNoTimestamp) {
    throw InvalidArgument(where + ": no keyframe among the " + std::to_string(shown.size()) +
                          " frames of the video stream: no frame can be decoded from a known state");
  }
  std::sort(shown.begin(), shown.end(), [](const PacketTime& a, const PacketTime& b) { return a.pts < b.pts; });
  for (size_t i = 1; i < shown.size(); ++i) {
    if (shown[i].pts == shown[i - 1].pts) {
      const auto [a, b] = std::minmax(shown[i - 1].packet, shown[i].packet);
      throw InvalidArgument(where + ": packets " + std::to_string(a) + " and " + std::to_string(b) +
                            " have the same timestamp " + std::to_string(shown[i].pts) +
                            ": their frames cannot be told apart");
    }
  }
  index.pts.reserve(shown.size());
  for (const PacketTime& p : shown) {
    if (p.pts < first_key_pts) {
      ++index.leading_frames_dropped;
      continue;
    }
    if (p.keyframe) index.keyframes.push_back(static_cast<int64_t>(index.pts.size()));
    index.pts.push_back(p.pts);
  }
  // The first keyframe was cut by an edit list: frame 0 still decodes from the stream's start.
  if (index.keyframes.empty() || index.keyframes[0] != 0) index.keyframes.insert(index.keyframes.begin(), 0);
  return index;
}

ClipIndexCache& ClipIndexCache::Global() {
  static ClipIndexCache cache(1 << 16);
  return cache;
}

std::shared_ptr<const ClipIndex> ClipIndexCache::Get(const std::string& path, const VideoLimits& limits) {
  std::shared_ptr<const ByteSource> source = OpenByteSource(path);
  Key key{path, source->Size(), 0};
  struct stat st{};
  if (!IsUrl(path) && ::stat(path.c_str(), &st) == 0) {
    key.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(key);
    if (it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++hits_;
      std::shared_ptr<const ClipIndex> index = it->second->second;
      CheckIndexLimits(*index, limits);
      return index;
    }
  }
  Demuxer demuxer(std::move(source), limits);
  auto index = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits));
  std::lock_guard<std::mutex> lock(mutex_);
  ++builds_;
  const auto it = entries_.find(key);
  if (it != entries_.end()) return it->second->second;  // built meanwhile by another thread
  lru_.emplace_front(key, index);
  entries_[key] = lru_.begin();
  while (lru_.size() > capacity_) {
    entries_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return index;
}

int64_t ClipIndexCache::builds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return builds_;
}

int64_t ClipIndexCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

void ClipIndexCache::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  lru_.clear();
  entries_.clear();
}

void CheckUnchanged(const VideoStreamInfo& info, const ClipIndex& index) {
  if (info.width == index.info.width && info.height == index.info.height && info.codec_name == index.info.codec_name) {
    return;
  }
  throw InvalidArgument("\"" + index.name + "\": the file changed since it was indexed (" + info.codec_name + " " +
                        std::to_string(info.width) + "x" + std::to_string(info.height) + ", the index has " +
                        index.info.codec_name + " " + std::to_string(index.info.width) + "x" +
                        std::to_string(index.info.height) + ")");
}

}  // namespace conveyor::ops::video
