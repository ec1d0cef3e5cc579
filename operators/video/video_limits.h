// The bounds that keep a damaged or hostile file from costing unbounded memory or time. Every
// size or count a file declares is checked against these before anything is allocated for it.
//
// | limit             | default          | checked                                                   |
// |-------------------|------------------|-----------------------------------------------------------|
// | max_pixels        | 2^26 (8192^2)    | width x height the stream declares (Demuxer) and every    |
// |                   |                  | decoded frame's (ClipDecoder), before any buffer          |
// | max_frames        | 2^22 (~39 h at   | packets of the video stream while the index is built:     |
// |                   |  30 fps)         | more is an error, so the index's arrays stay bounded      |
// | max_packet_bytes  | 2^26             | one encoded frame                                         |
// | timeout_ms        | 60 s             | one index build, one clip's demux + decode (wall clock;   |
// |                   |                  | also interrupts libavformat's blocking reads)             |
// | keyframe_retries  | 3                | clips whose decode from the keyframe before them is       |
// |                   |                  | broken (non-IDR keyframes) go back this many keyframes    |
#pragma once

#include <cstdint>

namespace conveyor::ops::video {

struct VideoLimits {
  int64_t max_pixels = int64_t{1} << 26;
  int64_t max_frames = int64_t{1} << 22;
  int64_t max_packet_bytes = int64_t{1} << 26;
  int64_t timeout_ms = 60000;
  int keyframe_retries = 3;
};

}  // namespace conveyor::ops::video
