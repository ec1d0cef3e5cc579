// Writes small test videos of known content (frame_code.h: every frame carries its number) through
// libavcodec's encoders and libavformat's muxers, in the codecs and containers the video reader
// must take, with the features that make frame-accurate access hard: B-frames (decode order !=
// presentation order), variable frame rate, open GOPs (keyframes that are not IDR).
//
// | codec | encoders tried, first available | containers     | b_frames means                   |
// |-------|---------------------------------|----------------|----------------------------------|
// | h264  | libx264                         | mp4 mkv avi    | B-frames between references      |
// | hevc  | libx265                         | mp4 mkv        | B-frames between references      |
// | vp9   | libvpx-vp9                      | webm mkv mp4   | hidden alt-ref frames (lag 16)   |
// | av1   | libaom-av1, libsvtav1, librav1e | webm mkv mp4   | hidden alt-ref frames            |
// | mpeg4 | mpeg4                           | avi mp4 mkv    | B-frames between references      |
//
// Encoders Debian's FFmpeg lacks are found at run time (EncoderFor returns ""), so callers skip.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace conveyor::testvideos {

struct TestVideoOptions {
  std::string codec = "h264";     // h264, hevc, vp9, av1, mpeg4
  std::string container = "mp4";  // mp4, mkv, webm, avi
  int width = 128, height = 96;   // even; at least 64 x 64 for the code to read back reliably
  int frames = 48;
  int gop = 12;                   // keyframe interval, frames
  int b_frames = 0;               // 0: none (see the table)
  bool vfr = false;               // frame durations drawn in [0.5, 1.5] / fps (not avi)
  bool open_gop = false;          // h264/hevc: keyframes after the first are not IDR
  int fps = 25;
  uint32_t seed = 1;              // the VFR durations and the detail's texture
  bool detail = false;            // camera-like texture and grain in the bottom half (AddTestDetail)
  int first_frame = 0;            // the number drawn into the first frame
};

struct TestVideo {
  std::string path;
  std::string encoder;              // libavcodec's name of the encoder that wrote it
  std::vector<double> timestamps;   // seconds, per frame in presentation order, from 0
};

// The first encoder of `codec` that this FFmpeg has, or "".
std::string EncoderFor(const std::string& codec);

// Writes the video to `path` (the container from options, whatever the extension). Throws
// std::runtime_error saying what failed (no encoder, a refused option, a muxer error).
TestVideo WriteTestVideo(const std::string& path, const TestVideoOptions& options);

// Files for the error tests: a container with an audio stream only; a container whose video
// stream has no packets at all.
void WriteAudioOnly(const std::string& path);
void WriteVideoWithoutFrames(const std::string& path, const std::string& codec, const std::string& container);

}  // namespace conveyor::testvideos
