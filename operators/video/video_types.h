// What the video family's parts hand each other: a stream's facts and its encoded packets.
// The demuxer (libavformat, demux.h) produces them; the decoders (libavcodec on the CPU,
// NVDEC on the GPU) consume them. Plain structs, no FFmpeg or CUDA types, so every part of the
// family (and its tests) includes this header alone.
//
// | codec  | packet bytes for the decoders              | extradata                          |
// |--------|--------------------------------------------|------------------------------------|
// | H.264  | Annex B (start codes), SPS/PPS in-band     | avcC record as the container has it|
// | HEVC   | Annex B (start codes), VPS/SPS/PPS in-band | hvcC record as the container has it|
// | VP9    | one frame (or superframe) per packet       | empty                              |
// | AV1    | OBUs (low-overhead format), in-band seq hdr| av1C record                        |
// | MPEG-4 | elementary stream                          | VOL header                         |
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace conveyor::ops::video {

enum class VideoCodec : uint8_t { kH264, kHevc, kVp9, kAv1, kMpeg4, kOther };
const char* VideoCodecName(VideoCodec c);  // "h264", "hevc", "vp9", "av1", "mpeg4", "other"

// One video stream of a file, as the demuxer found it.
struct VideoStreamInfo {
  VideoCodec codec = VideoCodec::kOther;
  std::string codec_name;   // libavcodec's name (for messages: "h264", "prores", ...)
  int width = 0, height = 0;  // coded picture size, pixels
  int bit_depth = 8;          // luma bits per sample
  int chroma_format = 420;    // 400 (gray), 420, 422, 444
  int profile = -1;           // libavcodec's profile number, -1 unknown
  int time_base_num = 1, time_base_den = 1;  // pts unit, seconds = pts * num / den
  double avg_fps = 0;         // container's average frame rate (0: unknown)
  std::vector<uint8_t> extradata;
  // H.264 / HEVC: the parameter sets (VPS/SPS/PPS) as Annex B NAL units, the bitstream filter's
  // extradata. Packets carry them in band before IDR frames only: a decoder starting at a non-IDR
  // keyframe (open GOP, after a seek) must be fed these first. Empty for other codecs.
  std::vector<uint8_t> annexb_headers;
};

// One encoded access unit (a frame's bytes) in decode order. `data` stays valid until the next
// call into the demuxer that produced it.
struct VideoPacket {
  const uint8_t* data = nullptr;
  size_t size = 0;
  int64_t pts = 0;   // presentation time stamp, stream time base (INT64_MIN: none)
  int64_t dts = 0;   // decode time stamp (INT64_MIN: none)
  bool keyframe = false;
  // Decode it (later frames may reference it) but show nothing of it: an edit list cut it (MP4).
  bool discard = false;
};

}  // namespace conveyor::ops::video
