// decoders.video's on_error in pipelines readers.file → decoders.video over real clips, three of
// them damaged: one truncated (Setup cannot demux it), one with a damaged packet (only the decode
// finds it), one empty (the reader's check refuses it). `skip` keeps every batch full, each sample
// its own file's frames with that file's label, and lists exactly the damaged files; `error`
// stops naming the sample and its file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/harness.h"
#include "core/pipeline/pipeline.h"
#include "tests/operators/video/damage.h"
#include "tests/operators/video/video_decoder_fixture.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

std::string FileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// a/a0.mp4 a/a1.mkv a/a2.mp4 b/b0.mp4 b/b1.mp4 b/b2.mp4 c/c0.mp4, in the reader's order; a1
// (damaged packet), b0 (truncated) and b2 (empty) are broken.
struct Damaged {
  ClipDataset data;
  std::map<std::string, std::string> bad;  // file name → what its skip reason says
};

const Damaged& Data() {
  static const Damaged d = [] {
    Damaged out;
    out.data = MakeClipDataset({{"a", "a0.mp4", 10}, {"a", "a1.mkv", 24, "h264", "mkv", 0}, {"a", "a2.mp4", 10},
                                {"b", "b0.mp4", 10}, {"b", "b1.mp4", 10}, {"b", "b2.mp4", 10}, {"c", "c0.mp4", 10}});
    const std::string root = out.data.root;
    DamagePacket(root + "/a/a1.mkv", 16);  // the keyframe of the third GOP: every frame is asked, 16.. fail
    std::vector<uint8_t> cut = ReadBytes(root + "/b/b0.mp4");
    cut.resize(cut.size() / 2);
    WriteBytes(root + "/b/b0.mp4", cut);
    WriteBytes(root + "/b/b2.mp4", {});
    out.bad = {{"a1.mkv", "frame 16 (pts "},
               {"b0.mp4", "not a video libavformat can read"},
               {"b2.mp4", "empty input (0 bytes): expected an encoded video file"}};
    return out;
  }();
  return d;
}

std::string Yaml(const std::string& on_error, int batch, const std::string& reader_args) {
  return "pipeline: {name: video_skip, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: 2, prefetch_depth: 1, seed: 3}\nops:\n"
         "  - {op: readers.file, name: reader, args: {" + reader_args + "}, outputs: [encoded, labels]}\n"
         "  - {op: decoders.video, name: dec, inputs: [encoded], args: {on_error: " + on_error + "}, outputs: [clips]}\n"
         "outputs: [clips, labels]\n";
}

std::string FileRoot() { return "file_root: \"" + Data().data.root + "\", file_filters: [\"*.mp4\", \"*.mkv\"]"; }

TEST(VideoDecoderSkip, BatchesStayFullWithLabelsAlignedAndTheDamagedFilesListed) {
  const Damaged& d = Data();
  Pipeline p = Pipeline::FromYaml(Yaml("skip", 4, FileRoot()));
  p.Build();
  std::map<std::string, int> seen;
  for (int k = 0; k < 3; ++k) {  // three epochs of the four good files
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& clips = out.Cpu(out.Index("clips"));
    const TensorListCPU& labels = out.Cpu(out.Index("labels"));
    ASSERT_EQ(clips.num_samples(), 4) << "iteration " << k;
    for (int i = 0; i < 4; ++i) {
      const std::vector<int> frames = FramesOf(clips, i);
      int first = -1;
      const ClipDataset::File* file = d.data.FileOf(frames[0], &first);
      ASSERT_NE(file, nullptr) << "frame number " << frames[0];
      EXPECT_EQ(first, 0);
      EXPECT_EQ(clips.shape(i), (Shape{file->frames, 64, 64, 3})) << file->path;
      EXPECT_EQ(frames, Range(file->base, file->frames)) << file->path;
      EXPECT_EQ(*static_cast<const int32_t*>(labels.raw_sample(i)), file->label) << file->path;
      EXPECT_EQ(clips.source(i)->file, file->path) << "sources follow the samples";
      EXPECT_EQ(d.bad.count(FileName(file->path)), 0u) << file->path;
      ++seen[FileName(file->path)];
    }
    out.Release();
    p.Run();
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{{"a0.mp4", 3}, {"a2.mp4", 3}, {"b1.mp4", 3}, {"c0.mp4", 3}}));
  const ExecutorCounters c = p.counters();
  std::map<std::string, std::string> listed;
  for (const ExecutorCounters::SkippedFile& f : c.skipped_files) {
    EXPECT_EQ(f.node, "reader");
    listed[FileName(f.file)] = f.reason;
  }
  ASSERT_EQ(listed.size(), d.bad.size());
  for (const auto& [name, reason] : d.bad) EXPECT_THAT(listed[name], HasSubstr(reason)) << name;
  EXPECT_EQ(c.refilled_iterations, 2) << "a1 (decode) and b0 (demux) redo the first iteration once each; b2 never "
                                         "enters a batch";
}

// The pipeline's first error (or "" when `iterations` ran).
std::string FirstError(const std::string& yaml, int iterations = 1) {
  try {
    Pipeline p = Pipeline::FromYaml(yaml);
    p.Build();
    for (int k = 0; k < iterations; ++k) {
      PipelineOutputs out = p.Outputs();
      out.Release();
      p.Run();
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string Files(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) {
    const std::string folder = name.substr(0, 1);
    list += std::string(list.empty() ? "" : ", ") + "\"" + Data().data.root + "/" + folder + "/" + name + "\"";
  }
  return "files: [" + list + "]";
}

TEST(VideoDecoderSkip, ErrorNamesTheSampleAndItsFile) {
  const std::string root = Data().data.root;
  const std::string undemuxable = FirstError(Yaml("error", 2, Files({"a0.mp4", "b0.mp4"})));
  EXPECT_THAT(undemuxable, HasSubstr("op \"decoders.video\" (dec): sample 1 of 2 (file \"" + root +
                                     "/b/b0.mp4\"): \"encoded video ("));
  EXPECT_THAT(undemuxable, HasSubstr("not a video libavformat can read"));
  const std::string undecodable = FirstError(Yaml("error", 2, Files({"a1.mkv", "a0.mp4"})));
  EXPECT_THAT(undecodable, HasSubstr("sample 0 of 2 (file \"" + root + "/a/a1.mkv\"): \"encoded video ("));
  EXPECT_THAT(undecodable, HasSubstr(": frame 16 (pts "));
  EXPECT_THAT(FirstError(Yaml("error", 1, Files({"b2.mp4"}))),
              HasSubstr("sample 0 of 1 (file \"" + root + "/b/b2.mp4\"): empty input (0 bytes)"));
}

TEST(VideoDecoderSkip, SkipNeedsAReader) {
  OpHarness h(OpSpec("decoders.video", "dec").AddInput("encoded").AddOutput("video").SetArg("on_error", std::string("skip")),
              Device::kCpu, 1);
  try {
    h.op().ConnectInput(0, OpSpec("external_source", "src").AddOutput("encoded"), nullptr, 0);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "op \"decoders.video\" (dec): argument \"on_error\": skip needs input \"encoded\" straight from a reader "
              "(readers.file), which reads other files in place of skipped ones; it comes from op \"external_source\" "
              "(src)");
  }
}

}  // namespace
}  // namespace conveyor::testing
