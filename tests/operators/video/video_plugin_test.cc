// libconveyor_video.so loaded on demand: this binary links the operator library but not
// //operators/video, so readers.video and decoders.video exist only once a pipeline names them and
// the plugin loads from CONVEYOR_PLUGIN_PATH; then both decode real clips frame-accurately.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/op/registry.h"
#include "core/pipeline/pipeline.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using testing::ClipDataset;
using testing::MakeClipDataset;
using testing::ReadFrameNumbers;

// Two classes: a/a1.mkv (10 frames, no B-frames), b/b1.mp4 (12 frames, B-frames).
const ClipDataset& Data() {
  static const ClipDataset d =
      MakeClipDataset({{"b", "b1.mp4", 12, "h264", "mp4"}, {"a", "a1.mkv", 10, "h264", "mkv", 0}});
  return d;
}

std::vector<int> FramesOf(const TensorListCPU& video, int i) {
  const Shape s = video.shape(i);
  return ReadFrameNumbers(static_cast<const uint8_t*>(video.raw_sample(i)), s[0], static_cast<int>(s[2]),
                          static_cast<int>(s[1]));
}

// The plugin Bazel built (this test's runfiles) is the one the pipelines find.
void PointAtThePlugin() {
  setenv("CONVEYOR_PLUGIN_PATH", std::filesystem::absolute("operators/video").c_str(), 1);
}

std::string Header(int batch) {
  return "pipeline: {batch_size: " + std::to_string(batch) + ", device: cpu, num_threads: 2, seed: 3}\nops:\n";
}

TEST(VideoPlugin, ReadersVideoLoadsThePluginAndReadsEveryClip) {
  ASSERT_EQ(OpRegistry::Global().Find("readers.video"), nullptr) << "not linked in: only the plugin brings it";
  PointAtThePlugin();
  const ClipDataset& d = Data();
  // span (3 - 1) * 2 + 1 = 5, a clip every 4 frames: a1 (10) starts 0, 4; b1 (12) starts 0, 4.
  Pipeline p = Pipeline::FromYaml(Header(4) +
                                  "  - op: readers.video\n    name: reader\n"
                                  "    args: {file_root: \"" + d.root + "\", sequence_length: 3, stride: 2, step: 4}\n"
                                  "    outputs: [clips, labels]\noutputs: [clips, labels]\n");
  p.Build();
  const OpRegistry::Entry* entry = OpRegistry::Global().Find("readers.video");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->origin, "plugin " + std::filesystem::absolute("operators/video/libconveyor_video.so").string());
  ASSERT_NE(OpRegistry::Global().Find("decoders.video"), nullptr) << "the plugin registers both";

  PipelineOutputs out = p.Outputs();
  const TensorListCPU& clips = out.Cpu(out.Index("clips"));
  const TensorListCPU& labels = out.Cpu(out.Index("labels"));
  ASSERT_EQ(clips.num_samples(), 4);
  EXPECT_EQ(clips.layout(), Layout("FHWC"));
  const std::vector<std::pair<int, int>> want = {{0, 0}, {0, 4}, {1, 0}, {1, 4}};  // (file, start)
  for (int i = 0; i < 4; ++i) {
    const ClipDataset::File& f = d.files[static_cast<size_t>(want[static_cast<size_t>(i)].first)];
    const int start = f.base + want[static_cast<size_t>(i)].second;
    EXPECT_EQ(clips.shape(i), (Shape{3, 64, 64, 3}));
    EXPECT_EQ(FramesOf(clips, i), (std::vector<int>{start, start + 2, start + 4})) << "sample " << i;
    EXPECT_EQ(*static_cast<const int32_t*>(labels.raw_sample(i)), f.label) << "sample " << i;
  }
}

TEST(VideoPlugin, DecodersVideoFromThePluginDecodesBytes) {
  PointAtThePlugin();
  const ClipDataset& d = Data();
  const std::string file = d.files[1].path;  // b/b1.mp4
  Pipeline p = Pipeline::FromYaml(Header(1) +
                                  "  - op: readers.file\n    name: files\n"
                                  "    args: {files: [\"" + file + "\"]}\n    outputs: [encoded, labels]\n"
                                  "  - op: decoders.video\n    name: dec\n    inputs: [encoded]\n"
                                  "    args: {start_frame: 1, sequence_length: 4, stride: 3}\n"
                                  "    outputs: [clips]\noutputs: [clips]\n");
  p.Build();
  EXPECT_THAT(OpRegistry::Global().Find("decoders.video")->origin, HasSubstr("libconveyor_video.so"));
  PipelineOutputs out = p.Outputs();
  const TensorListCPU& clips = out.Cpu(out.Index("clips"));
  const int base = d.files[1].base;
  EXPECT_EQ(FramesOf(clips, 0), (std::vector<int>{base + 1, base + 4, base + 7, base + 10}));
}

}  // namespace
}  // namespace conveyor
