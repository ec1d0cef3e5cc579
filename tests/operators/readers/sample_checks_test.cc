// Reader outputs carry per-sample sources (file, dataset index) on every output; sample checks
// (ReaderOp::SkipSamplesFailing, what a decoder's on_error: skip registers) replace the files they
// reject with the next ones of the stream, keep labels aligned, and list what they skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/readers/reader_op.h"
#include "tests/operators/readers/dataset_fixture.h"

namespace conveyor {
namespace {

using testing::FileDataset;
using ::testing::HasSubstr;
using testing::MakeFileDataset;

OpSpec Reader() { return OpSpec("readers.file", "reader").AddOutput("data").AddOutput("labels"); }

std::vector<uint8_t> Bytes(const TensorListCPU& data, int i) {
  const auto* p = static_cast<const uint8_t*>(data.raw_sample(i));
  return {p, p + data.shape(i).num_elements()};
}

TEST(ReaderSources, EveryOutputNamesEachSamplesFileAndIndex) {
  const FileDataset d = MakeFileDataset(3, 5);
  OpHarness h(Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true), Device::kCpu, 4);
  const auto& reader = dynamic_cast<const ops::ReaderOp&>(h.op());
  for (int it = 0; it < 5; ++it) {
    h.set_iteration(it);
    h.Run();
    const TensorListCPU& data = h.OutputCpu(0);
    const std::vector<SampleSource>& sources = data.sources();
    ASSERT_EQ(sources.size(), 4u);
    EXPECT_EQ(h.OutputCpu(1).sources(), sources);
    std::vector<std::string> files;
    for (int i = 0; i < 4; ++i) {
      const SampleSource& s = sources[static_cast<size_t>(i)];
      EXPECT_EQ(Bytes(data, i), d.bytes.at(s.file)) << "the source names the file the bytes came from";
      EXPECT_EQ(reader.dataset().paths.at(static_cast<size_t>(s.index)), s.file);
      EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(i)), d.labels.at(s.file));
      files.push_back(s.file);
    }
    EXPECT_EQ(reader.SourcesOf(it), files);
  }
}

// A check that rejects every file whose first byte is even: the batches hold only odd ones, full,
// labels aligned, and SkippedSamples lists each rejected file once with how often it was met.
TEST(ReaderSampleChecks, RejectedFilesAreReplacedAndListed) {
  const FileDataset d = MakeFileDataset(2, 8);
  std::set<std::string> rejected;
  for (const auto& [path, bytes] : d.bytes) {
    if (bytes.at(0) % 2 == 0) rejected.insert(path);
  }
  ASSERT_FALSE(rejected.empty());
  ASSERT_LT(rejected.size(), d.bytes.size());
  OpHarness h(Reader().SetArg("file_root", d.root), Device::kCpu, 3);
  auto& reader = dynamic_cast<ops::ReaderOp&>(h.op());
  reader.SkipSamplesFailing(
      0, [](const uint8_t* p, size_t n) { return n > 0 && p[0] % 2 == 0 ? std::string("even first byte") : ""; },
      "test check");
  const int good = static_cast<int>(d.bytes.size() - rejected.size());
  int delivered = 0;
  for (int it = 0; delivered < 2 * good; ++it) {  // two epochs
    h.Run();
    const TensorListCPU& data = h.OutputCpu(0);
    ASSERT_EQ(data.num_samples(), 3);
    for (int i = 0; i < 3; ++i) {
      const std::string& file = data.sources()[static_cast<size_t>(i)].file;
      EXPECT_EQ(rejected.count(file), 0u) << file;
      EXPECT_EQ(Bytes(data, i), d.bytes.at(file));
      EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(i)), d.labels.at(file));
    }
    delivered += 3;
  }
  std::set<std::string> listed;
  for (const Operator::Skipped& s : reader.SkippedSamples()) {
    EXPECT_EQ(s.reason, "even first byte");
    EXPECT_GE(s.times, 1);
    listed.insert(s.source);
  }
  EXPECT_EQ(listed, rejected);
}

// One file of 16 passes, read shuffled in batches of 3: every batch fills with it, however long the
// runs of rejected files between its draws (more than the dataset's 16 in a row happen: the reader
// once took that for "no file passes").
TEST(ReaderSampleChecks, OneGoodFileAmongManyStillFillsEveryBatch) {
  const FileDataset d = MakeFileDataset(2, 8);
  const auto& [good_path, good_bytes] = *d.bytes.begin();
  OpHarness h(Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true), Device::kCpu, 3);
  auto& reader = dynamic_cast<ops::ReaderOp&>(h.op());
  const std::vector<uint8_t> good = good_bytes;
  reader.SkipSamplesFailing(
      0,
      [good](const uint8_t* p, size_t n) {
        return std::vector<uint8_t>(p, p + n) == good ? std::string() : std::string("not the good file");
      },
      "test check");
  for (int it = 0; it < 20; ++it) {
    h.set_iteration(it);
    h.Run();
    for (int i = 0; i < 3; ++i) EXPECT_EQ(h.OutputCpu(0).sources()[static_cast<size_t>(i)].file, good_path);
  }
  EXPECT_EQ(reader.SkippedSamples().size(), d.bytes.size() - 1);
}

// Every file rejected: the reader stops, saying so, once more than twice the dataset's files in a
// row were rejected (a whole epoch among them).
TEST(ReaderSampleChecks, NoGoodFileStopsSayingSo) {
  const FileDataset d = MakeFileDataset(2, 4);
  OpHarness h(Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true), Device::kCpu, 3);
  auto& reader = dynamic_cast<ops::ReaderOp&>(h.op());
  reader.SkipSamplesFailing(
      0, [](const uint8_t*, size_t) { return std::string("never"); }, "test check");
  EXPECT_THAT([&] { h.Run(); },
              ::testing::ThrowsMessage<InvalidArgument>(::testing::ContainsRegex(
                  "op \"readers.file\" \\(reader\\): skipped 1[7-9] files in a row while filling one batch, more "
                  "than twice the dataset's 8: no file passes the check of test check \\(the last: file \".*\": "
                  "never\\)")));
}

TEST(ReaderSampleChecks, OnlyTheFileBytesOutputCanBeChecked) {
  const FileDataset d = MakeFileDataset(1, 2);
  OpHarness h(Reader().SetArg("file_root", d.root), Device::kCpu, 2);
  auto& reader = dynamic_cast<ops::ReaderOp&>(h.op());
  EXPECT_THAT(
      [&] {
        reader.SkipSamplesFailing(
            1, [](const uint8_t*, size_t) { return std::string(); }, "op \"x\" (y)");
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("op \"readers.file\" (reader): op \"x\" (y) asks to skip samples its check rejects, but "
                    "output 1 of this reader is not each file's bytes")));
}

}  // namespace
}  // namespace conveyor
