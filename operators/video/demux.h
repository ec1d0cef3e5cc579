// Demuxer: one video stream of a file or of bytes in memory, through libavformat, as the packets
// the decoders take (video_types.h).
//
//   ByteSource (path: pread; URL: the fetch layer; bytes: memory)
//      │  AVIOContext with our read/seek callbacks (the same code for every source)
//      ▼
//   libavformat: probe the container, pick the best video stream (av_find_best_stream)
//      │  av_read_frame → packets of that stream only, in decode order
//      ▼
//   H.264 / HEVC: h264_mp4toannexb / hevc_mp4toannexb (libavcodec's bitstream filters): length-
//   prefixed NAL units (MP4, MKV) become Annex B with parameter sets in band — what NVDEC's parser
//   takes; Annex B input (AVI, raw streams) passes through unchanged
//      ▼
//   VideoPacket {data, size, pts, dts, keyframe}
//
// Timestamps: libavformat's AVFMT_FLAG_GENPTS fills presentation timestamps a container lacks
// (AVI) from the decode timestamps; a packet with neither is reported as kNoTimestamp.
//
// Limits (video_limits.h): the declared width x height is checked at open, each packet's size as
// it is read; a wall-clock deadline (SetDeadline) interrupts libavformat's blocking reads.
// Errors are InvalidArgument starting with the source's name in quotes:
//   "clip.mp4": not a video libavformat can read: Invalid data found when processing input
//   "song.mkv": no video stream (1 stream: audio pcm_s16le)
// Not thread-safe: one demuxer per thread (the reader keeps a pool of them).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "operators/readers/io/byte_source.h"
#include "operators/video/video_limits.h"
#include "operators/video/video_types.h"

struct AVCodecParameters;

namespace conveyor::ops::video {

constexpr int64_t kNoTimestamp = INT64_MIN;

class Demuxer {
 public:
  // Opens `source` (held for the demuxer's life) and finds its best video stream.
  Demuxer(std::shared_ptr<const ByteSource> source, const VideoLimits& limits);
  ~Demuxer();
  Demuxer(const Demuxer&) = delete;
  Demuxer& operator=(const Demuxer&) = delete;

  const VideoStreamInfo& info() const { return info_; }
  const std::string& name() const { return source_->name(); }
  // The parameters a decoder opens with: the bitstream filter's output (Annex B parameter sets as
  // extradata for H.264/HEVC), else the stream's own. Valid for the demuxer's life.
  const AVCodecParameters* codec_parameters() const;
  // The container's format ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "avi").
  std::string format_name() const;

  // The next packet of the video stream in decode order; false at the end of the stream. Empty
  // packets (a container's "repeat the last frame") are skipped. `packet->data` stays valid until
  // the next call. Throws InvalidArgument for read errors, oversized packets and a passed deadline.
  bool Next(VideoPacket* packet);

  // Positions the stream so that Next() returns packets from a keyframe at or before `pts`
  // (libavformat's seek, AVSEEK_FLAG_BACKWARD): containers land on an index entry, which callers
  // check against their own index (ClipDecoder). SeekToStart goes back to the first packet.
  void SeekToKeyframe(int64_t pts);
  void SeekToStart();

  // Calls after `deadline` throw (and interrupt libavformat's blocking reads). Default: none.
  void SetDeadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }
  bool DeadlinePassed() const { return std::chrono::steady_clock::now() > deadline_; }

  int64_t packets_read() const { return packets_read_; }

 private:
  struct Av;  // the FFmpeg handles (demux.cc)
  void Open();
  int FindStreamInfo();
  void ResetFilter();
  void CheckHevcParameterSets() const;
  bool ReadFiltered(VideoPacket* packet);

  std::shared_ptr<const ByteSource> source_;
  VideoLimits limits_;
  std::unique_ptr<Av> av_;
  VideoStreamInfo info_;
  int64_t position_ = 0;  // the AVIO read position in source_
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  int64_t packets_read_ = 0;
  bool input_done_ = false;  // av_read_frame reached the end; the filter is being drained

  friend int DemuxerRead(void* opaque, uint8_t* buf, int size);
  friend int64_t DemuxerSeek(void* opaque, int64_t offset, int whence);
  friend int DemuxerInterrupt(void* opaque);
};

}  // namespace conveyor::ops::video
