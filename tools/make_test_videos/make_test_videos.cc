// make_test_videos: small videos of known content for the video reader's tests and fuzz seeds.
//
//   make_test_videos [--codec h264|hevc|vp9|av1|mpeg4] [--container mp4|mkv|webm|avi]
//                    [--size WxH] [--frames N] [--gop G] [--bframes B] [--vfr] [--open-gop]
//                    [--fps F] [--seed S] [--first-frame K] [--detail] OUT
//   make_test_videos --list              which codecs this FFmpeg can encode (and with what)
//   make_test_videos --fuzz-seeds DIR    the seed corpus of fuzz/video_demux_fuzz (tiny clips)
//
// Every frame carries its number (frame_code.h), so a test reads back which frame it got; the
// tests write their own clips into a temporary folder through the same library (test_video.h).
// --detail adds camera-like texture below the code (the video benchmark's data, bench/video/).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

#include "tools/make_test_videos/test_video.h"

namespace {

using conveyor::testvideos::EncoderFor;
using conveyor::testvideos::TestVideoOptions;
using conveyor::testvideos::WriteTestVideo;

int Usage() {
  std::fprintf(stderr,
               "usage: make_test_videos [--codec C] [--container K] [--size WxH] [--frames N] [--gop G] "
               "[--bframes B] [--vfr] [--open-gop] [--fps F] [--seed S] [--first-frame K] [--detail] OUT\n"
               "       make_test_videos --list | --fuzz-seeds DIR\n");
  return 2;
}

int List() {
  for (const char* codec : {"h264", "hevc", "vp9", "av1", "mpeg4"}) {
    const std::string encoder = EncoderFor(codec);
    std::printf("%-6s %s\n", codec, encoder.empty() ? "(no encoder)" : encoder.c_str());
  }
  return 0;
}

// Tiny clips (a few KB each) covering each demuxer and bitstream filter the fuzz target reaches.
int FuzzSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  struct Seed {
    const char* name;
    const char* codec;
    const char* container;
    int b_frames;
    bool vfr;
  };
  const Seed seeds[] = {{"h264_b.mp4", "h264", "mp4", 2, false}, {"h264.avi", "h264", "avi", 0, false},
                        {"hevc_b.mkv", "hevc", "mkv", 2, false}, {"vp9_vfr.webm", "vp9", "webm", 0, true},
                        {"mpeg4_b.avi", "mpeg4", "avi", 1, false}, {"av1.mkv", "av1", "mkv", 0, false}};
  for (const Seed& s : seeds) {
    if (EncoderFor(s.codec).empty()) {
      std::printf("skipped %s: no %s encoder\n", s.name, s.codec);
      continue;
    }
    TestVideoOptions o;
    o.codec = s.codec;
    o.container = s.container;
    o.width = 32;
    o.height = 32;
    o.frames = 6;
    o.gop = 3;
    o.b_frames = s.b_frames;
    o.vfr = s.vfr;
    WriteTestVideo(dir + "/" + s.name, o);
    std::printf("wrote %s/%s (%ju bytes)\n", dir.c_str(), s.name,
                static_cast<uintmax_t>(std::filesystem::file_size(dir + "/" + s.name)));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  TestVideoOptions o;
  std::string out;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--list") return List();
      if (a == "--fuzz-seeds") return FuzzSeeds(value());
      if (a == "--codec") {
        o.codec = value();
      } else if (a == "--container") {
        o.container = value();
      } else if (a == "--size") {
        const std::string v = value();
        if (std::sscanf(v.c_str(), "%dx%d", &o.width, &o.height) != 2) throw std::runtime_error("--size WxH");
      } else if (a == "--frames") {
        o.frames = std::stoi(value());
      } else if (a == "--gop") {
        o.gop = std::stoi(value());
      } else if (a == "--bframes") {
        o.b_frames = std::stoi(value());
      } else if (a == "--fps") {
        o.fps = std::stoi(value());
      } else if (a == "--seed") {
        o.seed = static_cast<uint32_t>(std::stoul(value()));
      } else if (a == "--first-frame") {
        o.first_frame = std::stoi(value());
      } else if (a == "--vfr") {
        o.vfr = true;
      } else if (a == "--open-gop") {
        o.open_gop = true;
      } else if (a == "--detail") {
        o.detail = true;
      } else if (!a.empty() && a[0] != '-' && out.empty()) {
        out = a;
      } else {
        return Usage();
      }
    }
    if (out.empty()) return Usage();
    const auto video = WriteTestVideo(out, o);
    std::printf("wrote %s: %s, %d frames\n", out.c_str(), video.encoder.c_str(), o.frames);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_test_videos: %s\n", e.what());
    return 1;
  }
}
