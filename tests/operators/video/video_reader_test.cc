// readers.video: what a batch holds (frames, labels, frame numbers, timestamps) for every clip
// shape, file_list ranges, decoding on between consecutive clips, the bound on open files, and a
// YAML pipeline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/op/harness.h"
#include "core/pipeline/pipeline.h"
#include "operators/video/video_reader.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::ops::video {
namespace {

using testing::ClipDataset;
using testing::MakeClipDataset;
using testing::ReadFrameNumbers;

OpSpec Reader() { return OpSpec("readers.video", "r").AddOutput("video").AddOutput("labels"); }

// Three files in two classes, three codecs: a/a1.mkv (HEVC, 17 frames), b/b1.mp4 (H.264, 20),
// b/b2.webm (VP9, 13).
const ClipDataset& Data() {
  static const ClipDataset d = MakeClipDataset({{"b", "b1.mp4", 20, "h264", "mp4"},
                                                {"a", "a1.mkv", 17, "hevc", "mkv"},
                                                {"b", "b2.webm", 13, "vp9", "webm", 0}});
  return d;
}

// The frame numbers of sample i of a video output.
std::vector<int> FramesOf(const TensorListCPU& video, int i) {
  const Shape s = video.shape(i);
  return ReadFrameNumbers(static_cast<const uint8_t*>(video.raw_sample(i)), s[0], static_cast<int>(s[2]),
                          static_cast<int>(s[1]));
}

TEST(VideoReader, BatchHoldsEveryClipsFramesLabelsFrameNumbersAndTimestamps) {
  const ClipDataset& d = Data();
  // span (4 - 1) * 2 + 1 = 7; clips start every 3 frames: a1 (17) 4 clips, b1 (20) 5, b2 (13) 3.
  OpHarness h(Reader()
                  .AddOutput("frame_num")
                  .AddOutput("timestamps")
                  .SetArg("file_root", d.root)
                  .SetArg("sequence_length", int64_t{4})
                  .SetArg("stride", int64_t{2})
                  .SetArg("step", int64_t{3})
                  .SetArg("enable_frame_num", true)
                  .SetArg("enable_timestamps", true),
              Device::kCpu, 12);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  ASSERT_EQ(op.clips().size(), 12);
  EXPECT_EQ(op.EpochSize(12), 12);
  h.Run();
  const TensorListCPU& video = h.OutputCpu(0);
  EXPECT_EQ(video.layout(), Layout("FHWC"));
  EXPECT_EQ(video.dtype(), DType::kUInt8);
  const std::vector<std::pair<int, int>> clips = {{0, 0}, {0, 3}, {0, 6}, {0, 9},  {1, 0}, {1, 3},
                                                  {1, 6}, {1, 9}, {1, 12}, {2, 0}, {2, 3}, {2, 6}};
  for (int i = 0; i < 12; ++i) {
    const ClipDataset::File& f = d.files[static_cast<size_t>(clips[static_cast<size_t>(i)].first)];
    const int start = clips[static_cast<size_t>(i)].second;
    EXPECT_EQ(video.shape(i), (Shape{4, 64, 64, 3}));
    EXPECT_EQ(FramesOf(video, i), (std::vector<int>{f.base + start, f.base + start + 2, f.base + start + 4,
                                                    f.base + start + 6}))
        << "sample " << i << " (" << f.path << ")";
    EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(i)), f.label);
    EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(2).raw_sample(i)), start);
    const auto* t = static_cast<const float*>(h.OutputCpu(3).raw_sample(i));
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(t[k], (start + 2 * k) / 25.0, 1e-3) << "sample " << i << " frame " << k;
    ASSERT_NE(video.source(i), nullptr);
    EXPECT_EQ(video.source(i)->file, f.path);
    EXPECT_EQ(video.source(i)->index, i);
  }
}

TEST(VideoReader, StepDefaultsToSequenceLengthAndFilenamesTakeLabels) {
  const ClipDataset& d = Data();
  OpHarness h(Reader()
                  .SetArg("filenames", std::vector<std::string>{d.files[1].path, d.files[0].path})
                  .SetArg("labels", std::vector<int64_t>{7, 9})
                  .SetArg("sequence_length", int64_t{5}),
              Device::kCpu, 7);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  ASSERT_EQ(op.clips().size(), 7) << "b1: 20 frames = 4 clips of 5; a1: 17 = 3 clips";
  h.Run();
  const ClipDataset::File& b1 = d.files[1];
  const ClipDataset::File& a1 = d.files[0];
  for (int i = 0; i < 7; ++i) {
    const ClipDataset::File& f = i < 4 ? b1 : a1;
    const int start = (i < 4 ? i : i - 4) * 5;
    std::vector<int> want;
    for (int k = 0; k < 5; ++k) want.push_back(f.base + start + k);
    EXPECT_EQ(FramesOf(h.OutputCpu(0), i), want) << "sample " << i;
    EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(i)), i < 4 ? 7 : 9);
  }
}

TEST(VideoReader, FileListRangesInSecondsAndFrameNumbers) {
  const ClipDataset& d = Data();
  const std::string list = d.root + "/list_seconds.txt";
  {
    std::ofstream out(list);
    // a1 at 25 fps: [0.2 s, 0.6 s) = frames [5, 15); b1 whole; comment and blank lines skipped.
    out << "# path label start end\n\n" << "a/a1.mkv 5 0.2 0.6\n" << "b/b1.mp4 6\n";
  }
  OpHarness h(Reader()
                  .AddOutput("frame_num")
                  .SetArg("file_list", list)
                  .SetArg("sequence_length", int64_t{3})
                  .SetArg("step", int64_t{4})
                  .SetArg("enable_frame_num", true),
              Device::kCpu, 3);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  ASSERT_EQ(op.clips().size(), 2 + 5) << "a1: starts 5, 9 (13 would end at 15); b1: 0, 4, 8, 12, 16";
  h.Run();
  EXPECT_EQ(FramesOf(h.OutputCpu(0), 0), (std::vector<int>{d.files[0].base + 5, d.files[0].base + 6, d.files[0].base + 7}));
  EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(0)), 5);
  EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(2).raw_sample(1)), 9);

  const std::string frames = d.root + "/list_frames.txt";
  {
    std::ofstream out(frames);
    // b1: the last 10 frames; b2: frames [2.5 -> 3, 13 - 3 = 10); a1 twice with two labels.
    out << "b/b1.mp4 1 -10\n" << "b/b2.webm 2 2.5 -3\n" << "a/a1.mkv 3 0 4\n" << "a/a1.mkv 4 10 12\n";
  }
  OpHarness f(Reader()
                  .AddOutput("frame_num")
                  .SetArg("file_list", frames)
                  .SetArg("file_list_frame_num", true)
                  .SetArg("sequence_length", int64_t{2})
                  .SetArg("enable_frame_num", true),
              Device::kCpu, 5 + 3 + 2 + 1);
  f.set_num_threads(1);  // one clip at a time: a1's two entries then take turns with one decoder
  auto& op2 = dynamic_cast<VideoReaderOp&>(f.op());
  ASSERT_EQ(op2.clips().size(), 11);
  f.Run();
  std::vector<int> starts, labels;
  for (int i = 0; i < 11; ++i) {
    starts.push_back(*static_cast<const int32_t*>(f.OutputCpu(2).raw_sample(i)));
    labels.push_back(*static_cast<const int32_t*>(f.OutputCpu(1).raw_sample(i)));
  }
  EXPECT_EQ(starts, (std::vector<int>{10, 12, 14, 16, 18, 3, 5, 7, 0, 2, 10}));
  EXPECT_EQ(labels, (std::vector<int>{1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4}));
  EXPECT_EQ(FramesOf(f.OutputCpu(0), 10), (std::vector<int>{d.files[0].base + 10, d.files[0].base + 11}));
  EXPECT_EQ(op2.file_opens(), 3) << "the two entries of a1 share its decoder";
}

TEST(VideoReader, VariableFrameRateTimestampsAreTheContainers) {
  const ClipDataset d = MakeClipDataset({{"c", "vfr.mkv", 24, "h264", "mkv", 2, true}});
  testvideos::TestVideoOptions o;  // the same draw of durations MakeClipDataset made
  o.frames = 24;
  o.vfr = true;
  o.codec = "h264";
  o.container = "mkv";
  o.width = o.height = 64;
  o.gop = 8;
  o.b_frames = 2;
  const std::string again = d.root + "/again.mkv";
  const testvideos::TestVideo v = testvideos::WriteTestVideo(again, o);
  OpHarness h(Reader()
                  .AddOutput("timestamps")
                  .SetArg("filenames", std::vector<std::string>{d.files[0].path})
                  .SetArg("sequence_length", int64_t{3})
                  .SetArg("stride", int64_t{2})
                  .SetArg("step", int64_t{5})
                  .SetArg("enable_timestamps", true),
              Device::kCpu, 4);
  h.Run();
  for (int i = 0; i < 4; ++i) {
    const auto* t = static_cast<const float*>(h.OutputCpu(2).raw_sample(i));
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(t[k], v.timestamps[static_cast<size_t>(5 * i + 2 * k)], 1e-3);
    EXPECT_EQ(FramesOf(h.OutputCpu(0), i), (std::vector<int>{d.files[0].base + 5 * i, d.files[0].base + 5 * i + 2,
                                                             d.files[0].base + 5 * i + 4}));
  }
}

TEST(VideoReader, ConsecutiveClipsReuseTheirFileAndOpenFilesStayBounded) {
  const ClipDataset& d = Data();
  OpHarness h(Reader().SetArg("file_root", d.root).SetArg("sequence_length", int64_t{2}).SetArg("max_open_files", int64_t{1}),
              Device::kCpu, 4);
  h.set_num_threads(1);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  const int64_t clips = op.clips().size();  // 8 + 10 + 6
  ASSERT_EQ(clips, 24);
  std::vector<int> seen;
  for (int b = 0; b < 6; ++b) {
    h.Run();
    for (int i = 0; i < 4; ++i) seen.push_back(FramesOf(h.OutputCpu(0), i)[0]);
    EXPECT_LE(op.open_files(), 1);
  }
  EXPECT_EQ(op.file_opens(), 3) << "one open per file when clips come in file order";
  std::vector<int> want;
  for (const auto& f : d.files) {
    for (int s = 0; s + 2 <= f.frames; s += 2) want.push_back(f.base + s);
  }
  EXPECT_EQ(seen, want);
}

TEST(VideoReader, ShuffledBatchesKeepAtMostMaxOpenFilesBetweenBatches) {
  const ClipDataset& d = Data();
  OpHarness h(Reader()
                  .SetArg("file_root", d.root)
                  .SetArg("sequence_length", int64_t{2})
                  .SetArg("random_shuffle", true)
                  .SetArg("max_open_files", int64_t{2}),
              Device::kCpu, 5);
  h.set_num_threads(3);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  for (int b = 0; b < 8; ++b) {
    h.Run();
    EXPECT_LE(op.open_files(), 2) << "batch " << b;
    for (int i = 0; i < 5; ++i) {
      const std::vector<int> got = FramesOf(h.OutputCpu(0), i);
      int frame = -1;
      ASSERT_NE(d.FileOf(got[0], &frame), nullptr) << "batch " << b << " sample " << i;
      EXPECT_EQ(got[1], got[0] + 1);
      EXPECT_EQ(frame % 2, 0);
    }
  }
}

std::string PipelineYaml(const std::string& root, const std::string& extra, int batch) {
  return "pipeline: {name: clips, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: 2, prefetch_depth: 2, seed: 5}\n"
         "ops:\n  - op: readers.video\n    name: reader\n    args: {file_root: \"" + root +
         "\", sequence_length: 3, stride: 2" + extra + "}\n    outputs: [clips, labels]\noutputs: [clips, labels]\n";
}

TEST(VideoReader, PipelineServesEveryClipOncePerEpochAndResumesExactly) {
  const ClipDataset& d = Data();
  // span 5, step 3: a1 (17) 5 clips, b1 (20) 6, b2 (13) 3 = 14; batch 4, padded: 16 per epoch.
  const std::string yaml = PipelineYaml(d.root, ", random_shuffle: true, pad_last_batch: true, step: 3", 4);
  auto first_frames = [&](Pipeline& p) {
    PipelineOutputs out = p.Outputs();
    std::vector<int> firsts;
    const TensorListCPU& clips = out.Cpu(out.Index("clips"));
    for (int i = 0; i < clips.num_samples(); ++i) {
      const std::vector<int> f = FramesOf(clips, i);
      firsts.push_back(f[0]);
      EXPECT_EQ(f[2], f[0] + 4);
    }
    out.Release();
    p.Run();
    return firsts;
  };
  Pipeline p = Pipeline::FromYaml(yaml);
  p.Build();
  EXPECT_EQ(p.EpochSize("reader"), 16);
  std::string checkpoint;
  std::vector<std::vector<int>> after;
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::multiset<int> seen;
    for (int b = 0; b < 4; ++b) {
      if (epoch == 1 && b == 1) checkpoint = p.Checkpoint();
      const std::vector<int> firsts = first_frames(p);
      if (!checkpoint.empty()) after.push_back(firsts);
      seen.insert(firsts.begin(), firsts.end());
    }
    EXPECT_EQ(std::set<int>(seen.begin(), seen.end()).size(), 14u) << "epoch " << epoch;
    EXPECT_EQ(seen.size(), 16u);
  }
  Pipeline q = Pipeline::FromYaml(yaml);
  q.ResumeFrom(checkpoint);
  q.Build();
  for (const std::vector<int>& want : after) EXPECT_EQ(first_frames(q), want);
}

}  // namespace
}  // namespace conveyor::ops::video
