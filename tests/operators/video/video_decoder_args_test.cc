// decoders.video's frame selection on real decodes (frame_selection.h's rules, checked on its own
// in frame_selection_test): end_frame ranges, each pad_mode's padded frames (their frame numbers,
// fill_value's colour), arguments fed per sample, and each argument error's exact message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/operators/video/video_decoder_fixture.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kFill = -1;  // in a want list: a frame of fill_value

// Decodes kH264 (frames 100..119) with `spec`.
TensorListCPU Decode(OpSpec spec) {
  OpHarness h(std::move(spec), Device::kCpu, 1);
  h.SetInput(0, Batch({Encoded(kH264)}));
  h.Run();
  return h.OutputCpu(0);
}

// The frame numbers of sample 0, kFill for a frame whose every pixel is `fill` (R, G, B).
std::vector<int> Shown(const TensorListCPU& video, const std::array<uint8_t, 3>& fill = {0, 0, 0}) {
  const Shape s = video.shape(0);
  const int64_t frame_bytes = s[1] * s[2] * 3;
  std::vector<int> numbers = FramesOf(video, 0);
  for (int64_t k = 0; k < s[0]; ++k) {
    const uint8_t* frame = static_cast<const uint8_t*>(video.raw_sample(0)) + k * frame_bytes;
    bool filled = true;
    for (int64_t b = 0; b < frame_bytes && filled; ++b) filled = frame[b] == fill[static_cast<size_t>(b % 3)];
    if (filled) numbers[static_cast<size_t>(k)] = kFill;
  }
  return numbers;
}

TEST(VideoDecoderArgs, EndFrameRanges) {
  struct Case {
    int64_t start, end, stride;
    std::vector<int> want;
  };
  for (const Case& k : {Case{0, 10, 1, Range(100, 10)}, Case{0, 10, 3, {100, 103, 106, 109}},
                        Case{3, 20, 4, Range(103, 5, 4)}, Case{5, 6, 1, {105}}, Case{18, 20, 1, {118, 119}},
                        Case{9, 17, 2, Range(109, 4, 2)}}) {
    const TensorListCPU video = Decode(Decoder()
                                           .SetArg("start_frame", k.start)
                                           .SetArg("end_frame", k.end)
                                           .SetArg("stride", k.stride));
    EXPECT_EQ(video.shape(0), (Shape{static_cast<int64_t>(k.want.size()), 64, 64, 3}));
    EXPECT_EQ(Shown(video), k.want) << "start_frame " << k.start << " end_frame " << k.end << " stride " << k.stride;
  }
}

TEST(VideoDecoderArgs, EachPadModePastTheEnd) {
  struct Case {
    std::string pad;
    std::vector<int> want;
  };
  // Frames 16..22 of 20: 116..119, then three past the end.
  for (const Case& k : {Case{"none", {116, 117, 118, 119}},
                        Case{"constant", {116, 117, 118, 119, kFill, kFill, kFill}},
                        Case{"edge", {116, 117, 118, 119, 119, 119, 119}},
                        Case{"repeat", {116, 117, 118, 119, 119, 119, 119}},
                        Case{"reflect_1001", {116, 117, 118, 119, 119, 118, 117}},
                        Case{"symmetric", {116, 117, 118, 119, 119, 118, 117}},
                        Case{"reflect_101", {116, 117, 118, 119, 118, 117, 116}},
                        Case{"reflect", {116, 117, 118, 119, 118, 117, 116}}}) {
    const TensorListCPU video = Decode(
        Decoder().SetArg("start_frame", int64_t{16}).SetArg("sequence_length", int64_t{7}).SetArg("pad_mode", k.pad));
    EXPECT_EQ(video.shape(0), (Shape{static_cast<int64_t>(k.want.size()), 64, 64, 3})) << k.pad;
    EXPECT_EQ(Shown(video), k.want) << k.pad;
  }
}

TEST(VideoDecoderArgs, PaddingMirrorsFrameNumbersAtTheStride) {
  struct Case {
    std::string pad;
    std::vector<int> want;
  };
  // 17, 19, then 21 23 25 27 past the end: mirrored at frame 19 (DALI maps frame numbers), so
  // frames decoded after the sequence's own ones and before them, some shown twice.
  for (const Case& k : {Case{"edge", {117, 119, 119, 119, 119, 119}},
                        Case{"reflect_1001", {117, 119, 118, 116, 114, 112}},
                        Case{"reflect_101", {117, 119, 117, 115, 113, 111}}}) {
    const TensorListCPU video = Decode(Decoder()
                                           .SetArg("start_frame", int64_t{17})
                                           .SetArg("sequence_length", int64_t{6})
                                           .SetArg("stride", int64_t{2})
                                           .SetArg("pad_mode", k.pad));
    EXPECT_EQ(Shown(video), k.want) << k.pad;
  }
  // More than one period: 0..19, 19..0, 0..4.
  std::vector<int> want = Range(100, 20);
  for (int f = 119; f >= 100; --f) want.push_back(f);
  for (int f = 100; f < 105; ++f) want.push_back(f);
  EXPECT_EQ(Shown(Decode(Decoder().SetArg("sequence_length", int64_t{45}).SetArg("pad_mode", std::string("symmetric")))),
            want);
}

TEST(VideoDecoderArgs, EndFramePastTheEnd) {
  // [15, 25) at stride 2: 115 117 119, then 21 and 23 past the end.
  const auto spec = [](const std::string& pad) {
    return Decoder()
        .SetArg("start_frame", int64_t{15})
        .SetArg("end_frame", int64_t{25})
        .SetArg("stride", int64_t{2})
        .SetArg("pad_mode", pad);
  };
  EXPECT_EQ(Shown(Decode(spec("none"))), (std::vector<int>{115, 117, 119}));
  EXPECT_EQ(Shown(Decode(spec("constant"))), (std::vector<int>{115, 117, 119, kFill, kFill}));
  EXPECT_EQ(Shown(Decode(spec("edge"))), (std::vector<int>{115, 117, 119, 119, 119}));
}

TEST(VideoDecoderArgs, FillValue) {
  // The default pad_mode is DALI's: constant, black.
  EXPECT_EQ(Shown(Decode(Decoder().SetArg("start_frame", int64_t{19}).SetArg("sequence_length", int64_t{3}))),
            (std::vector<int>{119, kFill, kFill}));
  EXPECT_EQ(Shown(Decode(Decoder()
                             .SetArg("start_frame", int64_t{18})
                             .SetArg("sequence_length", int64_t{3})
                             .SetArg("fill_value", std::vector<int64_t>{118, 185, 0})),
                  {118, 185, 0}),
            (std::vector<int>{118, 119, kFill}));
  EXPECT_EQ(Shown(Decode(Decoder()
                             .SetArg("start_frame", int64_t{19})
                             .SetArg("sequence_length", int64_t{2})
                             .SetArg("fill_value", std::vector<int64_t>{128})),
                  {128, 128, 128}),
            (std::vector<int>{119, kFill}));
}

TEST(VideoDecoderArgs, FedPerSample) {
  OpHarness h(Decoder()
                  .SetArgInput("start_frame", "starts")
                  .SetArgInput("end_frame", "ends")
                  .SetArg("stride", int64_t{2})
                  .SetArg("pad_mode", std::string("edge")),
              Device::kCpu, 3);
  h.SetInput(0, Batch({Encoded(kH264), Encoded(kH264), Encoded(kH264)}));
  h.SetArgInput("start_frame", MakeBatch<int32_t>({Shape{1}, Shape{1}, Shape{1}}, {{0}, {5}, {16}}));
  h.SetArgInput("end_frame", MakeBatch<int32_t>({Shape{1}, Shape{1}, Shape{1}}, {{4}, {12}, {24}}));
  h.Run();
  EXPECT_EQ(FramesOf(h.OutputCpu(0), 0), (std::vector<int>{100, 102}));
  EXPECT_EQ(FramesOf(h.OutputCpu(0), 1), (std::vector<int>{105, 107, 109, 111}));
  EXPECT_EQ(FramesOf(h.OutputCpu(0), 2), (std::vector<int>{116, 118, 119, 119}));
  // sequence_length and stride fed, padding per sample: only sample 1 runs past the end.
  OpHarness g(Decoder().SetArgInput("sequence_length", "lengths").SetArgInput("stride", "strides"), Device::kCpu, 2);
  g.SetInput(0, Batch({Encoded(kH264), Encoded(kH264)}));
  g.SetArgInput("sequence_length", MakeBatch<int64_t>({Shape{1}, Shape{1}}, {{3}, {4}}));
  g.SetArgInput("stride", MakeBatch<int64_t>({Shape{1}, Shape{1}}, {{5}, {7}}));
  g.Run();
  EXPECT_EQ(FramesOf(g.OutputCpu(0), 0), (std::vector<int>{100, 105, 110}));
  EXPECT_EQ(g.OutputCpu(0).shape(1), (Shape{4, 64, 64, 3}));
  EXPECT_EQ(FramesOf(g.OutputCpu(0), 1).front(), 100);
}

// ---- errors: one test per message ----

const std::string kDec = "op \"decoders.video\" (dec): ";

TEST(VideoDecoderArgs, EndFrameWithSequenceLength) {
  EXPECT_EQ(ErrorOf(Decoder().SetArg("end_frame", int64_t{10}).SetArg("sequence_length", int64_t{4}), {Encoded(kH264)}),
            kDec + "arguments \"end_frame\" and \"sequence_length\" both given: a sample's frames end either before "
                   "end_frame or after sequence_length frames (DALI's rule); give one");
  EXPECT_THAT(ErrorOf(Decoder().SetArgInput("end_frame", "ends").SetArg("sequence_length", int64_t{0}), {Encoded(kH264)}),
              HasSubstr("both given")) << "fed or set, explicit 0 included";
}

TEST(VideoDecoderArgs, EndFrameNotAfterStartFrame) {
  EXPECT_EQ(ErrorOf(Decoder().SetArg("start_frame", int64_t{5}).SetArg("end_frame", int64_t{5}), {Encoded(kH264)}),
            kDec + "sample 0 of 1: end_frame 5 must be greater than start_frame 5");
  EXPECT_EQ(ErrorOf(Decoder().SetArg("end_frame", int64_t{0}), {Encoded(kH264)}),
            kDec + "sample 0 of 1: end_frame 0 must be greater than start_frame 0")
      << "end_frame given is end_frame, even 0";
}

TEST(VideoDecoderArgs, FedValueOutOfRange) {
  OpHarness h(Decoder().SetArgInput("stride", "strides"), Device::kCpu, 2);
  h.SetInput(0, Batch({Encoded(kH264), Encoded(kH264)}));
  h.SetArgInput("stride", MakeBatch<int32_t>({Shape{1}, Shape{1}}, {{2}, {0}}));
  try {
    h.Run();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), kDec + "sample 1 of 2: argument \"stride\": expected a value in [1, 2147483647], got 0");
    EXPECT_EQ(dynamic_cast<const SampleError*>(&e), nullptr) << "an argument's fault: never skipped";
  }
}

TEST(VideoDecoderArgs, FillValueCount) {
  EXPECT_EQ(ErrorOf(Decoder().SetArg("fill_value", std::vector<int64_t>{1, 2}), {Encoded(kH264)}),
            kDec + "argument \"fill_value\": expected 1 value (R, G and B alike) or 3 (R, G, B), got 2");
  EXPECT_THAT(ErrorOf(Decoder().SetArg("fill_value", std::vector<int64_t>{256}), {Encoded(kH264)}),
              HasSubstr("expected a value in [0, 255], got 256"));
}

TEST(VideoDecoderArgs, UnknownPadMode) {
  EXPECT_THAT(ErrorOf(Decoder().SetArg("pad_mode", std::string("wrap")), {Encoded(kH264)}),
              HasSubstr("expected one of none, constant, edge, repeat, reflect_1001, symmetric, reflect_101, reflect, "
                        "got \"wrap\""));
}

TEST(VideoDecoderArgs, PaddedPastMaxFrames) {
  EXPECT_EQ(ErrorOf(Decoder().SetArg("sequence_length", int64_t{30}).SetArg("max_frames", int64_t{25}), {Encoded(kH264)}),
            kDec + "sample 0 of 1: 30 frames asked (the video has 20), more than max_frames (25)");
  EXPECT_EQ(ErrorOf(Decoder().SetArg("sequence_length", int64_t{25}).SetArg("max_frames", int64_t{25}), {Encoded(kH264)}),
            "");
}

}  // namespace
}  // namespace conveyor::testing
