// readers.file on generated folders: contents, labels, order, shuffling, shards, file lists,
// explicit files, every error message, a CPU pipeline with Pipeline::EpochSize, and conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/common/image_formats.h"
#include "core/pipeline/pipeline.h"
#include "operators/readers/reader_op.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/readers/dataset_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using testing::FileDataset;
using testing::MakeFileDataset;

OpSpec Reader() { return OpSpec("readers.file", "reader").AddOutput("data").AddOutput("labels"); }

std::vector<uint8_t> Bytes(const TensorListCPU& data, int i) {
  const auto* p = static_cast<const uint8_t*>(data.raw_sample(i));
  return {p, p + data.shape(i).num_elements()};
}

// The path of the file whose content is `bytes` (random contents are unique).
std::string PathOf(const FileDataset& d, const std::vector<uint8_t>& bytes) {
  for (const auto& [path, content] : d.bytes) {
    if (content == bytes) return path;
  }
  ADD_FAILURE() << "a sample matches no file";
  return "";
}

TEST(FileReader, FileRootServesEveryFileWithItsLabelInSortedOrder) {
  const FileDataset d = MakeFileDataset(3, 7);
  OpHarness h(Reader().SetArg("file_root", d.root), Device::kCpu, 4);
  std::vector<std::string> seen;
  for (int it = 0; it < 6; ++it) {  // 21 files, batch 4: 24 samples run into the next epoch
    h.Run();
    const TensorListCPU& data = h.OutputCpu(0);
    const TensorListCPU& labels = h.OutputCpu(1);
    ASSERT_EQ(data.num_samples(), 4);
    ASSERT_EQ(data.dtype(), DType::kUInt8);
    ASSERT_EQ(labels.dtype(), DType::kInt32);
    for (int i = 0; i < 4; ++i) {
      const std::string path = PathOf(d, Bytes(data, i));
      EXPECT_EQ(labels.shape(i), Shape{1});
      EXPECT_EQ(*static_cast<const int32_t*>(labels.raw_sample(i)), d.labels.at(path)) << path;
      seen.push_back(path);
    }
  }
  std::vector<std::string> want = d.sorted_paths;
  want.insert(want.end(), d.sorted_paths.begin(), d.sorted_paths.begin() + 3);
  EXPECT_EQ(seen, want);
}

TEST(FileReader, SourcesOfEachIterationNameItsFiles) {
  const FileDataset d = MakeFileDataset(2, 5);
  OpHarness h(Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true), Device::kCpu, 3);
  const auto& reader = dynamic_cast<const ops::ReaderOp&>(h.op());
  std::vector<std::vector<std::string>> by_iteration;
  for (int it = 0; it < 5; ++it) {
    h.set_iteration(it);
    h.Run();
    std::vector<std::string> files;
    for (int i = 0; i < 3; ++i) files.push_back(PathOf(d, Bytes(h.OutputCpu(0), i)));
    EXPECT_EQ(reader.SourcesOf(it), files) << "iteration " << it;
    by_iteration.push_back(files);
  }
  // Earlier iterations stay answerable (the GPU stage lags the CPU stage); unknown ones are empty.
  for (int it = 0; it < 5; ++it) EXPECT_EQ(reader.SourcesOf(it), by_iteration[static_cast<size_t>(it)]);
  EXPECT_TRUE(reader.SourcesOf(5).empty());
  EXPECT_TRUE(reader.SourcesOf(5 + ops::ReaderOp::kSourceHistory).empty());
  EXPECT_TRUE(reader.SourcesOf(-1).empty());
}

TEST(FileReader, RestoredStateContinuesTheSameStream) {
  const FileDataset d = MakeFileDataset(3, 4);
  auto spec = [&] { return Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true); };
  OpHarness a(spec(), Device::kCpu, 5);
  for (int it = 0; it < 3; ++it) a.Run();  // 15 samples: into the second epoch of 12
  const ops::ReaderState saved = dynamic_cast<const ops::ReaderOp&>(a.op()).State();
  EXPECT_EQ(saved.epoch, 1);
  EXPECT_EQ(saved.position, 3);
  const std::string text = ops::ReaderCore::Save(saved);

  OpHarness b(spec(), Device::kCpu, 5);
  dynamic_cast<ops::ReaderOp&>(b.op()).RestoreState(ops::ReaderCore::Parse(text));
  for (int it = 0; it < 4; ++it) {
    a.Run();
    b.Run();
    for (int i = 0; i < 5; ++i) EXPECT_EQ(Bytes(a.OutputCpu(0), i), Bytes(b.OutputCpu(0), i)) << it << " " << i;
  }
  EXPECT_THAT([&] { dynamic_cast<ops::ReaderOp&>(b.op()).RestoreState({-1, 0}); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("op \"readers.file\" (reader): cannot restore reader state epoch=-1 position=0")));
}

TEST(FileReader, ShuffledEpochsSeeEveryFileOnceInANewOrder) {
  const FileDataset d = MakeFileDataset(4, 5);  // 20 files, batch 5: 4 batches per epoch
  OpHarness h(Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true), Device::kCpu, 5);
  h.set_seed(std::random_device{}());
  std::vector<std::vector<std::string>> epochs(2);
  for (int it = 0; it < 8; ++it) {
    h.Run();
    for (int i = 0; i < 5; ++i) epochs[static_cast<size_t>(it / 4)].push_back(PathOf(d, Bytes(h.OutputCpu(0), i)));
  }
  for (const auto& e : epochs) {
    EXPECT_EQ(std::set<std::string>(e.begin(), e.end()).size(), 20u) << "every file exactly once per epoch";
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[0], d.sorted_paths);
}

TEST(FileReader, ShardsOfAFolderAreDisjointAndComplete) {
  const FileDataset d = MakeFileDataset(2, 11);
  std::set<std::string> all;
  for (int shard = 0; shard < 3; ++shard) {
    OpHarness h(Reader().SetArg("file_root", d.root).SetArg("shard_id", int64_t{shard}).SetArg("num_shards", int64_t{3}),
                Device::kCpu, 1);
    const int64_t size = shard == 2 ? 8 : 7;  // 22 files: [0, 7), [7, 14), [14, 22)
    EXPECT_EQ(h.op().EpochSize(1), size);
    for (int64_t i = 0; i < size; ++i) {
      h.Run();
      EXPECT_TRUE(all.insert(PathOf(d, Bytes(h.OutputCpu(0), 0))).second) << "a file in two shards";
    }
  }
  EXPECT_EQ(all.size(), 22u);
}

TEST(FileReader, FileListWithCommentsBlankLinesAndSpacesInPaths) {
  const std::string dir = testing::FreshTempDir("list");
  const std::vector<uint8_t> a = {1, 2, 3}, b = {4, 5, 6, 7};
  testing::WriteFile(dir + "/sub/a file.bin", a);
  testing::WriteFile(dir + "/b.bin", b);
  std::ofstream(dir + "/list.txt") << "# comment\n\nsub/a file.bin 17\r\n  b.bin\t-3  \n";
  OpHarness h(Reader().SetArg("file_list", dir + "/list.txt"), Device::kCpu, 2);
  h.Run();
  EXPECT_EQ(Bytes(h.OutputCpu(0), 0), a);
  EXPECT_EQ(Bytes(h.OutputCpu(0), 1), b);
  EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(0)), 17);
  EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(1).raw_sample(1)), -3);
}

TEST(FileReader, FilesWithAndWithoutLabels) {
  const std::string dir = testing::FreshTempDir("files");
  testing::WriteFile(dir + "/x", {9});
  testing::WriteFile(dir + "/y", {8, 8});
  OpHarness labelled(Reader().SetArg("files", std::vector<std::string>{dir + "/x", dir + "/y"})
                         .SetArg("labels", std::vector<int64_t>{5, 6}),
                     Device::kCpu, 2);
  labelled.Run();
  EXPECT_EQ(*static_cast<const int32_t*>(labelled.OutputCpu(1).raw_sample(1)), 6);
  OpHarness indexed(Reader().SetArg("files", std::vector<std::string>{dir + "/x", dir + "/y"}), Device::kCpu, 2);
  indexed.Run();
  EXPECT_EQ(*static_cast<const int32_t*>(indexed.OutputCpu(1).raw_sample(1)), 1);
  EXPECT_EQ(Bytes(indexed.OutputCpu(0), 1), (std::vector<uint8_t>{8, 8}));
}

TEST(FileReader, FiltersSkipOtherFiles) {
  const FileDataset d = MakeFileDataset(2, 3, ".JPG");
  testing::WriteFile(d.root + "/apple/notes.txt", {1});
  OpHarness h(Reader().SetArg("file_root", d.root), Device::kCpu, 1);
  EXPECT_EQ(h.op().EpochSize(1), 6) << "upper-case .JPG matches, .txt does not";
}

// The default file_filters are exactly the decoders' formats (operators/common/image_formats.h):
// every format they take under any case of its usual names; formats no decoder takes are not served.
TEST(FileReader, DefaultFiltersServeWhatTheDecodersTake) {
  const std::string dir = testing::FreshTempDir("default_filters");
  const std::vector<std::string> served = {"a.jpg", "b.JPEG", "c.jpe", "d.jfif", "e.png", "f.PNG", "g.bmp", "h.tif",
                                           "i.TIFF", "j.webp", "k.pnm", "l.ppm", "m.pgm", "n.pbm", "o.jp2", "p.J2K",
                                           "q.dib", "r.j2c", "s.jpc"};
  const std::vector<std::string> left = {"t.txt", "u.gif", "v.heic", "w.avif", "x.jxl", "y.psd", "z.pam"};
  for (const auto& name : served) testing::WriteFile(dir + "/cls/" + name, {1});
  for (const auto& name : left) testing::WriteFile(dir + "/cls/" + name, {1});
  OpHarness h(Reader().SetArg("file_root", dir), Device::kCpu, 1);
  EXPECT_EQ(h.op().EpochSize(1), static_cast<int64_t>(served.size()));
  std::vector<std::string> patterns;
  for (const ops::ImageFormatFiles& f : ops::DecodableImageFormats()) {
    patterns.insert(patterns.end(), f.patterns.begin(), f.patterns.end());
  }
  EXPECT_EQ(patterns, ops::DecodableImageFilters());
}

void ExpectError(const OpSpec& spec, const std::string& message) {
  EXPECT_THAT([&] { OpHarness h(spec, Device::kCpu, 2); h.Run(); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
}

TEST(FileReader, ErrorsNameTheFileAndWhatWasWrong) {
  const std::string dir = testing::FreshTempDir("errors");
  ExpectError(Reader().SetArg("file_root", dir + "/nope"), "op \"readers.file\" (reader): file_root \"" + dir +
                                                               "/nope\" does not exist");
  testing::WriteFile(dir + "/flat/a.jpg", {1});
  ExpectError(Reader().SetArg("file_root", dir + "/flat"),
              "has no subfolders (expected one folder of files per class)");
  ExpectError(Reader().SetArg("file_root", dir + "/flat/a.jpg"), "file_root \"" + dir + "/flat/a.jpg\" is not a folder");
  testing::WriteFile(dir + "/txt/cls/a.txt", {1});
  ExpectError(Reader().SetArg("file_root", dir + "/txt"), "has 1 class folders but no files matching *.jpg");
  ExpectError(Reader(), "give exactly one of file_root, file_list and files (got 0)");
  ExpectError(Reader().SetArg("file_root", dir).SetArg("file_list", dir + "/l"), "(got 2)");
  ExpectError(Reader().SetArg("file_root", dir + "/flat").SetArg("labels", std::vector<int64_t>{1}),
              "labels go with files");
  ExpectError(Reader().SetArg("files", std::vector<std::string>{dir + "/flat/a.jpg"}).SetArg("labels", std::vector<int64_t>{1, 2}),
              "labels has 2 values for 1 files (expected one label per file)");
  ExpectError(Reader().SetArg("file_list", dir + "/missing.txt"), "cannot open file_list \"" + dir + "/missing.txt\"");
  std::ofstream(dir + "/bad.txt") << "a.jpg 1\nb.jpg\n";
  ExpectError(Reader().SetArg("file_list", dir + "/bad.txt"),
              dir + "/bad.txt:2: expected \"relative/path label\", got \"b.jpg\"");
  std::ofstream(dir + "/bad2.txt") << "a.jpg one\n";
  ExpectError(Reader().SetArg("file_list", dir + "/bad2.txt"),
              "bad2.txt:1: expected an integer label after the path, got \"one\"");
  std::ofstream(dir + "/empty.txt") << "# nothing\n";
  ExpectError(Reader().SetArg("file_list", dir + "/empty.txt"), "lists no files");
  ExpectError(Reader().SetArg("files", std::vector<std::string>{dir + "/gone.jpg"}),
              "file \"" + dir + "/gone.jpg\": cannot open: No such file or directory");
  ExpectError(Reader().SetArg("files", std::vector<std::string>{dir + "/flat"}),
              "file \"" + dir + "/flat\": not a regular file");
  ExpectError(Reader().SetArg("files", std::vector<std::string>{dir + "/flat/a.jpg"}).SetArg("shard_id", int64_t{1}),
              "shard_id must be in [0, num_shards) = [0, 1), got 1");
}

std::string PipelineYaml(const std::string& root, const std::string& extra, int batch) {
  return "pipeline: {name: read, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: 3, prefetch_depth: 2, seed: 11}\n"
         "ops:\n  - op: readers.file\n    name: reader\n    args: {file_root: \"" +
         root + "\"" + extra + "}\n    outputs: [jpegs, labels]\noutputs: [jpegs, labels]\n";
}

TEST(FileReader, CpuPipelineReadsTheTreeEpochByEpoch) {
  const FileDataset d = MakeFileDataset(3, 9);  // 27 files
  Pipeline p = Pipeline::FromYaml(PipelineYaml(d.root, ", random_shuffle: true, pad_last_batch: true", 6));
  p.Build();
  EXPECT_EQ(p.EpochSize("reader"), 30) << "27 files padded to 5 whole batches of 6";
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::multiset<std::string> seen;
    for (int b = 0; b < 5; ++b) {
      PipelineOutputs out = p.Outputs();
      const TensorListCPU& data = out.Cpu(out.Index("jpegs"));
      const TensorListCPU& labels = out.Cpu(out.Index("labels"));
      for (int i = 0; i < data.num_samples(); ++i) {
        const std::string path = PathOf(d, Bytes(data, i));
        seen.insert(path);
        EXPECT_EQ(*static_cast<const int32_t*>(labels.raw_sample(i)), d.labels.at(path));
      }
      out.Release();
      p.Run();
    }
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 27u) << "epoch " << epoch;
    EXPECT_EQ(seen.size(), 30u);
  }
  EXPECT_THAT([&] { p.EpochSize("jpegs"); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("no node named \"jpegs\"")));
}

// Every file a batch opened is closed once it is read (on the pool, beside its read): after 40
// batches and the pipeline's end the process holds no more descriptors than before. Counted with
// no pipeline running: a running one reads ahead, so some of its files are open at any moment.
int OpenDescriptors() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// After 40 batches of 8 files (and the pipeline's end) the process holds no more descriptors
// than before; `extra`: more reader arguments.
void ExpectEveryFileClosed(const std::string& extra) {
  const FileDataset d = MakeFileDataset(3, 9);  // 27 files
  auto run = [&](int batches) {
    Pipeline p = Pipeline::FromYaml(PipelineYaml(d.root, ", random_shuffle: true" + extra, 8));
    p.Build();
    for (int k = 0; k < batches; ++k) {
      p.Outputs().Release();
      p.Run();
    }
  };
  run(3);  // what the process keeps once started (thread pools) exists before the count
  const int before = OpenDescriptors();
  run(40);
  EXPECT_LE(OpenDescriptors(), before) << "40 batches of 8 files left descriptors open (" << extra << ")";
}

TEST(FileReader, ClosesEveryFileItRead) { ExpectEveryFileClosed(""); }

// read_ahead: true reads batch k+1's files on the reader's own threads during iteration k; the
// stream, the sources, the restored state and every error are the same as without.
TEST(FileReader, ReadAheadGivesTheSameStream) {
  const FileDataset d = MakeFileDataset(4, 5);  // 20 files, batch 6: epochs end inside batches
  const uint64_t seed = std::random_device{}();
  auto spec = [&](bool ahead) {
    return Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true).SetArg("read_ahead", ahead);
  };
  OpHarness plain(spec(false), Device::kCpu, 6), ahead(spec(true), Device::kCpu, 6);
  plain.set_seed(seed);
  ahead.set_seed(seed);
  const auto& reader = dynamic_cast<const ops::ReaderOp&>(ahead.op());
  for (int it = 0; it < 12; ++it) {
    plain.set_iteration(it);
    ahead.set_iteration(it);
    plain.Run();
    ahead.Run();
    for (int i = 0; i < 6; ++i) {
      ASSERT_EQ(Bytes(ahead.OutputCpu(0), i), Bytes(plain.OutputCpu(0), i)) << "iteration " << it << " sample " << i;
      EXPECT_EQ(*static_cast<const int32_t*>(ahead.OutputCpu(1).raw_sample(i)),
                *static_cast<const int32_t*>(plain.OutputCpu(1).raw_sample(i)));
      EXPECT_EQ(ahead.OutputCpu(0).sources()[static_cast<size_t>(i)].file,
                plain.OutputCpu(0).sources()[static_cast<size_t>(i)].file);
    }
    EXPECT_EQ(reader.SourcesOf(it), dynamic_cast<const ops::ReaderOp&>(plain.op()).SourcesOf(it));
  }
  // Every batch after the first came from the read ahead (the first had none started).
  EXPECT_EQ(reader.read_ahead_batches(), 11);
  EXPECT_EQ(dynamic_cast<const ops::ReaderOp&>(plain.op()).read_ahead_batches(), 0);
}

TEST(FileReader, ReadAheadRestoredStateContinuesTheSameStream) {
  const FileDataset d = MakeFileDataset(3, 4);
  auto spec = [&](bool ahead) {
    return Reader().SetArg("file_root", d.root).SetArg("random_shuffle", true).SetArg("read_ahead", ahead);
  };
  OpHarness a(spec(true), Device::kCpu, 5);
  for (int it = 0; it < 3; ++it) a.Run();
  // A restore between batches: the read started for the old position is of other files.
  OpHarness b(spec(true), Device::kCpu, 5);
  b.Run();
  auto& rb = dynamic_cast<ops::ReaderOp&>(b.op());
  rb.RestoreState(dynamic_cast<const ops::ReaderOp&>(a.op()).State());
  for (int it = 0; it < 4; ++it) {
    a.Run();
    b.Run();
    for (int i = 0; i < 5; ++i) EXPECT_EQ(Bytes(a.OutputCpu(0), i), Bytes(b.OutputCpu(0), i)) << it << " " << i;
  }
  EXPECT_EQ(rb.read_ahead_batches(), 3) << "the batch after the restore was read in the CPU stage";
}

TEST(FileReader, ReadAheadErrorsAreTheSame) {
  const std::string dir = testing::FreshTempDir("read_ahead_errors");
  testing::WriteFile(dir + "/cls/a.jpg", {1, 2, 3});
  testing::WriteFile(dir + "/cls/b.jpg", {4, 5});
  std::filesystem::create_directories(dir + "/cls/c.jpg");  // a folder where a file is expected
  auto files = [&](std::vector<std::string> names) {
    for (std::string& n : names) n = dir + "/cls/" + n;
    return Reader().SetArg("files", names).SetArg("read_ahead", true);
  };
  // In the second batch: the read ahead of it fails, the CPU stage reads it and says why.
  for (const auto& [name, message] : std::vector<std::pair<std::string, std::string>>{
           {"gone.jpg", "cannot open: No such file or directory"}, {"c.jpg", "not a regular file"}}) {
    OpHarness h(files({"a.jpg", "b.jpg", name}), Device::kCpu, 2);
    h.Run();
    EXPECT_THAT([&] { h.Run(); }, ::testing::ThrowsMessage<InvalidArgument>(
                                      HasSubstr("op \"readers.file\" (reader): file \"" + dir + "/cls/" + name +
                                                "\": " + message)));
  }
  // An empty file is read in the CPU stage too (the read ahead takes only non-empty files).
  testing::WriteFile(dir + "/cls/empty.jpg", {});
  OpHarness h(files({"a.jpg", "empty.jpg"}), Device::kCpu, 2);
  for (int it = 0; it < 3; ++it) {
    h.Run();
    EXPECT_EQ(Bytes(h.OutputCpu(0), 0), (std::vector<uint8_t>{1, 2, 3}));
    EXPECT_EQ(h.OutputCpu(0).shape(1), Shape{0});
  }
  EXPECT_EQ(dynamic_cast<const ops::ReaderOp&>(h.op()).read_ahead_batches(), 0);
}

TEST(FileReader, ReadAheadRefusesSampleChecks) {
  const FileDataset d = MakeFileDataset(2, 3);
  OpHarness h(Reader().SetArg("file_root", d.root).SetArg("read_ahead", true), Device::kCpu, 2);
  EXPECT_THAT(
      [&] {
        dynamic_cast<ops::ReaderOp&>(h.op()).SkipSamplesFailing(
            0, [](const uint8_t*, size_t) { return std::string(); }, "op \"decoders.image\" (decode)");
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(
          "op \"readers.file\" (reader): op \"decoders.image\" (decode) asks to skip samples its check rejects, "
          "which reads and checks each batch's files in the CPU stage; this reader's read_ahead: true reads them "
          "earlier, on its own threads: set read_ahead: false, or on_error: raise")));
}

TEST(FileReader, ReadAheadClosesEveryFileItRead) { ExpectEveryFileClosed(", read_ahead: true"); }

TEST(FileReader, EpochSizeErrors) {
  Pipeline p = Pipeline::FromYaml(
      "pipeline: {name: e, batch_size: 2, device: cpu}\nops:\n  - op: random.uniform\n    name: u\n"
      "    outputs: [x]\noutputs: [x]\n");
  EXPECT_THAT([&] { p.EpochSize("u"); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("EpochSize() before Build()")));
  p.Build();
  EXPECT_THAT([&] { p.EpochSize("u"); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("node \"u\" (op \"random.uniform\") is not a reader: it has no epoch size")));
}

using testing::OperatorConformance;
const std::string kFixtures = "tests/operators/readers/testdata/";
INSTANTIATE_TEST_SUITE_P(
    FileReader, OperatorConformance,
    ::testing::Values(testing::ConformanceCase{
        "cpu",
        Reader().SetArg("files", std::vector<std::string>{kFixtures + "uint8_c.npy", kFixtures + "float32_c.npy"}),
        Device::kCpu}),
    testing::CaseName);

}  // namespace
}  // namespace conveyor
