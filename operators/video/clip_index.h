// ClipIndex: what the reader must know of a file before it can cut clips from it and seek to any
// of them — its frames in presentation order (frame k is the k-th frame shown), each frame's
// timestamp, and where the keyframes are. Built once per file from the packets alone (no decoding)
// and cached in memory by (path, size, modification time).
//
//   packets in decode order          I0  P3  B1  B2  P6  B4  B5  I9 ...   (B-frames reorder)
//   pts (sorted) → presentation       0   1   2   3   4   5   6   7   8   9 ...
//   keyframes (presentation index)    0                               9
//
// - B-frames: a frame's place is the rank of its timestamp, not its place among the packets.
// - Variable frame rate: timestamps are kept as they are; nothing assumes a constant rate.
// - Frames shown before the first keyframe (a stream cut mid-GOP, open-GOP leading pictures) cannot
//   be decoded correctly: they are left out (leading_frames_dropped), so frame 0 is the first
//   frame that decodes.
// - Packets an edit list cut (VideoPacket::discard) are decoded but never shown: not frames.
//
// Errors (InvalidArgument, starting with the file's name in quotes): no frames, no keyframe, two
// packets with one timestamp (their frames could not be told apart), a packet without a timestamp,
// more packets than limits.max_frames, and every error of the Demuxer.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "operators/video/demux.h"
#include "operators/video/video_limits.h"
#include "operators/video/video_types.h"

namespace conveyor::ops::video {

struct ClipIndex {
  std::string name;                // the file (path or URL), for messages
  VideoStreamInfo info;
  std::vector<int64_t> pts;        // per frame in presentation order: its timestamp (stream time base)
  std::vector<int64_t> keyframes;  // presentation indices of the keyframes, ascending
  int64_t packets = 0;             // packets of the video stream, empty ones not counted
  int64_t leading_frames_dropped = 0;

  int64_t frame_count() const { return static_cast<int64_t>(pts.size()); }
  // The presentation index of the frame with timestamp `pts`, or -1.
  int64_t FrameOfPts(int64_t pts) const;
  // The position in `keyframes` of the last keyframe at or before frame `frame` (frame >= 0).
  int64_t KeyframeBefore(int64_t frame) const;
  // Frame `frame`'s timestamp in seconds.
  double Seconds(int64_t frame) const;
};

// Reads every packet of the demuxer's video stream (from where it stands: a fresh demuxer) within
// limits.timeout_ms.
ClipIndex BuildClipIndex(Demuxer& demuxer, const VideoLimits& limits);

// Throws InvalidArgument naming the file when a demuxer reopened on it sees another stream than
// the one `index` was built from (codec or size): the file changed since it was indexed.
void CheckUnchanged(const VideoStreamInfo& info, const ClipIndex& index);

// Throws what BuildClipIndex would for an index that breaks `limits` (a cached index is checked
// against the limits of each reader that asks for it).
void CheckIndexLimits(const ClipIndex& index, const VideoLimits& limits);

// The process-wide cache of indices: a file's index is built once however many readers, epochs and
// pipelines ask. Keyed by (path, size, modification time), so a file rewritten in place is indexed
// again; failures are not cached. At most `capacity` indices (least recently used dropped).
// Thread-safe; two threads missing on one file may both build it (the first result is kept).
class ClipIndexCache {
 public:
  explicit ClipIndexCache(size_t capacity) : capacity_(capacity) {}
  static ClipIndexCache& Global();

  // The index of `path` (a local path or URL, opened through ByteSource).
  std::shared_ptr<const ClipIndex> Get(const std::string& path, const VideoLimits& limits);
  int64_t builds() const;
  int64_t hits() const;
  void Clear();

 private:
  struct Key {
    std::string path;
    int64_t size = 0;
    int64_t mtime_ns = 0;
    friend bool operator<(const Key& a, const Key& b) {
      return std::tie(a.path, a.size, a.mtime_ns) < std::tie(b.path, b.size, b.mtime_ns);
    }
  };
  using Lru = std::list<std::pair<Key, std::shared_ptr<const ClipIndex>>>;

  size_t capacity_;
  mutable std::mutex mutex_;
  Lru lru_;  // most recently used first
  std::map<Key, Lru::iterator> entries_;
  int64_t builds_ = 0, hits_ = 0;
};

}  // namespace conveyor::ops::video
