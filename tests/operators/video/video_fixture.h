// Test videos for the video family's tests: written by tools/make_test_videos into a fresh folder
// under TEST_TMPDIR (never committed), and read back by the frame code each frame carries.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tools/make_test_videos/frame_code.h"
#include "tools/make_test_videos/test_video.h"

namespace conveyor::testing {

inline std::string FreshTempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(base ? base : "/tmp") / (name + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

// The video, or nullopt (the caller skips) when this FFmpeg has no encoder for the codec.
inline std::optional<testvideos::TestVideo> MakeVideo(const std::string& path, const testvideos::TestVideoOptions& o) {
  if (testvideos::EncoderFor(o.codec).empty()) return std::nullopt;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  return testvideos::WriteTestVideo(path, o);
}

// The frame numbers drawn into `count` packed RGB frames of width x height laid one after another.
inline std::vector<int> ReadFrameNumbers(const uint8_t* rgb, int64_t count, int width, int height) {
  std::vector<int> numbers;
  for (int64_t i = 0; i < count; ++i) {
    numbers.push_back(testvideos::ReadFrameNumber(rgb + i * width * height * 3, width, height, width * 3));
  }
  return numbers;
}

inline std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace conveyor::testing

namespace conveyor::testing {

// A class-folder data set of short clips for the reader's tests: file f's frames carry the
// numbers base(f) + 0, 1, ..., so a decoded frame says which file and which frame it is.
struct ClipDataset {
  struct File {
    std::string path;
    int32_t label = 0;  // sorted class folder index
    int frames = 0;
    int base = 0;       // the number drawn into its frame 0
  };
  std::string root;
  std::vector<File> files;  // in the order readers.video lists them (sorted by class, then path)

  // The file whose frames carry `number`, and the frame's index in it; nullptr when none.
  const File* FileOf(int number, int* frame) const {
    for (const File& f : files) {
      if (number >= f.base && number < f.base + f.frames) {
        *frame = number - f.base;
        return &f;
      }
    }
    return nullptr;
  }
};

struct ClipFileSpec {
  std::string class_name;
  std::string name;  // file name with extension
  int frames;
  std::string codec = "h264";
  std::string container = "mp4";
  int b_frames = 2;
  bool vfr = false;
};

// Folders `class_name` under a fresh root; bases 1000 * (k + 1) in spec order. Small frames (64 x
// 64, the frame code's minimum) keep encoding and decoding fast.
inline ClipDataset MakeClipDataset(const std::vector<ClipFileSpec>& specs) {
  ClipDataset d;
  d.root = FreshTempDir("clips");
  std::vector<std::string> classes;
  for (const ClipFileSpec& s : specs) classes.push_back(s.class_name);
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  for (size_t k = 0; k < specs.size(); ++k) {
    const ClipFileSpec& s = specs[k];
    testvideos::TestVideoOptions o;
    o.codec = s.codec;
    o.container = s.container;
    o.width = 64;
    o.height = 64;
    o.frames = s.frames;
    o.gop = 8;
    o.b_frames = s.b_frames;
    o.vfr = s.vfr;
    o.first_frame = 1000 * static_cast<int>(k + 1);
    ClipDataset::File f;
    f.path = d.root + "/" + s.class_name + "/" + s.name;
    f.label = static_cast<int32_t>(std::find(classes.begin(), classes.end(), s.class_name) - classes.begin());
    f.frames = s.frames;
    f.base = o.first_frame;
    std::filesystem::create_directories(d.root + "/" + s.class_name);
    testvideos::WriteTestVideo(f.path, o);
    d.files.push_back(f);
  }
  std::sort(d.files.begin(), d.files.end(), [](const ClipDataset::File& a, const ClipDataset::File& b) {
    return std::tie(a.label, a.path) < std::tie(b.label, b.path);
  });
  return d;
}

}  // namespace conveyor::testing
