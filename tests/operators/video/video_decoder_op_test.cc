// decoders.video (CPU backend) through OpHarness: encoded clips fed as bytes, every frame number
// read back, start_frame / stride / sequence_length, a batch mixing codecs, containers and sizes,
// and each error about the bytes with its exact message (end_frame, pad_mode and the arguments'
// errors: video_decoder_args_test; on_error: video_decoder_skip_test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/operators/video/video_decoder_fixture.h"

namespace conveyor::testing {
namespace {

TEST(VideoDecoder, EveryFrameOfEveryCodecInPresentationOrder) {
  for (const Clip& c : {kH264, Clip{"hevc", "mkv", 64, 64, 17, 2, 200}, Clip{"vp9", "webm", 64, 64, 13, 0, 300},
                        Clip{"mpeg4", "avi", 64, 64, 15, 2, 400}, Clip{"av1", "mkv", 64, 64, 9, 0, 500}}) {
    const std::vector<uint8_t>& bytes = Encoded(c);
    if (bytes.empty()) {
      std::fprintf(stderr, "no %s encoder: skipped\n", c.codec.c_str());
      continue;
    }
    OpHarness h(Decoder(), Device::kCpu, 1);
    h.SetInput(0, Batch({bytes}));
    h.Run();
    const TensorListCPU& video = h.OutputCpu(0);
    EXPECT_EQ(video.layout(), Layout("FHWC"));
    EXPECT_EQ(video.dtype(), DType::kUInt8);
    EXPECT_EQ(video.shape(0), (Shape{c.frames, 64, 64, 3})) << c.codec;
    EXPECT_EQ(FramesOf(video, 0), Range(c.first, c.frames)) << c.codec << " in " << c.container;
  }
}

TEST(VideoDecoder, StartFrameStrideAndSequenceLength) {
  const std::vector<uint8_t>& bytes = Encoded(kH264);  // 20 frames, 100..119, GOP 8, B-frames
  struct Case {
    int64_t start, length, stride;
    std::vector<int> want;
  };
  for (const Case& k : {Case{0, 0, 1, Range(100, 20)}, Case{5, 0, 1, Range(105, 15)}, Case{3, 0, 4, Range(103, 5, 4)},
                        Case{0, 0, 3, Range(100, 7, 3)}, Case{9, 4, 1, Range(109, 4)}, Case{1, 3, 6, Range(101, 3, 6)},
                        Case{19, 1, 5, Range(119, 1)}, Case{17, 0, 8, Range(117, 1)}}) {
    OpHarness h(Decoder()
                    .SetArg("start_frame", k.start)
                    .SetArg("sequence_length", k.length)
                    .SetArg("stride", k.stride),
                Device::kCpu, 1);
    h.SetInput(0, Batch({bytes}));
    h.Run();
    EXPECT_EQ(h.OutputCpu(0).shape(0), (Shape{static_cast<int64_t>(k.want.size()), 64, 64, 3}));
    EXPECT_EQ(FramesOf(h.OutputCpu(0), 0), k.want)
        << "start_frame " << k.start << " sequence_length " << k.length << " stride " << k.stride;
  }
}

TEST(VideoDecoder, BatchMixingCodecsContainersAndSizes) {
  std::vector<Clip> clips = {kH264, Clip{"hevc", "mp4", 96, 64, 11, 2, 600}, Clip{"vp9", "mkv", 64, 80, 9, 0, 700},
                             Clip{"h264", "mkv", 128, 96, 14, 0, 800}, kH264};
  std::vector<std::vector<uint8_t>> files;
  std::vector<Clip> used;
  for (const Clip& c : clips) {
    if (Encoded(c).empty()) continue;
    files.push_back(Encoded(c));
    used.push_back(c);
  }
  ASSERT_GE(used.size(), 3u);
  OpHarness h(Decoder().SetArg("stride", int64_t{2}), Device::kCpu, static_cast<int>(files.size()));
  h.SetInput(0, Batch(files));
  h.set_num_threads(3);
  for (int iteration = 0; iteration < 2; ++iteration) {  // the operator's state does not leak between batches
    h.Run();
    for (size_t i = 0; i < used.size(); ++i) {
      const Clip& c = used[i];
      const int count = (c.frames + 1) / 2;
      EXPECT_EQ(h.OutputCpu(0).shape(static_cast<int>(i)), (Shape{count, c.height, c.width, 3})) << i;
      EXPECT_EQ(FramesOf(h.OutputCpu(0), static_cast<int>(i)), Range(c.first, count, 2))
          << "sample " << i << ": " << c.codec << " in " << c.container;
    }
  }
}

TEST(VideoDecoder, GarbageBytes) {
  const std::vector<uint8_t> garbage(1000, 0x5a);
  EXPECT_EQ(ErrorOf(Decoder(), {Encoded(kH264), garbage}),
            "op \"decoders.video\" (dec): sample 1 of 2: \"encoded video (1000 bytes)\": not a video libavformat can read "
            "(containers: MP4/MOV, MKV/WebM, AVI, MPEG-TS, FLV, IVF): Invalid data found when processing input");
}

TEST(VideoDecoder, TruncatedFile) {
  std::vector<uint8_t> cut = Encoded(kH264);
  cut.resize(cut.size() / 2);
  EXPECT_THAT(ErrorOf(Decoder(), {cut}), ::testing::StartsWith("op \"decoders.video\" (dec): sample 0 of 1: \"encoded video ("));
}

TEST(VideoDecoder, EmptyInput) {
  EXPECT_EQ(ErrorOf(Decoder(), {Encoded(kH264), Encoded(kH264), {}}),
            "op \"decoders.video\" (dec): sample 2 of 3: empty input (0 bytes): expected an encoded video file");
}

TEST(VideoDecoder, OverTheOutputLimit) {
  // 20 frames of 64 x 64 x 3 = 245760 bytes; one byte less is refused, exactly that is decoded.
  EXPECT_EQ(ErrorOf(Decoder().SetArg("max_output_bytes", int64_t{245759}), {Encoded(kH264), Encoded(kH264)}),
            "op \"decoders.video\" (dec): sample 0 of 2: 20 frames of 64x64 RGB are 245760 bytes, more than "
            "max_output_bytes (245759)");
  EXPECT_EQ(ErrorOf(Decoder().SetArg("max_output_bytes", int64_t{245760}), {Encoded(kH264)}), "");
  // The limit is on what is decoded: 10 frames at stride 2 fit in half.
  EXPECT_EQ(ErrorOf(Decoder().SetArg("max_output_bytes", int64_t{122880}).SetArg("stride", int64_t{2}), {Encoded(kH264)}),
            "");
}

TEST(VideoDecoder, StartFrameBeyondTheEnd) {
  for (const std::string pad : {"none", "constant", "edge", "reflect_101"}) {  // padding never starts a sample
    EXPECT_EQ(ErrorOf(Decoder().SetArg("start_frame", int64_t{20}).SetArg("pad_mode", pad), {Encoded(kH264)}),
              "op \"decoders.video\" (dec): sample 0 of 1: start_frame 20 is beyond the end: the video has 20 frames")
        << pad;
  }
}

TEST(VideoDecoder, NotOneDimensional) {
  const std::vector<uint8_t> bytes(12, 1);
  TensorListCPU batch = MakeBatch<uint8_t>({Shape{3, 4}}, {bytes});
  try {
    OpHarness h(Decoder(), Device::kCpu, 1);
    h.SetInput(0, std::move(batch));
    h.Run();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "op \"decoders.video\" (dec): sample 0 of 1: expected a 1-D uint8 sample (one encoded file), got shape (3, 4)");
  }
}

}  // namespace
}  // namespace conveyor::testing
