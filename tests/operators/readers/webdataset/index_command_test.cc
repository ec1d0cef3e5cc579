// `conveyor index webdataset` (the real binary): its index equals the wds2idx index make_tar.py
// derives from Python tarfile's own member offsets, byte for byte, beside the shard or in -o DIR;
// readers.webdataset reads the same samples through it; a compressed tar fails by name and gets no
// index.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "tests/cli/cli_runner.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WebDatasetIndexCommand, WritesWds2idxIndexesEqualToTarfiles) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("wds_index_cmd");
  std::vector<std::string> shards;
  for (int s = 0; s < 2; ++s) {
    std::vector<testing::TarMemberSpec> members;
    for (int i = 0; i < 20; ++i) {
      members.push_back({"d/k" + std::to_string(s * 100 + i) + ".jpg", testing::RandomBytes(rng, 100 + rng() % 3000)});
      if (i % 3) members.push_back({"d/k" + std::to_string(s * 100 + i) + ".seg.png", testing::RandomBytes(rng, rng() % 900)});
    }
    shards.push_back(dir + "/shard-" + std::to_string(s) + ".tar");
    testing::WriteTar(shards.back(), members, "pax", shards.back() + ".want");
  }
  cli_test::CliResult r = cli_test::RunConveyor({"index", "webdataset", shards[0], shards[1]});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string& s : shards) {
    EXPECT_EQ(ReadText(s + ".idx"), ReadText(s + ".want")) << s;
    EXPECT_THAT(r.out, HasSubstr(s + ": 20 samples of 33 members, "));
  }
  EXPECT_THAT(r.out, HasSubstr("2 shards, 40 samples, "));
  r = cli_test::RunConveyor({"index", "webdataset", shards[1], "-o", dir + "/idx"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ReadText(dir + "/idx/shard-1.tar.idx"), ReadText(shards[1] + ".want"));
}

TEST(WebDatasetIndexCommand, ACompressedTarFailsByNameAndGetsNoIndex) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("wds_index_gz");
  const std::string gz = dir + "/s.tar.gz";
  testing::WriteTar(gz, {{"a.jpg", testing::RandomBytes(rng, 100)}});
  const cli_test::CliResult r = cli_test::RunConveyor({"index", "webdataset", gz});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("conveyor index: error: shard \"" + gz + "\": a gzip-compressed tar"));
  EXPECT_FALSE(fs::exists(gz + ".idx"));
}

}  // namespace
}  // namespace conveyor
