// `conveyor index tfrecord` (the real binary): its indexes equal what DALI's tfrecord2idx writes
// (write_tfrecords.py writes those beside the files), into the file's folder or -o DIR; a damaged
// file fails naming its record and leaves no index; usage errors exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "tests/cli/cli_runner.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

TEST(IndexCommand, WritesTfrecord2idxIndexes) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("index_cmd");
  const auto files = testing::MakeTfRecordDataset(dir, 2, 25, rng);
  // Python's indexes move aside; ours must come out byte-identical.
  for (const auto& f : files) fs::rename(f.path + ".idx", f.path + ".want");
  cli_test::CliResult r = cli_test::RunConveyor({"index", "tfrecord", files[0].path, files[1].path});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& f : files) {
    EXPECT_EQ(testing::ReadText(f.path + ".idx"), testing::ReadText(f.path + ".want")) << f.path;
    EXPECT_THAT(r.out, HasSubstr(f.path + ": 25 records, "));
  }
  EXPECT_THAT(r.out, HasSubstr("2 files, 50 records, "));
  // -o DIR: the indexes go there, named after the files.
  r = cli_test::RunConveyor({"index", "tfrecord", files[0].path, "-o", dir + "/idx"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::ReadText(dir + "/idx/part-0.tfrecord.idx"), testing::ReadText(files[0].path + ".want"));
}

TEST(IndexCommand, ADamagedFileFailsNamingItsRecordAndWritesNoIndex) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("index_cmd_bad");
  const auto files = testing::MakeTfRecordDataset(dir, 1, 5, rng);
  const std::string path = files[0].path;
  fs::remove(path + ".idx");
  std::string bytes = testing::ReadText(path);
  testing::WriteText(path, bytes.substr(0, bytes.size() - 3));
  const cli_test::CliResult r = cli_test::RunConveyor({"index", "tfrecord", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("conveyor index: error: \"" + path + "\": record 4 at offset "));
  EXPECT_THAT(r.err, HasSubstr("(truncated?)"));
  EXPECT_FALSE(fs::exists(path + ".idx"));
  EXPECT_EQ(cli_test::RunConveyor({"index", "tfrecord"}).status, 2);  // no files
  EXPECT_EQ(cli_test::RunConveyor({"index"}).status, 2);              // no format
  EXPECT_EQ(cli_test::RunConveyor({"index", "tfrecords", path}).status, 2);
}

}  // namespace
}  // namespace conveyor
