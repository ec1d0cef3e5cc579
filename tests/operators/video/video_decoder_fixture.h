// decoders.video's tests (video_decoder_op_test, video_decoder_args_test): encoded clips as bytes,
// the operator run through OpHarness, and the frame numbers read back.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/harness.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::testing {

struct Clip {
  std::string codec, container;
  int width = 64, height = 64, frames = 20, b_frames = 0, first = 0;
};

// 20 frames numbered 100..119, GOP 8, B-frames.
inline const Clip kH264{"h264", "mp4", 64, 64, 20, 2, 100};

// The encoded bytes of `c` (written once per spec into TEST_TMPDIR), or empty when this FFmpeg
// has no encoder for its codec.
inline const std::vector<uint8_t>& Encoded(const Clip& c) {
  static std::map<std::string, std::vector<uint8_t>> cache;
  const std::string key = c.codec + "." + c.container + "_" + std::to_string(c.width) + "x" +
                          std::to_string(c.height) + "_" + std::to_string(c.frames) + "_" +
                          std::to_string(c.b_frames) + "_" + std::to_string(c.first);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  static const std::string dir = FreshTempDir("video_decoder");
  testvideos::TestVideoOptions o;
  o.codec = c.codec;
  o.container = c.container;
  o.width = c.width;
  o.height = c.height;
  o.frames = c.frames;
  o.gop = 8;
  o.b_frames = c.b_frames;
  o.first_frame = c.first;
  const std::string path = dir + "/" + key + "." + c.container;
  std::vector<uint8_t> bytes;
  if (MakeVideo(path, o)) bytes = ReadBytes(path);
  return cache.emplace(key, std::move(bytes)).first->second;
}

inline TensorListCPU Batch(const std::vector<std::vector<uint8_t>>& files) {
  std::vector<Shape> shapes;
  for (const auto& f : files) shapes.push_back(Shape{static_cast<int64_t>(f.size())});
  return MakeBatch<uint8_t>(shapes, files);
}

inline OpSpec Decoder() { return OpSpec("decoders.video", "dec").AddInput("encoded").AddOutput("video"); }

inline std::vector<int> FramesOf(const TensorListCPU& video, int i) {
  const Shape s = video.shape(i);
  return ReadFrameNumbers(static_cast<const uint8_t*>(video.raw_sample(i)), s[0], static_cast<int>(s[2]),
                          static_cast<int>(s[1]));
}

inline std::vector<int> Range(int first, int count, int stride = 1) {
  std::vector<int> out;
  for (int k = 0; k < count; ++k) out.push_back(first + k * stride);
  return out;
}

// The message of the error decoding `files` with `spec` throws, or "" when none.
inline std::string ErrorOf(OpSpec spec, const std::vector<std::vector<uint8_t>>& files) {
  try {
    OpHarness h(std::move(spec), Device::kCpu, static_cast<int>(files.size()));
    h.SetInput(0, Batch(files));
    h.Run();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace conveyor::testing
