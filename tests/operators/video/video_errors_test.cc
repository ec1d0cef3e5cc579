// Every error readers.video and its parts give, one test per message: damaged, odd and hostile
// files never crash or hang; each is refused with a message naming the file (and the frame).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/harness.h"
#include "core/pipeline/pipeline.h"
#include "operators/readers/io/byte_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/demux.h"
#include "operators/video/video_reader.h"
#include "tests/operators/video/damage.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::ops::video {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::DamagePacket;
using testing::FreshTempDir;
using testing::ReadBytes;
using testing::WriteBytes;
using testvideos::TestVideoOptions;

const std::string& Dir() {
  static const std::string dir = FreshTempDir("errors");
  return dir;
}

// A 24-frame 64x64 clip (GOP 8) of `codec` in `container`, written once per name.
std::string Clip(const std::string& name, const std::string& codec = "h264", const std::string& container = "mkv",
                 int b_frames = 0, int frames = 24) {
  const std::string path = Dir() + "/" + name;
  if (!std::filesystem::exists(path)) {
    TestVideoOptions o;
    o.codec = codec;
    o.container = container;
    o.width = o.height = 64;
    o.frames = frames;
    o.gop = 8;
    o.b_frames = b_frames;
    testvideos::WriteTestVideo(path, o);
  }
  return path;
}

OpSpec Reader(const std::string& file, int64_t sequence_length = 4) {
  return OpSpec("readers.video", "r")
      .AddOutput("video")
      .AddOutput("labels")
      .SetArg("filenames", std::vector<std::string>{file})
      .SetArg("sequence_length", sequence_length);
}

// The message of the InvalidArgument `f` throws ("" when it throws nothing).
std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

std::string BuildError(const OpSpec& spec) {
  return ErrorOf([&] { OpHarness h(spec, Device::kCpu, 1); });
}

std::string RunError(const OpSpec& spec, int batch = 1) {
  return ErrorOf([&] {
    OpHarness h(spec, Device::kCpu, batch);
    h.Run();
  });
}

const std::string kWhere = "op \"readers.video\" (r): ";

TEST(VideoErrors, MissingFile) {
  const std::string gone = Dir() + "/gone.mp4";
  EXPECT_THAT(BuildError(Reader(gone)), HasSubstr(kWhere + "\"" + gone + "\": cannot open: No such file or directory"));
}

TEST(VideoErrors, EmptyFile) {
  const std::string empty = Dir() + "/empty.mp4";
  WriteBytes(empty, {});
  EXPECT_THAT(BuildError(Reader(empty)), HasSubstr(kWhere + "\"" + empty + "\": empty file (0 bytes)"));
}

TEST(VideoErrors, GarbageBytes) {
  const std::string garbage = Dir() + "/garbage.mp4";
  std::vector<uint8_t> bytes(20000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  WriteBytes(garbage, bytes);
  EXPECT_THAT(BuildError(Reader(garbage)),
              HasSubstr(kWhere + "\"" + garbage + "\": not a video libavformat can read (containers: MP4/MOV, "));
}

TEST(VideoErrors, TruncatedMp4LosesItsIndex) {
  const std::string cut = Dir() + "/cut.mp4";
  std::vector<uint8_t> bytes = ReadBytes(Clip("whole.mp4", "h264", "mp4"));
  bytes.resize(bytes.size() * 6 / 10);  // ffmpeg's MP4 keeps its sample index (moov) at the end
  WriteBytes(cut, bytes);
  EXPECT_THAT(BuildError(Reader(cut)),
              AllOf(HasSubstr(kWhere + "\"" + cut + "\": not a video libavformat can read"),
                    HasSubstr("Invalid data found when processing input")));
}

TEST(VideoErrors, TruncatedMkvKeepsTheFramesItHolds) {
  const std::string cut = Dir() + "/cut.mkv";
  std::vector<uint8_t> bytes = ReadBytes(Clip("whole.mkv"));
  bytes.resize(bytes.size() * 6 / 10);
  WriteBytes(cut, bytes);
  OpHarness h(Reader(cut, 2), Device::kCpu, 1);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  const int64_t frames = op.clips().files()[0].index->frame_count();
  EXPECT_GT(frames, 4);
  EXPECT_LT(frames, 24);
  h.Run();  // the frames that are there decode
  EXPECT_EQ(testvideos::ReadFrameNumber(static_cast<const uint8_t*>(h.OutputCpu(0).raw_sample(0)), 64, 64, 64 * 3), 0);
}

TEST(VideoErrors, NoVideoStream) {
  const std::string audio = Dir() + "/audio.mkv";
  testvideos::WriteAudioOnly(audio);
  EXPECT_THAT(BuildError(Reader(audio)), HasSubstr(kWhere + "\"" + audio + "\": no video stream (1 stream: audio pcm_s16le)"));
}

TEST(VideoErrors, ZeroFrames) {
  const std::string none = Dir() + "/none.avi";  // (MKV and MP4 without a packet do not open at all)
  testvideos::WriteVideoWithoutFrames(none, "h264", "avi");
  EXPECT_THAT(BuildError(Reader(none)), HasSubstr(kWhere + "\"" + none + "\": the video stream (h264) has no frames"));
}

TEST(VideoErrors, DeclaredSizeOverMaxPixels) {
  const std::string clip = Clip("size.mkv");
  EXPECT_THAT(BuildError(Reader(clip).SetArg("max_pixels", int64_t{1000})),
              HasSubstr(kWhere + "\"" + clip + "\": the h264 stream declares 64x64 = 4096 pixels per frame, more than "
                        "max_pixels 1000"));
}

TEST(VideoErrors, MoreFramesThanMaxFrames) {
  const std::string clip = Clip("frames.mkv");
  EXPECT_THAT(BuildError(Reader(clip).SetArg("max_frames", int64_t{10})),
              HasSubstr(kWhere + "\"" + clip + "\": more than max_frames 10 packets in the video stream"));
}

TEST(VideoErrors, SequenceLongerThanTheFile) {
  const std::string clip = Clip("short.mkv", "h264", "mkv", 0, 12);
  EXPECT_THAT(BuildError(Reader(clip, 16)),
              HasSubstr(kWhere + "\"" + clip + "\": its 12 frames are fewer than one sequence spans: sequence_length 16 "
                        "at stride 1 spans 16 frames"));
  EXPECT_THAT(BuildError(Reader(clip, 4).SetArg("stride", int64_t{4})),
              HasSubstr("sequence_length 4 at stride 4 spans 13 frames"));
}

TEST(VideoErrors, DamagedPacketNamesTheFrameAfterGoingBackKeyframes) {
  const std::string damaged = Dir() + "/damaged.mkv";
  std::filesystem::copy_file(Clip("intact.mkv"), damaged, std::filesystem::copy_options::overwrite_existing);
  DamagePacket(damaged, 16);  // the keyframe of the third GOP
  // Two clips: frames 0, 1 (intact) and 17, 18 (after the damaged keyframe at 16).
  OpHarness h(Reader(damaged, 2).SetArg("step", int64_t{17}), Device::kCpu, 2);
  const std::string second = ErrorOf([&] { h.Run(); });
  EXPECT_THAT(second, AllOf(HasSubstr("sample 1 of 2 (clip 1: frames 17..18): \"" + damaged + "\": frame 17 (pts "),
                            HasSubstr("decoded with errors (damaged data or missing reference frames), also when "
                                      "decoding from 2 keyframes earlier")));
}

TEST(VideoErrors, ClipTimesOut) {
  const std::string clip = Clip("slow.mkv");
  VideoLimits limits;
  Demuxer demuxer(OpenByteSource(clip), limits);
  auto index = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits));
  limits.timeout_ms = 0;
  auto decoder = OpenCpuClipDecoder(OpenByteSource(clip), index, limits, {});
  std::vector<uint8_t> out(static_cast<size_t>(decoder->frame_bytes()) * 2);
  EXPECT_THAT(ErrorOf([&] { decoder->Decode({10, 11}, out.data()); }), AllOf(HasSubstr("\"" + clip + "\": "), HasSubstr("timed out")));
}

TEST(VideoErrors, H264BFramesInAviCannotBeFoundByTimestamp) {
  const std::string avi = Clip("bframes.avi", "h264", "avi", 2);
  EXPECT_THAT(RunError(Reader(avi, 3)),
              AllOf(HasSubstr("\"" + avi + "\": frame 1 (pts 2, 0.080 s): not produced by the decoder"),
                    HasSubstr("AVI has no presentation timestamps, and the ones libavformat derives do not describe "
                              "this stream's frame order (e.g. H.264 B-frames): remux to MP4 or MKV")));
}

TEST(VideoErrors, FileListLines) {
  const std::string clip = Clip("listed.mkv");
  const auto list = [&](const std::string& text) {
    const std::string path = Dir() + "/list.txt";
    std::ofstream(path) << text;
    return BuildError(OpSpec("readers.video", "r").AddOutput("v").AddOutput("l").SetArg("file_list", path).SetArg(
        "sequence_length", int64_t{2}));
  };
  const std::string at = kWhere + Dir() + "/list.txt:2: ";
  EXPECT_THAT(list("listed.mkv 1\nlisted.mkv x\n"), HasSubstr(at + "expected an int32 label after the path, got \"x\""));
  EXPECT_THAT(list("listed.mkv 1\nlisted.mkv 1 2 3 4\n"),
              HasSubstr(at + "expected \"path label [start [end]]\", got \"listed.mkv 1 2 3 4\""));
  EXPECT_THAT(list("listed.mkv 1\nlisted.mkv 1 0.5 end\n"), HasSubstr(at + "expected a number as the range's end, got \"end\""));
  EXPECT_THAT(list("# nothing\n"), HasSubstr("lists no files"));
  EXPECT_THAT(list("listed.mkv 1 -0.5\n"), HasSubstr("(file_list line 1): range -0.500000 s: times are seconds from the "
                                                     "first frame, not negative"));
  EXPECT_THAT(list("listed.mkv 1 0.4 0.44\n"),
              HasSubstr("\": frames [10, 11) of its 24 (file_list line 1) are fewer than one sequence spans"));
}

TEST(VideoErrors, Arguments) {
  const std::string clip = Clip("args.mkv");
  EXPECT_THAT(BuildError(Reader(clip).SetArg("step", int64_t{0})),
              HasSubstr(kWhere + "argument \"step\": expected -1 (sequence_length) or >= 1, got 0"));
  EXPECT_THAT(BuildError(Reader(clip).SetArg("file_root", Dir())),
              HasSubstr("give exactly one of filenames, file_root and file_list (got 2)"));
  EXPECT_THAT(BuildError(OpSpec("readers.video", "r").AddOutput("v").AddOutput("l").SetArg("file_root", Dir()).SetArg(
                  "labels", std::vector<int64_t>{1}).SetArg("sequence_length", int64_t{2})),
              HasSubstr("labels go with filenames"));
  EXPECT_THAT(BuildError(Reader(clip).SetArg("shard_id", int64_t{2}).SetArg("num_shards", int64_t{2})),
              HasSubstr("shard_id must be in [0, num_shards) = [0, 2), got 2"));
}

TEST(VideoErrors, CheckpointOfAnotherDataSetOrRank) {
  const std::string clip = Clip("ckpt.mkv");
  OpHarness a(Reader(clip, 2), Device::kCpu, 1);
  const std::string state = a.op().CheckpointState();
  OpHarness other(Reader(clip, 3), Device::kCpu, 1);
  EXPECT_THAT(ErrorOf([&] { other.op().RestoreCheckpoint(state); }),
              HasSubstr(kWhere + "the checkpoint is of another pipeline: its clips (12, fingerprint "));
  OpHarness rank(Reader(clip, 2).SetArg("num_shards", int64_t{2}), Device::kCpu, 1);
  EXPECT_THAT(ErrorOf([&] { rank.op().RestoreCheckpoint(state); }),
              HasSubstr("it read shard_id 0 of num_shards 1, this node reads shard_id 0 of num_shards 2"));
  EXPECT_THAT(ErrorOf([&] { a.op().RestoreCheckpoint("epoch=1"); }),
              HasSubstr("checkpoint: expected \"clips=N fingerprint=F shard_id=S num_shards=M epoch=E position=P\""));
}

TEST(VideoErrors, SkipLeavesOutFilesThatCannotBeReadAndListsThem) {
  const std::string good = Clip("good.mkv");
  const std::string garbage = Dir() + "/garbage2.mkv";
  WriteBytes(garbage, std::vector<uint8_t>(5000, 7));
  const std::string tiny = Clip("tiny.mkv", "h264", "mkv", 0, 3);
  OpSpec spec = OpSpec("readers.video", "r")
                    .AddOutput("v")
                    .AddOutput("l")
                    .SetArg("filenames", std::vector<std::string>{garbage, good, tiny})
                    .SetArg("sequence_length", int64_t{4})
                    .SetArg("on_error", std::string("skip"));
  OpHarness h(spec, Device::kCpu, 6);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  EXPECT_EQ(op.clips().size(), 6);
  const std::vector<Operator::Skipped> skipped = op.SkippedSamples();
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0].source, garbage);
  EXPECT_THAT(skipped[0].reason, HasSubstr("not a video libavformat can read"));
  EXPECT_EQ(skipped[1].source, tiny);
  EXPECT_THAT(skipped[1].reason, HasSubstr("its 3 frames are fewer than one sequence spans"));
  h.Run();
  EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(0)), 1) << "good.mkv is file 1";
  EXPECT_THAT(BuildError(OpSpec(spec).SetArg("filenames", std::vector<std::string>{garbage, tiny})),
              HasSubstr(kWhere + "no clips: every one of the 2 files was skipped (on_error: skip); the first: \"" + garbage));
}

TEST(VideoErrors, SkipReplacesAClipThatFailsToDecodeAndRedoesTheIteration) {
  const std::string damaged = Dir() + "/damaged_skip.mkv";
  std::filesystem::copy_file(Clip("intact2.mkv"), damaged, std::filesystem::copy_options::overwrite_existing);
  DamagePacket(damaged, 16);
  Pipeline p = Pipeline::FromYaml("pipeline: {name: skip, batch_size: 3, device: cpu, num_threads: 2, prefetch_depth: 1}\n"
                                  "ops:\n  - op: readers.video\n    name: reader\n    args: {filenames: [\"" + damaged +
                                  "\"], sequence_length: 2, step: 4, on_error: skip}\n    outputs: [clips, labels]\n"
                                  "outputs: [clips, labels]\n");
  p.Build();
  std::vector<int> firsts;
  for (int b = 0; b < 2; ++b) {  // 6 clips: 0 4 8 12 16 20, the ones at 16 and 20 decode from the damaged GOP
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& clips = out.Cpu(out.Index("clips"));
    for (int i = 0; i < clips.num_samples(); ++i) {
      firsts.push_back(testvideos::ReadFrameNumber(static_cast<const uint8_t*>(clips.raw_sample(i)), 64, 64, 64 * 3));
    }
    out.Release();
    p.Run();
  }
  EXPECT_EQ(firsts, (std::vector<int>{0, 4, 8, 12, 0, 4})) << "16 and 20 replaced by the next epoch's first clips";
  const ExecutorCounters counters = p.counters();
  EXPECT_GE(counters.refilled_iterations, 1);
  ASSERT_FALSE(counters.skipped_files.empty());
  EXPECT_THAT(counters.skipped_files[0].file, HasSubstr(damaged + ":16"));
  EXPECT_THAT(counters.skipped_files[0].reason,
              AllOf(HasSubstr("frame 16 (pts 640, 0.640 s): not produced by the decoder"),
                    HasSubstr("the decoder rejected the packet at pts 640: Invalid data found when processing input")));
}

}  // namespace
}  // namespace conveyor::ops::video
