// TFRecord framing and DALI's index on files written by an independent encoder
// (write_tfrecords.py): the scan finds exactly the records tfrecord2idx lists, every record's data
// comes back, and each kind of damage gives its message (file, record, offset, expected, found).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/tfrecord/crc32c.h"
#include "operators/readers/tfrecord/tfrecord_format.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;
using testing::PlanFile;
using testing::PlanRecord;

using testing::ErrorOf;
// One file of `n` records whose data are random bytes (0..max_size each; not Examples).
PlanFile RawFile(const std::string& path, int n, std::mt19937& rng, size_t max_size = 300) {
  PlanFile file{path, {}};
  for (int i = 0; i < n; ++i) {
    PlanRecord r;
    r.raw = true;
    r.raw_data = testing::RandomBytes(rng, 0, max_size);
    file.records.push_back(r);
  }
  return file;
}

std::vector<uint8_t> ReadSpan(const ByteSource& source, const TfRecordSpan& span) {
  std::vector<uint8_t> bytes(static_cast<size_t>(span.size));
  source.ReadAt(span.offset, bytes.data(), span.size);
  return bytes;
}

void Poke(const std::string& path, int64_t offset, uint8_t xor_mask) {
  std::string bytes = testing::ReadText(path);
  bytes[static_cast<size_t>(offset)] = static_cast<char>(bytes[static_cast<size_t>(offset)] ^ xor_mask);
  testing::WriteText(path, bytes);
}

class TfRecordFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTempDir("tfrecord_format");
    file_ = RawFile(dir_ + "/a.tfrecord", 40, rng_);
    testing::WriteTfRecords({file_});
  }
  std::mt19937 rng_{std::random_device{}()};
  std::string dir_;
  PlanFile file_;
};

TEST_F(TfRecordFormat, ScanFindsWhatTfrecord2idxListsAndEveryRecordReadsBack) {
  const auto source = OpenByteSource(file_.path);
  const std::vector<TfRecordSpan> scanned = ScanTfRecords(*source);
  const std::string idx_text = testing::ReadText(file_.path + ".idx");
  EXPECT_EQ(FormatTfRecordIndex(scanned), idx_text);  // byte for byte what DALI's tool writes
  const std::vector<TfRecordSpan> indexed = ParseTfRecordIndex(idx_text, "a.idx");
  EXPECT_EQ(indexed, scanned);
  ASSERT_EQ(scanned.size(), 40u);
  EXPECT_EQ(indexed[5].line, 6);
  for (size_t r = 0; r < scanned.size(); ++r) {
    const std::vector<uint8_t> framed = ReadSpan(*source, scanned[r]);
    const auto data = CheckTfRecord(framed.data(), scanned[r].size, RecordWhere(file_.path, 0, 0));
    EXPECT_EQ(std::string(data.begin(), data.end()), file_.records[r].raw_data) << "record " << r;
  }
  // Any block size finds the same records (headers across block ends, blocks smaller than a header).
  for (int64_t block : {1, 12, 13, 100, 1000}) EXPECT_EQ(ScanTfRecords(*source, block), scanned) << block;
  // The index read through a ByteSource, and an empty file: no records.
  EXPECT_EQ(ReadTfRecordIndex(*OpenByteSource(file_.path + ".idx")), scanned);
  testing::WriteText(dir_ + "/empty.tfrecord", "");
  EXPECT_TRUE(ScanTfRecords(*OpenByteSource(dir_ + "/empty.tfrecord")).empty());
}

TEST_F(TfRecordFormat, BadDataCrcNamesFileRecordOffsetAndBothChecksums) {
  const auto spans = ScanTfRecords(*OpenByteSource(file_.path));
  size_t r = 17;
  while (spans[r].data_size() == 0) ++r;  // a record with data to damage
  const std::string& data = file_.records[r].raw_data;
  Poke(file_.path, spans[r].offset + kTfRecordHeaderBytes + spans[r].data_size() / 2, 0x40);
  std::string damaged = data;
  damaged[static_cast<size_t>(spans[r].data_size() / 2)] ^= 0x40;
  char want[128];
  std::snprintf(want, sizeof(want), ": data CRC32C 0x%08x, expected 0x%08x", Crc32c(damaged.data(), damaged.size()),
                Crc32c(data.data(), data.size()));
  const auto source = OpenByteSource(file_.path);
  EXPECT_EQ(ScanTfRecords(*source), spans);  // the scan reads headers only
  const std::vector<uint8_t> framed = ReadSpan(*source, spans[r]);
  EXPECT_EQ(ErrorOf([&] { CheckTfRecord(framed.data(), spans[r].size, RecordWhere(file_.path, 17, spans[r].offset)); }),
            "\"" + file_.path + "\": record 17 at offset " + std::to_string(spans[r].offset) + want);
}

TEST_F(TfRecordFormat, BadLengthCrcStopsTheScanAtThatRecord) {
  const auto spans = ScanTfRecords(*OpenByteSource(file_.path));
  Poke(file_.path, spans[9].offset + 2, 0x01);
  EXPECT_THAT(ErrorOf([&] { ScanTfRecords(*OpenByteSource(file_.path)); }),
              HasSubstr("\"" + file_.path + "\": record 9 at offset " + std::to_string(spans[9].offset) +
                        ": length CRC32C 0x"));
  EXPECT_THAT(ErrorOf([&] { ScanTfRecords(*OpenByteSource(file_.path)); }),
              HasSubstr("(a corrupt header, or not a TFRecord file)"));
  const std::vector<uint8_t> framed = ReadSpan(*OpenByteSource(file_.path), spans[9]);
  EXPECT_THAT(ErrorOf([&] { CheckTfRecord(framed.data(), spans[9].size, "where"); }), HasSubstr("where: length CRC32C"));
}

TEST_F(TfRecordFormat, TruncatedFilesNameTheRecordAndWhatIsMissing) {
  const auto spans = ScanTfRecords(*OpenByteSource(file_.path));
  const std::string bytes = testing::ReadText(file_.path);
  const TfRecordSpan& last = spans.back();
  // Cut inside the last record's data: its header promises more than the file holds.
  testing::WriteText(file_.path, bytes.substr(0, static_cast<size_t>(last.offset + last.size - 3)));
  EXPECT_EQ(ErrorOf([&] { ScanTfRecords(*OpenByteSource(file_.path)); }),
            "\"" + file_.path + "\": record 39 at offset " + std::to_string(last.offset) + ": the header announces " +
                std::to_string(last.data_size()) + " bytes of data (" + std::to_string(last.size) +
                " with framing), the file has " + std::to_string(last.size - 3) + " bytes left (truncated?)");
  // Cut inside its header.
  testing::WriteText(file_.path, bytes.substr(0, static_cast<size_t>(last.offset + 5)));
  EXPECT_EQ(ErrorOf([&] { ScanTfRecords(*OpenByteSource(file_.path)); }),
            "\"" + file_.path + "\": record 39 at offset " + std::to_string(last.offset) +
                ": the file ends 5 bytes into a record's 12-byte header (truncated?)");
}

TEST_F(TfRecordFormat, LengthLargerThanTheFileIsAnErrorBeforeAnyAllocation) {
  // A header with a valid CRC announcing 1 TiB: the scan must refuse it from the sizes alone.
  std::string header(12, '\0');
  const uint64_t length = uint64_t{1} << 40;
  for (int i = 0; i < 8; ++i) header[static_cast<size_t>(i)] = static_cast<char>(length >> (8 * i));
  const uint32_t masked = MaskCrc32c(Crc32c(header.data(), 8));
  for (int i = 0; i < 4; ++i) header[static_cast<size_t>(8 + i)] = static_cast<char>(masked >> (8 * i));
  const std::string path = dir_ + "/huge.tfrecord";
  testing::WriteText(path, testing::ReadText(file_.path) + header + "tail");
  const int64_t offset = ScanTfRecords(*OpenByteSource(file_.path)).back().offset +
                         ScanTfRecords(*OpenByteSource(file_.path)).back().size;
  EXPECT_EQ(ErrorOf([&] { ScanTfRecords(*OpenByteSource(path)); }),
            "\"" + path + "\": record 40 at offset " + std::to_string(offset) +
                ": the header announces 1099511627776 bytes of data (1099511627792 with framing), the file has 16 "
                "bytes left (truncated?)");
}

TEST_F(TfRecordFormat, IndexErrorsNameTheLine) {
  EXPECT_EQ(ErrorOf([] { ParseTfRecordIndex("0 20\n20 30\n12 x\n", "a.idx"); }),
            "\"a.idx\": line 3: expected \"offset size\" (two non-negative integers), got \"12 x\"");
  EXPECT_THAT(ErrorOf([] { ParseTfRecordIndex("0 20 7\n", "a.idx"); }), HasSubstr("line 1: expected \"offset size\""));
  EXPECT_THAT(ErrorOf([] { ParseTfRecordIndex("\n-4 20\n", "a.idx"); }), HasSubstr("line 2: expected"));
  EXPECT_THAT(ErrorOf([] { ParseTfRecordIndex("99999999999999999999 20\n", "a.idx"); }), HasSubstr("line 1: expected"));
  EXPECT_EQ(ErrorOf([] { ParseTfRecordIndex("0 20\n20 15\n", "a.idx"); }),
            "\"a.idx\": line 2: record 1 of 15 bytes is smaller than a record's 16 bytes of framing");
  // Blank lines, CRLF line ends and a missing final newline are fine.
  EXPECT_EQ(ParseTfRecordIndex("0 20\r\n\n  20\t30", "a.idx"), (std::vector<TfRecordSpan>{{0, 20, 1}, {20, 30, 3}}));
}

TEST_F(TfRecordFormat, IndexPastTheEndOfItsFileIsAnError) {
  const int64_t size = OpenByteSource(file_.path)->Size();
  std::string idx = testing::ReadText(file_.path + ".idx");
  idx += std::to_string(size - 10) + " 40\n";
  const auto spans = ParseTfRecordIndex(idx, "a.idx");
  EXPECT_EQ(ErrorOf([&] { CheckTfRecordIndex(spans, "a.idx", file_.path, size); }),
            "\"a.idx\": line 41: record 40 at offset " + std::to_string(size - 10) + " of 40 bytes ends at " +
                std::to_string(size + 30) + ", past the end of \"" + file_.path + "\" (" + std::to_string(size) +
                " bytes): an index of another file?");
  EXPECT_NO_THROW(CheckTfRecordIndex(ScanTfRecords(*OpenByteSource(file_.path)), "a.idx", file_.path, size));
}

TEST_F(TfRecordFormat, IndexSizeThatDisagreesWithTheHeaderIsAnError) {
  const auto source = OpenByteSource(file_.path);
  const auto spans = ScanTfRecords(*source);
  // An index whose record 2 claims 4 bytes more than its header: reading it says so.
  TfRecordSpan wrong = spans[2];
  wrong.size += 4;
  const std::vector<uint8_t> framed = ReadSpan(*source, wrong);
  EXPECT_EQ(ErrorOf([&] { CheckTfRecord(framed.data(), wrong.size, "\"a\": record 2 at offset 9"); }),
            "\"a\": record 2 at offset 9: the header announces " + std::to_string(spans[2].data_size()) +
                " bytes of data (" + std::to_string(spans[2].size) + " with framing), the index says " +
                std::to_string(wrong.size));
  EXPECT_THAT(ErrorOf([&] { CheckTfRecord(framed.data(), 10, "w"); }),
              HasSubstr("w: 10 bytes cannot hold a record (at least 16 bytes of framing)"));
}

}  // namespace
}  // namespace conveyor::ops
