// What the tests of pipelines/video_train.yaml share (CPU: video_pipeline_test.cc, GPU:
// video_pipeline_gpu_test.cc): one run over the sample clips (make_sample_data's videos/: every
// frame carries its class, clip and frame number, sample_videos.h) with the crop set to the whole
// frame, and the numbers read back from the normalized float16 FCHW output.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/tensor/half.h"
#include "operators/readers/npy_format.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/shipped_pipelines.h"
#include "tools/make_sample_data/sample_videos.h"
#include "tools/make_test_videos/frame_code.h"

namespace conveyor::cli_test {

namespace sd = sampledata;

inline constexpr int kFrames = 16, kStride = 2, kStep = 8, kSize = 112;
inline constexpr float kMean[3] = {110.20f, 100.64f, 95.99f};
inline constexpr float kStd[3] = {58.15f, 56.47f, 55.33f};

struct Clip {
  std::vector<int> straight, mirrored;  // per frame, read as is and mirrored back (-1: unreadable)
  int label = -1;
};

// The 16 numbers a clip starting at the frame that carries `first` holds.
inline std::vector<int> ClipFrom(int first) {
  std::vector<int> want;
  for (int f = 0; f < kFrames; ++f) want.push_back(first + f * kStride);
  return want;
}

// A mirrored frame code still reads as some number (each row's bits reversed), so a clip's
// orientation is the one in which all of its frames form a clip.
inline bool IsMirrored(const Clip& c) {
  return c.straight != ClipFrom(c.straight[0]) && c.mirrored == ClipFrom(c.mirrored[0]);
}

// The numbers in the clip's orientation.
inline const std::vector<int>& Numbers(const Clip& c) { return IsMirrored(c) ? c.mirrored : c.straight; }

// Frame f of sample s of a [N, F, 3, H, W] float16 batch, normalization undone, as packed RGB;
// `mirror` reverses the columns.
inline std::vector<uint8_t> FrameRgb(const uint16_t* batch, int s, int f, bool mirror) {
  std::vector<uint8_t> rgb(static_cast<size_t>(kSize) * kSize * 3);
  const uint16_t* frame = batch + (static_cast<size_t>(s) * kFrames + f) * 3 * kSize * kSize;
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < kSize; ++y) {
      for (int x = 0; x < kSize; ++x) {
        const float v = HalfBitsToFloat(frame[(c * kSize + y) * kSize + x]) * kStd[c] + kMean[c];
        const int col = mirror ? kSize - 1 - x : x;
        rgb[(static_cast<size_t>(y) * kSize + col) * 3 + c] =
            static_cast<uint8_t>(std::clamp(std::lround(v), 0l, 255l));
      }
    }
  }
  return rgb;
}

// Runs the pipeline on `device` for one batch of the whole epoch (12 clips) and reads every clip
// back; `summary` receives what the CLI printed.
inline std::vector<Clip> RunAndRead(const std::string& device, const std::vector<std::string>& sets,
                                    std::string* summary = nullptr) {
  SampleData();
  const std::string dir = MakeTempDir("video_train_" + device);
  std::vector<std::string> args = {"run", "pipelines/video_train.yaml", "--device", device, "--batch-size", "12",
                                   "--iterations", "1", "--no-progress", "--save-outputs", dir,
                                   // The crop window is the whole 64 x 48 frame: only a resize to 112 x 112.
                                   "--set", "crop.random_area=1,1",
                                   "--set", "crop.random_aspect_ratio=1.3333333,1.3333333"};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  const CliResult r = RunConveyor(args);
  EXPECT_EQ(r.status, 0) << r.err;
  if (summary) *summary = r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr("epoch of reader \"reader\": 12 samples = 1 iterations"));
  const std::string bytes = ReadText(dir + "/clips_out_000000.npy");
  const ops::NpyHeader h = ops::ParseNpyHeader(bytes.data(), bytes.size(), "clips_out");
  EXPECT_EQ(h.dtype, DType::kFloat16);
  EXPECT_EQ(h.shape, (Shape{12, kFrames, 3, kSize, kSize}));
  const std::string label_bytes = ReadText(dir + "/labels_000000.npy");
  const ops::NpyHeader lh = ops::ParseNpyHeader(label_bytes.data(), label_bytes.size(), "labels");
  if (h.shape != Shape{12, kFrames, 3, kSize, kSize} || lh.shape != Shape{12, 1}) return {};
  const auto* batch = reinterpret_cast<const uint16_t*>(bytes.data() + h.data_offset);
  std::vector<Clip> clips(12);
  for (int s = 0; s < 12; ++s) {
    Clip& clip = clips[static_cast<size_t>(s)];
    std::memcpy(&clip.label, label_bytes.data() + lh.data_offset + 4 * s, 4);
    for (int f = 0; f < kFrames; ++f) {
      for (const bool mirror : {false, true}) {
        (mirror ? clip.mirrored : clip.straight)
            .push_back(testvideos::ReadFrameNumber(FrameRgb(batch, s, f, mirror).data(), kSize, kSize, kSize * 3));
      }
    }
  }
  return clips;
}

// Every clip of the epoch once, each a valid clip of its file with its class's label.
inline void ExpectTheEpochsClips(const std::vector<Clip>& clips) {
  ASSERT_EQ(clips.size(), 12u);
  std::set<std::tuple<int, int, int>> seen;  // (class, clip, first frame)
  for (size_t s = 0; s < clips.size(); ++s) {
    const Clip& c = clips[s];
    const bool mirrored = IsMirrored(c);
    SCOPED_TRACE("sample " + std::to_string(s) + (mirrored ? " (mirrored)" : ""));
    const std::vector<int>& numbers = Numbers(c);
    const int first = numbers[0];
    ASSERT_GE(first, 0) << "frame 0 unreadable";
    const int label = first / 1000, file = first % 1000 / 100, start = first % 100;
    EXPECT_EQ(c.label, label);
    EXPECT_LT(file, sd::kVideosPerClass);
    EXPECT_EQ(start % kStep, 0);
    EXPECT_LT(start + (kFrames - 1) * kStride, sd::kVideoFrames);
    std::vector<int> want;
    for (int f = 0; f < kFrames; ++f) want.push_back(sd::SampleVideoFrameNumber(label, file, start + f * kStride));
    EXPECT_EQ(numbers, want) << "16 frames at stride 2, all in one orientation (mirrored back they read "
                             << ::testing::PrintToString(c.mirrored) << ")";
    seen.insert({label, file, start});
  }
  // 3 classes x 2 files x starts 0 and 8.
  EXPECT_EQ(seen.size(), static_cast<size_t>(sd::kVideoClasses * sd::kVideosPerClass * 2));
}

}  // namespace conveyor::cli_test
