// frame_selection.h on frame numbers alone: DALI's rules for start_frame, sequence_length /
// end_frame, stride and each pad_mode, the decode list (each frame once) with its places, and
// FillRepeatedFrames over real bytes; ClipDecoder writing each frame to its own place. The
// operator's counterpart: video_decoder_args_test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/demux.h"
#include "operators/video/frame_selection.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::ops::video {
namespace {

constexpr int64_t F = FramePlan::kFill;

FrameRequest Request(int64_t start, int64_t length, int64_t stride = 1, std::optional<int64_t> end = std::nullopt) {
  FrameRequest r;
  r.start = start;
  r.sequence_length = length;
  r.stride = stride;
  r.end = end;
  return r;
}

std::vector<int64_t> Sources(const FrameRequest& r, PadMode pad, int64_t frames) {
  const FramePlan plan = SelectFrames(r, pad, frames);
  EXPECT_EQ(plan.frames(), SelectedFrameCount(r, pad, frames));
  return plan.sources;
}

TEST(FrameSelection, PadModeNamesAreDalis) {
  EXPECT_EQ(PadModeNames(), (std::vector<std::string>{"none", "constant", "edge", "repeat", "reflect_1001", "symmetric",
                                                      "reflect_101", "reflect"}));
  EXPECT_EQ(ParsePadMode("repeat"), PadMode::kEdge);
  EXPECT_EQ(ParsePadMode("symmetric"), PadMode::kReflect1001);
  EXPECT_EQ(ParsePadMode("reflect"), PadMode::kReflect101);
  EXPECT_EQ(ParsePadMode("wrap"), std::nullopt);
}

TEST(FrameSelection, WithinTheVideoEveryModeAgrees) {
  for (PadMode pad : {PadMode::kNone, PadMode::kConstant, PadMode::kEdge, PadMode::kReflect1001, PadMode::kReflect101}) {
    EXPECT_EQ(Sources(Request(0, 0), pad, 5), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(Sources(Request(1, 0, 2), pad, 6), (std::vector<int64_t>{1, 3, 5}));
    EXPECT_EQ(Sources(Request(2, 2, 3), pad, 10), (std::vector<int64_t>{2, 5}));
    EXPECT_EQ(Sources(Request(0, 0, 3, 10), pad, 20), (std::vector<int64_t>{0, 3, 6, 9})) << "DALI's example";
    EXPECT_EQ(Sources(Request(4, 0, 1, 5), pad, 20), (std::vector<int64_t>{4}));
  }
}

TEST(FrameSelection, PastTheEndByPadMode) {
  // DALI's pad_mode examples on a 3-frame video ABC, six frames asked.
  EXPECT_EQ(Sources(Request(0, 6), PadMode::kNone, 3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(Sources(Request(0, 6), PadMode::kConstant, 3), (std::vector<int64_t>{0, 1, 2, F, F, F}));
  EXPECT_EQ(Sources(Request(0, 6), PadMode::kEdge, 3), (std::vector<int64_t>{0, 1, 2, 2, 2, 2}));
  EXPECT_EQ(Sources(Request(0, 6), PadMode::kReflect1001, 3), (std::vector<int64_t>{0, 1, 2, 2, 1, 0}));
  EXPECT_EQ(Sources(Request(0, 5), PadMode::kReflect101, 3), (std::vector<int64_t>{0, 1, 2, 1, 0}));
  // Past one period: the mirror turns again at the first frame.
  EXPECT_EQ(Sources(Request(0, 9), PadMode::kReflect1001, 3), (std::vector<int64_t>{0, 1, 2, 2, 1, 0, 0, 1, 2}));
  EXPECT_EQ(Sources(Request(0, 9), PadMode::kReflect101, 3), (std::vector<int64_t>{0, 1, 2, 1, 0, 1, 2, 1, 0}));
  EXPECT_EQ(Sources(Request(0, 4), PadMode::kReflect101, 1), (std::vector<int64_t>{0, 0, 0, 0})) << "one frame";
  EXPECT_EQ(Sources(Request(0, 3), PadMode::kReflect1001, 1), (std::vector<int64_t>{0, 0, 0}));
}

TEST(FrameSelection, PaddingMapsFrameNumbersAtTheStride) {
  // 20 frames, 13, 16, 19, 22: frame 22 is past the end.
  EXPECT_EQ(Sources(Request(13, 4, 3), PadMode::kNone, 20), (std::vector<int64_t>{13, 16, 19}));
  EXPECT_EQ(Sources(Request(13, 4, 3), PadMode::kConstant, 20), (std::vector<int64_t>{13, 16, 19, F}));
  EXPECT_EQ(Sources(Request(13, 4, 3), PadMode::kEdge, 20), (std::vector<int64_t>{13, 16, 19, 19}));
  EXPECT_EQ(Sources(Request(13, 4, 3), PadMode::kReflect1001, 20), (std::vector<int64_t>{13, 16, 19, 17}));
  EXPECT_EQ(Sources(Request(13, 4, 3), PadMode::kReflect101, 20), (std::vector<int64_t>{13, 16, 19, 16}));
}

TEST(FrameSelection, EndFrame) {
  // [15, 25) at stride 2 in 20 frames: 15 17 19, then 21 23 past the end.
  EXPECT_EQ(Sources(Request(15, 0, 2, 25), PadMode::kNone, 20), (std::vector<int64_t>{15, 17, 19}));
  EXPECT_EQ(Sources(Request(15, 0, 2, 25), PadMode::kConstant, 20), (std::vector<int64_t>{15, 17, 19, F, F}));
  EXPECT_EQ(Sources(Request(15, 0, 2, 25), PadMode::kEdge, 20), (std::vector<int64_t>{15, 17, 19, 19, 19}));
  EXPECT_EQ(SelectedFrameCount(Request(0, 0, 3, 10), PadMode::kConstant, 20), 4) << "ceil((end - start) / stride)";
  EXPECT_EQ(SelectedFrameCount(Request(0, 0, 1, 1000000), PadMode::kNone, 20), 20) << "none stops at the end";
  EXPECT_EQ(SelectedFrameCount(Request(0, 0, 1, 1000000), PadMode::kConstant, 20), 1000000);
}

TEST(FrameSelection, DecodeListHasEachFrameOnceAtItsFirstPlace) {
  // 17 19 (21→17) (23→15) (25→13) (27→11): decode 11 13 15 17 19, into places 5 4 3 0 1.
  const FramePlan plan = SelectFrames(Request(17, 6, 2), PadMode::kReflect101, 20);
  EXPECT_EQ(plan.sources, (std::vector<int64_t>{17, 19, 17, 15, 13, 11}));
  EXPECT_EQ(plan.decode, (std::vector<int64_t>{11, 13, 15, 17, 19}));
  EXPECT_EQ(plan.first_slot, (std::vector<int64_t>{5, 4, 3, 0, 1}));
  const FramePlan fill = SelectFrames(Request(0, 4), PadMode::kConstant, 2);
  EXPECT_EQ(fill.decode, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(fill.first_slot, (std::vector<int64_t>{0, 1}));
}

TEST(FrameSelection, FillRepeatedFramesCopiesAndFills) {
  // 2x1-pixel frames: sources 1, 0, fill, 1, 0. Places 0 and 1 hold their decoded frames.
  FramePlan plan;
  plan.sources = {1, 0, F, 1, 0};
  plan.decode = {0, 1};
  plan.first_slot = {1, 0};
  constexpr int64_t kFrameBytes = 6;
  std::vector<uint8_t> out(5 * kFrameBytes, 0xA5);
  for (int b = 0; b < kFrameBytes; ++b) {
    out[static_cast<size_t>(b)] = static_cast<uint8_t>(10 + b);               // frame 1
    out[static_cast<size_t>(kFrameBytes + b)] = static_cast<uint8_t>(20 + b);  // frame 0
  }
  FillRepeatedFrames(plan, out.data(), kFrameBytes, {7, 8, 9});
  const std::vector<uint8_t> frame1 = {10, 11, 12, 13, 14, 15}, frame0 = {20, 21, 22, 23, 24, 25};
  const std::vector<uint8_t> filled = {7, 8, 9, 7, 8, 9};
  const auto at = [&](int k) {
    return std::vector<uint8_t>(out.begin() + k * kFrameBytes, out.begin() + (k + 1) * kFrameBytes);
  };
  EXPECT_EQ(at(0), frame1);
  EXPECT_EQ(at(1), frame0);
  EXPECT_EQ(at(2), filled);
  EXPECT_EQ(at(3), frame1);
  EXPECT_EQ(at(4), frame0);
}

TEST(FrameSelection, StartBeyondTheEnd) {
  for (PadMode pad : {PadMode::kNone, PadMode::kConstant, PadMode::kEdge}) {
    try {
      SelectedFrameCount(Request(20, 1), pad, 20);
      ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), "start_frame 20 is beyond the end: the video has 20 frames");
    }
  }
  EXPECT_THROW(SelectFrames(Request(0, 1), PadMode::kConstant, 0), InvalidArgument) << "a video without frames";
}

// The plan's decode list goes to ClipDecoder with one destination per frame: 11 13 15 17 19 of a
// 20-frame clip into places 5 4 3 0 1 (above), then FillRepeatedFrames completes the output.
TEST(FrameSelection, ClipDecoderWritesEachFrameToItsPlace) {
  testvideos::TestVideoOptions o;
  o.width = o.height = 64;
  o.frames = 20;
  o.gop = 8;
  o.b_frames = 2;
  o.first_frame = 300;
  const std::string path = testing::FreshTempDir("frame_selection") + "/clip.mp4";
  ASSERT_TRUE(testing::MakeVideo(path, o));
  const VideoLimits limits;
  std::shared_ptr<const ByteSource> source = OpenByteSource(path);
  Demuxer demuxer(source, limits);
  auto index = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits));
  auto decoder = OpenCpuClipDecoder(source, index, limits, CpuDecoderOptions{});
  const FramePlan plan = SelectFrames(Request(17, 6, 2), PadMode::kReflect101, 20);
  const int64_t frame_bytes = decoder->frame_bytes();
  std::vector<uint8_t> out(static_cast<size_t>(plan.frames() * frame_bytes), 0xA5);
  std::vector<uint8_t*> places;
  for (int64_t slot : plan.first_slot) places.push_back(out.data() + slot * frame_bytes);
  decoder->Decode(plan.decode, places);
  FillRepeatedFrames(plan, out.data(), frame_bytes, {0, 0, 0});
  EXPECT_EQ(testing::ReadFrameNumbers(out.data(), plan.frames(), 64, 64),
            (std::vector<int>{317, 319, 317, 315, 313, 311}));
  try {
    decoder->Decode({1, 2}, std::vector<uint8_t*>{out.data()});
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "\"" + path + "\": 2 frames asked with 1 destinations");
  }
}

}  // namespace
}  // namespace conveyor::ops::video
