// ScanTar and the index format on tars written by Python's tarfile: members and offsets as
// written (ustar, GNU and pax headers, long names), data read back byte-identical, WebDataset's
// grouping, index text round trip, and every error message (cut tars, sizes past the end,
// compressed and non-tar shards, malformed index lines).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;
using testing::RandomBytes;
using testing::TarMemberSpec;
using testing::WriteTar;

std::vector<uint8_t> ReadBack(const ByteSource& source, int64_t offset, int64_t size) {
  std::vector<uint8_t> out(static_cast<size_t>(size));
  source.ReadAt(offset, out.data(), size);
  return out;
}

void Truncate(const std::string& path, int64_t size) { std::filesystem::resize_file(path, static_cast<uintmax_t>(size)); }

TEST(TarScan, MembersAndOffsetsAreWhatTheEncoderWroteInEveryHeaderFormat) {
  std::mt19937 rng(std::random_device{}());
  for (const std::string format : {"ustar", "gnu", "pax"}) {
    std::vector<TarMemberSpec> members;
    members.push_back({"dir", {}, true});
    for (int i = 0; i < 40; ++i) {
      // Sizes around block boundaries, empty members, and (gnu, pax) names past ustar's 100 bytes.
      const size_t size = i % 5 == 0 ? 512 * static_cast<size_t>(i / 5) : std::uniform_int_distribution<size_t>(0, 5000)(rng);
      const std::string dir = format != "ustar" && i % 7 == 3 ? "dir/" + std::string(120, 'x') + "/" : "dir/";
      members.push_back({dir + "s" + std::to_string(i / 2) + (i % 2 ? ".cls" : ".jpg"), RandomBytes(rng, size), false});
    }
    const std::string path = testing::FreshTempDir("scan") + "/shard.tar";
    WriteTar(path, members, format);
    const auto source = OpenByteSource(path);
    const std::vector<TarMember> scanned = ScanTar(*source);
    ASSERT_EQ(scanned.size(), members.size() - 1) << format << ": the directory is left out";
    for (size_t i = 0; i < scanned.size(); ++i) {
      const TarMemberSpec& want = members[i + 1];
      EXPECT_EQ(scanned[i].name, want.name) << format;
      EXPECT_EQ(scanned[i].offset % 512, 0) << format << " " << want.name;
      ASSERT_EQ(scanned[i].size, static_cast<int64_t>(want.bytes.size())) << format << " " << want.name;
      EXPECT_EQ(ReadBack(*source, scanned[i].offset, scanned[i].size), want.bytes) << format << " " << want.name;
    }
  }
}

TEST(TarScan, MembersGroupIntoSamplesByWebDatasetsRule) {
  EXPECT_EQ(SplitMemberName("a/b.c/0001.seg.png")->key, "a/b.c/0001");
  EXPECT_EQ(SplitMemberName("a/b.c/0001.seg.png")->ext, "seg.png");
  EXPECT_EQ(SplitMemberName("noext")->ext, "");
  EXPECT_FALSE(SplitMemberName("a/.hidden.jpg"));
  const std::vector<TarMember> members = {{"x/1.jpg", 512, 3}, {"x/1.cls", 1536, 1}, {"x/.DS_Store", 2560, 4},
                                          {"x/2.jpg", 3584, 5}, {"x/1.txt", 4608, 2}};
  const std::vector<ShardSample> samples = GroupMembers(members);
  ASSERT_EQ(samples.size(), 3u) << "consecutive members share a sample; a key met again starts another";
  EXPECT_EQ(samples[0].key, "x/1");
  EXPECT_EQ(samples[0].components, (std::vector<ShardComponent>{{"jpg", 512, 3}, {"cls", 1536, 1}}));
  EXPECT_EQ(samples[1].key, "x/2");
  EXPECT_EQ(samples[2].components, (std::vector<ShardComponent>{{"txt", 4608, 2}}));
}

TEST(TarScan, IndexTextRoundTripsTheScan) {
  std::mt19937 rng(std::random_device{}());
  const std::string path = testing::FreshTempDir("index") + "/shard.tar";
  testing::MakeWdsShard(path, 30, {"jpg", "cls", "json"}, rng, "k");
  const std::vector<ShardSample> scanned = GroupMembers(ScanTar(*OpenByteSource(path)));
  const std::string text = FormatWdsIndex(scanned, path);
  EXPECT_EQ(text.substr(0, 8), "v1.2 30\n");
  EXPECT_EQ(ParseWdsIndex(text, "i.idx"), scanned);
  // v1.1 (no member names): the same components, keys from the line.
  const std::vector<ShardSample> old = ParseWdsIndex("v1.1 2\njpg 512 10 cls 1024 3\njpg 2048 7\n", "old.idx");
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old[0].key, "#2");
  EXPECT_EQ(old[1].components, (std::vector<ShardComponent>{{"jpg", 2048, 7}}));
  EXPECT_THAT([] { FormatWdsIndex({ShardSample{"a b", {{"jpg", 512, 1}}, 0}}, "s.tar"); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("shard \"s.tar\": member \"a b.jpg\" has whitespace in its name")));
}

TEST(TarScan, BadIndexLinesAreNamedByFileAndLine) {
  const auto parse_error = [](const std::string& text) {
    try {
      ParseWdsIndex(text, "d/s.idx");
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(parse_error("v9 3\n"), HasSubstr("index \"d/s.idx\" line 1: expected \"v1.2 <number of samples>\" "
                                               "(or v1.1: DALI's wds2idx format), got \"v9 3\""));
  EXPECT_THAT(parse_error("v1.2 2\njpg 512 3 a.jpg\n"),
              HasSubstr("index \"d/s.idx\" line 3: the header announces 2 samples, the file ends after 1"));
  EXPECT_THAT(parse_error("v1.2 1\njpg 512 3\n"),
              HasSubstr("line 2: expected \"<ext> <offset> <size> <name>\" per component, got \"jpg 512 3\""));
  EXPECT_THAT(parse_error("v1.2 1\njpg x 3 a.jpg\n"),
              HasSubstr("line 2: expected a byte offset and size (integers >= 0) after \"jpg\", got \"x 3\""));
  EXPECT_THAT(parse_error("v1.2 1\njpg 513 3 a.jpg\n"), HasSubstr("line 2: offset 513 of \"jpg\" is not a multiple of 512"));
  EXPECT_THAT(parse_error("v1.2 1\njpg 512 3 a.jpg cls 1024 1 b.cls\n"),
              HasSubstr("line 2: member \"b.cls\" has key \"b\", the sample's first member \"a\": one line is one sample"));
  EXPECT_THAT(parse_error("v1.2 1\njpg 512 3 a.jpg\njpg 1024 3 b.jpg\n"),
              HasSubstr("line 3: the header announces 1 samples, but more lines follow"));
}

std::string ScanError(const std::string& path) {
  try {
    ScanTar(*OpenByteSource(path));
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

TEST(TarScan, CutShardsAndNonTarsAreRefusedWithTheirReason) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("bad");
  const std::vector<TarMemberSpec> members = {{"a.jpg", RandomBytes(rng, 3000), false},
                                              {"b.jpg", RandomBytes(rng, 4000), false}};
  // Cut inside b.jpg's data: its header promises more than the shard holds (found before skipping).
  const std::string cut_data = dir + "/cut_data.tar";
  WriteTar(cut_data, members, "ustar");
  const int64_t b_offset = ScanTar(*OpenByteSource(cut_data))[1].offset;
  Truncate(cut_data, b_offset + 1000);
  EXPECT_THAT(ScanError(cut_data), HasSubstr("shard \"" + cut_data + "\": member \"b.jpg\": its header says 4000 bytes "
                                             "at offset " + std::to_string(b_offset) + ", but the shard holds " +
                                             std::to_string(b_offset + 1000) + " bytes (truncated?)"));
  // Cut inside b.jpg's header: libarchive's reason, after the last good member.
  const std::string cut_header = dir + "/cut_header.tar";
  WriteTar(cut_header, members, "ustar");
  Truncate(cut_header, b_offset - 200);
  EXPECT_THAT(ScanError(cut_header), HasSubstr("shard \"" + cut_header + "\": not a readable tar: "));
  EXPECT_THAT(ScanError(cut_header), HasSubstr("(after member \"a.jpg\" at offset 512)"));
  // A header whose size field claims more than the file (patched: 0o77777777 bytes).
  const std::string big = dir + "/big.tar";
  WriteTar(big, members, "ustar");
  {
    std::fstream f(big, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(124);
    f.write("77777777777", 11);  // size field of a.jpg's header (checksum now wrong: fix it)
    unsigned sum = 0;
    char header[512];
    f.seekg(0);
    f.read(header, 512);
    std::memset(header + 148, ' ', 8);
    for (char c : header) sum += static_cast<unsigned char>(c);
    char field[8];
    std::snprintf(field, sizeof(field), "%06o", sum);
    f.seekp(148);
    f.write(field, 7);
  }
  EXPECT_THAT(ScanError(big), HasSubstr("member \"a.jpg\": its header says 8589934591 bytes at offset 512, but the "
                                        "shard holds"));
  const std::string gz = dir + "/shard.tar.gz";
  WriteTar(gz, members, "ustar");
  EXPECT_THAT(ScanError(gz), HasSubstr("shard \"" + gz + "\": a gzip-compressed tar: its members cannot be read at "
                                       "offsets; decompress the shard"));
  const std::string junk = dir + "/junk.tar";
  testing::WriteFile(junk, RandomBytes(rng, 5000));
  EXPECT_THAT(ScanError(junk), HasSubstr("shard \"" + junk + "\": not a readable tar: "));
  EXPECT_THAT(ScanError(dir + "/missing.tar"), HasSubstr("\"" + dir + "/missing.tar\": cannot open: No such file"));
}

}  // namespace
}  // namespace conveyor::ops
