// The local ByteSource (pread): reads byte-identical to the file, and each error with its text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "operators/readers/io/byte_source.h"
#include "tests/operators/readers/io/test_http_server.h"

namespace conveyor::ops::testing {
namespace {

using ::testing::HasSubstr;

TEST(LocalSourceTest, ReadsAreByteIdentical) {
  const TempDir dir;
  const std::string path = dir.path() + "/data.bin";
  const std::vector<uint8_t> bytes = RandomBytes(100000);
  WriteFile(path, bytes);
  const std::unique_ptr<ByteSource> source = OpenByteSource(path);
  EXPECT_EQ(source->name(), path);
  EXPECT_EQ(source->Size(), 100000);
  std::vector<uint8_t> out(5000, 0xA5);
  source->ReadAt(94000, out.data(), 5000);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + 94000));
  EXPECT_FALSE(IsUrl(path));
  EXPECT_TRUE(IsUrl("HTTPS://example.com/a.tar"));
}

TEST(LocalSourceTest, MissingFileAndDirectoryAreRefusedByName) {
  const TempDir dir;
  EXPECT_EQ(ErrorOf([&] { OpenByteSource(dir.path() + "/missing.tar"); }),
            "\"" + dir.path() + "/missing.tar\": cannot open: No such file or directory");
  EXPECT_EQ(ErrorOf([&] { OpenByteSource(dir.path()); }), "\"" + dir.path() + "\": not a regular file");
}

TEST(LocalSourceTest, ReadPastTheEndIsRefused) {
  const TempDir dir;
  const std::string path = dir.path() + "/small.bin";
  WriteFile(path, RandomBytes(100));
  const std::unique_ptr<ByteSource> source = OpenByteSource(path);
  std::vector<uint8_t> out(64);
  EXPECT_EQ(ErrorOf([&] { source->ReadAt(95, out.data(), 10); }),
            "\"" + path + "\": expected 10 bytes at offset 95, the file holds 100");
  EXPECT_THAT(ErrorOf([&] { source->ReadAt(-1, out.data(), 1); }), HasSubstr("expected 1 bytes at offset -1"));
}

TEST(LocalSourceTest, FileTruncatedAfterOpeningIsReported) {
  const TempDir dir;
  const std::string path = dir.path() + "/shrinks.bin";
  WriteFile(path, RandomBytes(10000));
  const std::unique_ptr<ByteSource> source = OpenByteSource(path);
  ASSERT_EQ(truncate(path.c_str(), 6000), 0);
  std::vector<uint8_t> out(8000);
  EXPECT_EQ(ErrorOf([&] { source->ReadAt(1000, out.data(), 8000); }),
            "\"" + path + "\": expected 8000 bytes at offset 1000, the file ends after 6000 (changed or truncated "
                          "since it was opened)");
}

}  // namespace
}  // namespace conveyor::ops::testing
