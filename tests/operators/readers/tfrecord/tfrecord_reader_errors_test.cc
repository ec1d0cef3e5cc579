// readers.tfrecord's errors, each with its text: damaged records (data CRC, length CRC, truncation,
// a length beyond the file), bad indexes, records that are not Examples, features missing without
// a default, of the wrong count or kind, and argument mistakes. Files come from write_tfrecords.py.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/readers/tfrecord/crc32c.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::ErrorOf;
using testing::PlanFile;

OpSpec Reader(const std::vector<std::string>& paths, const std::vector<std::string>& features) {
  OpSpec spec("readers.tfrecord", "r");
  spec.SetArg("path", paths).SetArg("features", features);
  for (size_t f = 0; f < features.size(); ++f) spec.AddOutput("out" + std::to_string(f));
  return spec;
}

// Offsets of a file's records, from its tfrecord2idx index.
std::vector<std::pair<int64_t, int64_t>> Spans(const std::string& path) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::istringstream in(testing::ReadText(path + ".idx"));
  for (int64_t offset, size; in >> offset >> size;) spans.push_back({offset, size});
  return spans;
}

void Poke(const std::string& path, int64_t offset) {
  std::string bytes = testing::ReadText(path);
  bytes[static_cast<size_t>(offset)] = static_cast<char>(bytes[static_cast<size_t>(offset)] ^ 0x20);
  testing::WriteText(path, bytes);
}

// Runs the reader (batch 10) until it throws; the message.
std::string RunError(const OpSpec& spec, int iterations = 3) {
  return ErrorOf([&] {
    OpHarness h(spec, Device::kCpu, 10);
    for (int i = 0; i < iterations; ++i) h.Run();
  });
}

class TfRecordReaderErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTempDir("tfrecord_errors");
    files_ = testing::MakeTfRecordDataset(dir_, 2, 10, rng_);
    a_ = files_[0].path;
    b_ = files_[1].path;
  }
  std::string Prefix(const std::string& path, int record) const {
    return "op \"readers.tfrecord\" (r): \"" + path + "\": record " + std::to_string(record) + " at offset " +
           std::to_string(Spans(path)[static_cast<size_t>(record)].first);
  }
  std::mt19937 rng_{std::random_device{}()};
  std::string dir_, a_, b_;
  std::vector<PlanFile> files_;
};

TEST_F(TfRecordReaderErrors, BadDataCrcWhenTheRecordIsRead) {
  const auto [offset, size] = Spans(b_)[4];
  Poke(b_, offset + size - 4 - 1);  // the data's last byte
  const std::string message = RunError(Reader({a_, b_}, {"label: int64"}));
  EXPECT_THAT(message, StartsWith(Prefix(b_, 4) + ": data CRC32C 0x"));
  EXPECT_THAT(message, HasSubstr(", expected 0x"));
}

TEST_F(TfRecordReaderErrors, BadLengthCrcAtTheScanOrWhenIndexedAtTheRead) {
  Poke(b_, Spans(b_)[6].first + 1);
  EXPECT_THAT(ErrorOf([&] { OpHarness h(Reader({a_, b_}, {"label: int64"}), Device::kCpu, 10); }),
              StartsWith(Prefix(b_, 6) + ": length CRC32C 0x"));
  OpSpec indexed = Reader({a_, b_}, {"label: int64"});
  indexed.SetArg("index_path", std::vector<std::string>{a_ + ".idx", b_ + ".idx"});
  EXPECT_THAT(RunError(indexed), StartsWith(Prefix(b_, 6) + ": length CRC32C 0x"));
}

TEST_F(TfRecordReaderErrors, TruncatedFileAtTheScanOrAgainstItsIndex) {
  const auto [offset, size] = Spans(b_).back();
  testing::WriteText(b_, testing::ReadText(b_).substr(0, static_cast<size_t>(offset + size - 10)));
  EXPECT_THAT(ErrorOf([&] { OpHarness h(Reader({a_, b_}, {"label: int64"}), Device::kCpu, 10); }),
              StartsWith(Prefix(b_, 9) + ": the header announces " + std::to_string(size - 16) + " bytes of data"));
  OpSpec indexed = Reader({a_, b_}, {"label: int64"});
  indexed.SetArg("index_path", std::vector<std::string>{a_ + ".idx", b_ + ".idx"});
  EXPECT_THAT(ErrorOf([&] { OpHarness h(indexed, Device::kCpu, 10); }),
              StartsWith("op \"readers.tfrecord\" (r): \"" + b_ + ".idx\": line 10: record 9 at offset " +
                         std::to_string(offset) + " of " + std::to_string(size) + " bytes ends at " +
                         std::to_string(offset + size) + ", past the end of \"" + b_ + "\""));
}

// Files are listed on several threads; the error is the first failing file's in path order.
TEST_F(TfRecordReaderErrors, ListingReportsTheFirstFailingFileInPathOrder) {
  const auto many = testing::MakeTfRecordDataset(testing::FreshTempDir("many"), 24, 2, rng_, 100);
  std::vector<std::string> paths;
  for (const PlanFile& f : many) paths.push_back(f.path);
  for (int bad : {19, 7, 13}) Poke(paths[static_cast<size_t>(bad)], 3);  // a length byte: its CRC fails
  for (int run = 0; run < 5; ++run) {
    EXPECT_THAT(ErrorOf([&] { OpHarness h(Reader(paths, {"label: int64"}), Device::kCpu, 4); }),
                StartsWith("op \"readers.tfrecord\" (r): \"" + paths[7] + "\": record 0 at offset 0: length CRC32C"));
  }
}

TEST_F(TfRecordReaderErrors, LengthLargerThanTheFileBeforeAnyAllocation) {
  std::string header(12, '\0');
  const uint64_t length = uint64_t{1} << 50;
  for (int i = 0; i < 8; ++i) header[static_cast<size_t>(i)] = static_cast<char>(length >> (8 * i));
  const uint32_t masked = ops::MaskCrc32c(ops::Crc32c(header.data(), 8));
  for (int i = 0; i < 4; ++i) header[static_cast<size_t>(8 + i)] = static_cast<char>(masked >> (8 * i));
  const std::string bytes = testing::ReadText(b_);
  testing::WriteText(b_, bytes + header);
  EXPECT_EQ(ErrorOf([&] { OpHarness h(Reader({b_}, {"label: int64"}), Device::kCpu, 10); }),
            "op \"readers.tfrecord\" (r): \"" + b_ + "\": record 10 at offset " + std::to_string(bytes.size()) +
                ": the header announces 1125899906842624 bytes of data (1125899906842640 with framing), the file "
                "has 12 bytes left (truncated?)");
}

TEST_F(TfRecordReaderErrors, IndexErrors) {
  OpSpec spec = Reader({a_, b_}, {"label: int64"});
  spec.SetArg("index_path", std::vector<std::string>{a_ + ".idx"});
  EXPECT_EQ(ErrorOf([&] { OpHarness h(spec, Device::kCpu, 10); }),
            "op \"readers.tfrecord\" (r): index_path: expected one index per file of path (2), got 1");
  std::string idx = testing::ReadText(b_ + ".idx");
  testing::WriteText(dir_ + "/bad.idx", idx.substr(0, idx.find('\n') + 1) + "100 abc\n");
  spec.SetArg("index_path", std::vector<std::string>{a_ + ".idx", dir_ + "/bad.idx"});
  EXPECT_EQ(ErrorOf([&] { OpHarness h(spec, Device::kCpu, 10); }),
            "op \"readers.tfrecord\" (r): \"" + dir_ + "/bad.idx\": line 2: expected \"offset size\" (two "
            "non-negative integers), got \"100 abc\"");
  // An index whose size for record 1 disagrees with the record's length header (4 bytes more).
  std::string wrong;
  const auto spans = Spans(b_);
  for (size_t r = 0; r < spans.size(); ++r) {
    wrong += std::to_string(spans[r].first) + " " + std::to_string(spans[r].second + (r == 1 ? 4 : 0)) + "\n";
  }
  testing::WriteText(dir_ + "/wrong.idx", wrong);
  spec.SetArg("index_path", std::vector<std::string>{a_ + ".idx", dir_ + "/wrong.idx"});
  EXPECT_EQ(RunError(spec), Prefix(b_, 1) + ": the header announces " + std::to_string(spans[1].second - 16) +
                                " bytes of data (" + std::to_string(spans[1].second) + " with framing), the index says " +
                                std::to_string(spans[1].second + 4));
  spec.SetArg("index_path", std::vector<std::string>{a_ + ".idx", dir_ + "/missing.idx"});
  EXPECT_THAT(ErrorOf([&] { OpHarness h(spec, Device::kCpu, 10); }),
              HasSubstr("\"" + dir_ + "/missing.idx\": cannot open: No such file or directory"));
}

TEST_F(TfRecordReaderErrors, FeatureErrorsNameFileRecordAndFeature) {
  // "weight" is in records 0, 3, 6, 9 only.
  EXPECT_EQ(RunError(Reader({a_}, {"weight: float"})),
            Prefix(a_, 1) + ": feature \"weight\" (spec \"weight: float\"): missing from the record, and the spec has "
                            "no default");
  EXPECT_EQ(RunError(Reader({a_}, {"grid: int64[2, 2]"})),
            Prefix(a_, 0) + ": feature \"grid\" (spec \"grid: int64[2, 2]\"): expected 4 int64 values, the record "
                            "has 6");
  EXPECT_EQ(RunError(Reader({a_}, {"label: float[]"})),
            Prefix(a_, 0) + ": feature \"label\" (spec \"label: float[]\"): expected float values, the record has an "
                            "int64_list of 1");
}

TEST_F(TfRecordReaderErrors, ARecordThatIsNotAnExample) {
  PlanFile file{dir_ + "/raw.tfrecord", {}};
  file.records.resize(3);
  for (auto& r : file.records) r.features.push_back({testing::PlanFeature::kInt64, "label", {}, {1}, {}});
  file.records[2].raw = true;
  file.records[2].raw_data = std::string("\xff\xff\xff\xff", 4);  // field 0x1fffffff, wire type 7: invalid
  testing::WriteTfRecords({file});
  EXPECT_EQ(RunError(Reader({file.path}, {"label: int64"})),
            "op \"readers.tfrecord\" (r): \"" + file.path + "\": record 2 at offset " +
                std::to_string(Spans(file.path)[2].first) +
                ": its 4 bytes of data are not a tf.train.Example (protobuf parse failed)");
}

TEST_F(TfRecordReaderErrors, ArgumentMistakes) {
  OpSpec spec = Reader({a_}, {"label: int64", "grid: int64[6]"});
  spec.AddOutput("extra");
  EXPECT_THAT(ErrorOf([&] {
                try {
                  spec.Validate();
                } catch (const SpecError& e) {
                  throw InvalidArgument(e.what());
                }
              }),
              HasSubstr("expected 2 outputs, one per entry of argument \"features\", got 3"));
  EXPECT_EQ(ErrorOf([&] { OpHarness h(Reader({a_}, {"label: int64", "grid int64"}), Device::kCpu, 10); }),
            "op \"readers.tfrecord\" (r): argument \"features\": entry 1 (\"grid int64\"): expected \"name: type\", "
            "e.g. \"image/class/label: int64[1] = -1\"");
  EXPECT_THAT(ErrorOf([&] { OpHarness h(Reader({dir_ + "/none.tfrecord"}, {"label: int64"}), Device::kCpu, 10); }),
              HasSubstr("op \"readers.tfrecord\" (r): \"" + dir_ + "/none.tfrecord\": cannot open"));
  const std::string glob_error =
      ErrorOf([&] { OpHarness h(Reader({dir_ + "/*.nothing"}, {"label: int64"}), Device::kCpu, 10); });
  EXPECT_THAT(glob_error, StartsWith("op \"readers.tfrecord\" (r)"));
  EXPECT_THAT(glob_error, HasSubstr(dir_ + "/*.nothing"));
  testing::WriteText(dir_ + "/empty.tfrecord", "");
  EXPECT_THAT(ErrorOf([&] { OpHarness h(Reader({dir_ + "/empty.tfrecord"}, {"label: int64"}), Device::kCpu, 10); }),
              HasSubstr("no samples in any of the 1 shards"));
}

}  // namespace
}  // namespace conveyor
