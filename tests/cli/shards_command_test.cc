// `conveyor shards` (the real binary) on a generated folder of class subfolders: the tar shards,
// read back by Python's tarfile and by readers.webdataset through their indexes, and the TFRecord
// files, by write_tfrecords.py --dump (Python's CRC32C and protobuf), give every file's bytes and
// label; the indexes equal `conveyor index`'s; each
// shard stays within --shard-size unless one sample alone exceeds it, and is closed only when the
// next sample would not fit; mistakes fail with messages naming the file or option.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>

#include "cli/shards_command.h"
#include "core/error.h"
#include "tests/cli/cli_runner.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;
using cli_test::ReadText;
using cli_test::RunConveyor;

constexpr int64_t kTarget = 16 * 1024;

struct InputFile {
  std::string path;  // as the command lists it: file_root / class / name
  std::string ext;   // the member extension expected in a tar
  std::string data;
  int label = 0;
};

std::string Hex(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) hex += {kDigits[c >> 4], kDigits[c & 15]};
  return hex.empty() ? "-" : hex;
}

// Three classes of random "images" (sizes 100..6,000 bytes, one of 20,000: larger than the
// target alone), with upper-case and .png names, and files the decoders don't take (left out).
std::vector<InputFile> MakeFolder(const std::string& root, uint32_t seed) {
  std::mt19937 rng(seed);
  const char* classes[] = {"ant", "bee", "cat"};
  std::vector<InputFile> files;
  for (int label = 0; label < 3; ++label) {
    for (int i = 0; i < 9; ++i) {
      std::string name = "img_" + std::to_string(i) + (i == 4 ? ".JPG" : i == 7 ? ".png" : ".jpg");
      const size_t size = label == 1 && i == 2 ? 20000 : 100 + rng() % 5900;
      const std::vector<uint8_t> bytes = cli_test::RandomBytes(size, rng());
      const std::string path = root + "/" + classes[label] + "/" + name;
      cli_test::WriteText(path, std::string(bytes.begin(), bytes.end()));
      files.push_back({path, i == 7 ? "png" : "jpg", std::string(bytes.begin(), bytes.end()), label});
    }
    cli_test::WriteText(root + "/" + classes[label] + "/notes.txt", "not an image");
  }
  std::sort(files.begin(), files.end(), [](const InputFile& a, const InputFile& b) { return a.path < b.path; });
  std::stable_sort(files.begin(), files.end(), [](const InputFile& a, const InputFile& b) { return a.label < b.label; });
  return files;
}

std::vector<std::string> ShardsIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> shards;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string p = entry.path().string();
    if (p.ends_with(suffix)) shards.push_back(p);
    EXPECT_FALSE(p.ends_with(".tmp")) << "left under a temporary name: " << p;
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

// The index `conveyor index FORMAT` writes for `shard` equals the one written beside it.
void ExpectIndexesAsConveyorIndex(const std::string& format, const std::vector<std::string>& shards,
                                  const std::string& dir) {
  std::vector<std::string> args = {"index", format, "-o", dir};
  args.insert(args.end(), shards.begin(), shards.end());
  const cli_test::CliResult r = RunConveyor(args);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string& s : shards) {
    EXPECT_EQ(ReadText(s + ".idx"), ReadText(dir + "/" + fs::path(s).filename().string() + ".idx")) << s;
  }
}

// Each shard within the target unless it holds one sample; closed only when the next didn't fit.
void ExpectSizesRespectTarget(const std::vector<std::string>& shards, const std::vector<int64_t>& samples_per_shard,
                              const std::vector<int64_t>& sample_bytes) {
  size_t next = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    const int64_t size = static_cast<int64_t>(fs::file_size(shards[s]));
    if (samples_per_shard[s] > 1) EXPECT_LE(size, kTarget) << shards[s];
    next += static_cast<size_t>(samples_per_shard[s]);
    if (next < sample_bytes.size()) {
      EXPECT_GT(size + sample_bytes[next], kTarget)
          << shards[s] << " was closed though the next sample fits";
    }
  }
}

int64_t TarBytes(int64_t size) { return 512 + (size + 511) / 512 * 512; }

TEST(ShardsCommand, WebDatasetShardsReadBackByTarfileWithIndexesAsConveyorIndex) {
  const std::string dir = cli_test::MakeTempDir("shards_wds");
  const std::vector<InputFile> files = MakeFolder(dir + "/root", std::random_device{}());
  const cli_test::CliResult r = RunConveyor({"shards", "--format", "webdataset", "--file-root", dir + "/root",
                                             "--output", dir + "/out", "--shard-size", "16K", "--prefix", "train"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> shards = ShardsIn(dir + "/out", ".tar");
  ASSERT_GE(shards.size(), 4u);
  EXPECT_THAT(r.out, HasSubstr(std::to_string(shards.size()) + " shards, 27 samples, "));
  EXPECT_THAT(r.out, HasSubstr("MB/s) to " + dir + "/out"));
  EXPECT_EQ(fs::path(shards[0]).filename(), "train-000000.tar");

  std::vector<int64_t> samples_per_shard, sample_bytes;
  std::string listing;
  for (const std::string& shard : shards) {
    const cli_test::CliResult py = cli_test::RunProgram("/usr/bin/python3", {"tests/cli/read_tar.py", shard});
    ASSERT_EQ(py.status, 0) << py.err;
    listing += py.out;
    samples_per_shard.push_back(std::count(py.out.begin(), py.out.end(), '\n') / 2);
  }
  std::string want;
  for (size_t i = 0; i < files.size(); ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "%06zu", i);
    const std::string label = std::to_string(files[i].label);
    want += std::string(key) + "." + files[i].ext + " " + std::to_string(files[i].data.size()) + " " +
            Hex(files[i].data) + "\n";
    want += std::string(key) + ".cls " + std::to_string(label.size()) + " " + Hex(label) + "\n";
    sample_bytes.push_back(TarBytes(static_cast<int64_t>(files[i].data.size())) + TarBytes(1));
  }
  EXPECT_EQ(listing, want);
  ExpectSizesRespectTarget(shards, samples_per_shard, sample_bytes);
  ExpectIndexesAsConveyorIndex("webdataset", shards, dir + "/idx");

  // readers.webdataset reads them through the indexes, in order: each sample's bytes and label.
  const std::string yaml = dir + "/read.yaml";
  const std::string range = "out/train-{000000.." + fs::path(shards.back()).stem().string().substr(6) + "}.tar";
  cli_test::WriteText(yaml, "pipeline: {name: read, batch_size: 27, device: cpu}\nops:\n"
                            "  - op: readers.webdataset\n    name: reader\n    args:\n"
                            "      paths: [\"" + range + "\"]\n      index_paths: [\"" + range + ".idx\"]\n"
                            "      ext: [\"jpg;png\", cls]\n      missing_component_behavior: error\n"
                            "    outputs: [images, labels]\noutputs: [images, labels]\n");
  const cli_test::CliResult read =
      RunConveyor({"run", yaml, "--iterations", "1", "--no-progress", "--save-outputs", dir + "/read"});
  ASSERT_EQ(read.status, 0) << read.err;
  const std::string labels = ReadText(dir + "/read/labels_000000.npy");  // uniform: one [27, 1] array
  ASSERT_GT(labels.size(), files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "_000000_%04zu.npy", i);
    const std::string image = ReadText(dir + "/read/images" + name);
    EXPECT_TRUE(image.size() > files[i].data.size() && image.ends_with(files[i].data)) << files[i].path;
    EXPECT_EQ(labels[labels.size() - files.size() + i], '0' + files[i].label) << files[i].path;
  }

  // --index delegates to the same indexer: the format from the name, into --output.
  const cli_test::CliResult idx = RunConveyor({"shards", "--index", shards[0], shards[1], "--output", dir + "/idx2"});
  ASSERT_EQ(idx.status, 0) << idx.err;
  EXPECT_EQ(ReadText(dir + "/idx2/train-000001.tar.idx"), ReadText(shards[1] + ".idx"));
  EXPECT_THAT(idx.out, HasSubstr("2 shards, "));
}

TEST(ShardsCommand, TfRecordShardsFromAFileListShuffledReadBackByPython) {
  const std::string dir = cli_test::MakeTempDir("shards_tfr");
  const std::vector<InputFile> files = MakeFolder(dir + "/root", std::random_device{}());
  std::string list;
  for (const InputFile& f : files) list += fs::relative(f.path, dir).string() + " " + std::to_string(f.label + 10) + "\n";
  cli_test::WriteText(dir + "/list.txt", list);
  for (const char* out : {"/out", "/again"}) {
    const cli_test::CliResult r =
        RunConveyor({"shards", "--format", "tfrecord", "--file-list", dir + "/list.txt", "--output", dir + out,
                     "--shard-size", "0.015625M", "--shuffle", "--seed", "7", "--no-progress"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const std::vector<std::string> shards = ShardsIn(dir + "/out", ".tfrecord");
  ASSERT_GE(shards.size(), 4u);

  std::multiset<std::string> got, want;
  std::vector<std::string> order, list_order;
  std::vector<int64_t> samples_per_shard;
  for (const std::string& shard : shards) {
    EXPECT_EQ(ReadText(shard), ReadText(dir + "/again/" + fs::path(shard).filename().string())) << "same seed, same bytes";
    const cli_test::CliResult py = cli_test::RunProgram(
        "/usr/bin/python3", {"tests/operators/readers/tfrecord/write_tfrecords.py", "--dump", shard});
    ASSERT_EQ(py.status, 0) << py.err;
    std::istringstream lines(py.out);
    int64_t n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
      got.insert(line);
      order.push_back(line);
    }
    samples_per_shard.push_back(n);
  }
  for (const InputFile& f : files) {
    list_order.push_back("image/class/label int64_list " + std::to_string(f.label + 10) + " | image/encoded bytes_list " +
                         Hex(f.data));
    want.insert(list_order.back());
  }
  EXPECT_EQ(got, want);
  EXPECT_NE(order, list_order) << "--shuffle kept the list's order";
  // Each record's framed size, from the indexes (which ExpectIndexesAsConveyorIndex checks).
  std::vector<int64_t> sample_bytes;
  for (const std::string& shard : shards) {
    std::istringstream rows(ReadText(shard + ".idx"));
    for (int64_t offset, size; rows >> offset >> size;) sample_bytes.push_back(size);
  }
  ASSERT_EQ(sample_bytes.size(), files.size());
  ExpectSizesRespectTarget(shards, samples_per_shard, sample_bytes);
  ExpectIndexesAsConveyorIndex("tfrecord", shards, dir + "/idx");
}

TEST(ShardsCommand, MistakesFailNamingTheFileOrOption) {
  const std::string dir = cli_test::MakeTempDir("shards_errors");
  MakeFolder(dir + "/root", 5);
  const std::vector<std::string> base = {"shards", "--format", "webdataset", "--output", dir + "/out"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return RunConveyor(args);
  };
  cli_test::CliResult r = run({"--file-root", dir + "/nope"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("conveyor shards: error: --file-root: file_root \"" + dir + "/nope\" does not exist"));

  cli_test::WriteText(dir + "/a_file", "x");
  r = RunConveyor({"shards", "--format", "tfrecord", "--file-root", dir + "/root", "--output", dir + "/a_file/sub"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--output \"" + dir + "/a_file/sub\": cannot create the folder: "));

  r = run({"--file-root", dir + "/root", "--shard-size", "12X"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--shard-size: expected a size in bytes such as 256M or 1G (K, M, G, T: powers of "
                               "1024), got \"12X\""));
  r = run({"--file-root", dir + "/root", "--shard-size", "0"});
  EXPECT_THAT(r.err, HasSubstr("got \"0\": it must be at least 1 byte"));
  r = run({"--file-root", dir + "/root", "--prefix", "a/b"});
  EXPECT_THAT(r.err, HasSubstr("--prefix: expected a file name without '/' (shards are PREFIX-000000.tar, ...), "
                               "got \"a/b\""));

  cli_test::WriteText(dir + "/list.txt", "root/ant/img_0.jpg 0\nroot/ant/missing.jpg 1\n");
  r = run({"--file-list", dir + "/list.txt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("\"" + dir + "/root/ant/missing.jpg\": cannot read: "));

  r = run({"--file-root", dir + "/root", "--file-list", dir + "/list.txt"});
  EXPECT_THAT(r.err, HasSubstr("expected one input, --file-root DIR or --file-list FILE, got both"));
  r = RunConveyor({"shards", "--index", dir + "/a_file"});
  EXPECT_THAT(r.err, HasSubstr("cannot tell the format of \"" + dir + "/a_file\" from its name"));
  EXPECT_FALSE(fs::exists(dir + "/out/shard-000000.tar"));

  // A second run into the same folder and prefix would mix its shards with the first's.
  ASSERT_EQ(run({"--file-root", dir + "/root"}).status, 0);
  r = run({"--file-root", dir + "/root", "--shard-size", "4K"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--output \"" + dir + "/out\" already holds \"shard-000000.tar"));
  EXPECT_EQ(run({"--file-root", dir + "/root", "--prefix", "other"}).status, 0);
}

TEST(ShardsCommand, ShardSizesReadWithBinaryUnits) {
  EXPECT_EQ(cli::ParseByteSize("256M"), int64_t{256} << 20);
  EXPECT_EQ(cli::ParseByteSize("1G"), int64_t{1} << 30);
  EXPECT_EQ(cli::ParseByteSize("1.5g"), int64_t{3} << 29);
  EXPECT_EQ(cli::ParseByteSize("64KiB"), int64_t{64} << 10);
  EXPECT_EQ(cli::ParseByteSize("2TB"), int64_t{2} << 40);
  EXPECT_EQ(cli::ParseByteSize("1000"), 1000);
  EXPECT_EQ(cli::ParseByteSize("512B"), 512);
  for (const char* bad : {"", "M", "-1", "12X", "1MM", "1 G", "0.1", "inf", "9999999T"}) {
    try {
      cli::ParseByteSize(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("--shard-size: expected a size in bytes such as 256M or 1G"));
      EXPECT_THAT(e.what(), HasSubstr("got \"" + std::string(bad) + "\""));
    }
  }
  // --seed orders only a shuffle: alone it is a usage error.
  const cli_test::CliResult r = RunConveyor({"shards", "--format", "tfrecord", "--file-root", "x", "--output", "y",
                                             "--seed", "3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--seed requires --shuffle"));
}

}  // namespace
}  // namespace conveyor
