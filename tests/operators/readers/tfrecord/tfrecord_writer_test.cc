// TfRecordWriter cross-checked by the independent decoder (write_tfrecords.py --dump: Python's
// CRC32C and protobuf runtime) and by readers.tfrecord's scan: every record's features come back,
// the index it writes is the scan's, and nothing is left under a temporary name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "operators/readers/io/byte_source.h"
#include "operators/readers/tfrecord/tfrecord_format.h"
#include "operators/readers/tfrecord/tfrecord_writer.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor::ops {
namespace {

std::string HexBytes(const std::string& b) { return testing::Hex(b); }

std::string FloatBits(float v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  return testing::Hex(std::string(reinterpret_cast<const char*>(b), 4));
}

// The line write_tfrecords.py --dump prints for a record of `features` (sorted by name).
std::string DumpLine(const std::vector<ExampleFeature>& features) {
  std::map<std::string, std::string> parts;
  for (const ExampleFeature& f : features) {
    static const char* kKinds[] = {"bytes_list", "int64_list", "float_list"};
    std::string text = f.name + " " + kKinds[f.kind];
    for (const std::string& b : f.bytes) text += " " + HexBytes(b);
    for (int64_t v : f.ints) text += " " + std::to_string(v);
    for (float v : f.floats) text += " " + FloatBits(v);
    parts[f.name] = text;
  }
  std::string line;
  for (const auto& [name, text] : parts) line += (line.empty() ? "" : " | ") + text;
  return line + "\n";
}

std::string PythonDump(const std::string& path) {
  const std::string out = path + ".dump";
  const std::string command =
      "/usr/bin/python3 tests/operators/readers/tfrecord/write_tfrecords.py --dump " + path + " > " + out;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return testing::ReadText(out);
}

TEST(TfRecordWriter, PythonReadsBackEveryRecordAndTheIndexIsTheScans) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("writer");
  const std::string path = dir + "/w.tfrecord";
  std::string want;
  {
    TfRecordWriter writer(path);
    for (int r = 0; r < 40; ++r) {
      std::vector<ExampleFeature> features;
      features.push_back({ExampleFeature::kBytes, "image/encoded", {testing::RandomBytes(rng, 0, 5000)}, {}, {}});
      features.push_back({ExampleFeature::kInt64, "label", {}, {static_cast<int64_t>(rng()) - (int64_t{1} << 31), r}, {}});
      features.push_back(
          {ExampleFeature::kFloat, "bbox", {}, {}, {std::uniform_real_distribution<float>(-9, 9)(rng), 0.25f}});
      features.push_back({ExampleFeature::kBytes, "captions", {"", testing::RandomBytes(rng, 1, 9)}, {}, {}});
      writer.Write(features);
      want += DumpLine(features);
    }
    EXPECT_EQ(writer.records(), 40);
    EXPECT_FALSE(std::filesystem::exists(path)) << "only under a temporary name until Close()";
    writer.Close();
  }
  EXPECT_EQ(PythonDump(path), want);
  const auto source = OpenByteSource(path);
  EXPECT_EQ(FormatTfRecordIndex(ScanTfRecords(*source)), testing::ReadText(path + ".idx"));
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

TEST(TfRecordWriter, WithoutCloseNothingIsLeft) {
  const std::string dir = testing::FreshTempDir("writer_abandoned");
  {
    TfRecordWriter writer(dir + "/a.tfrecord");
    writer.WriteRecord({});
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  EXPECT_THAT(testing::ErrorOf([&] { TfRecordWriter(dir + "/no/such/folder.tfrecord"); }),
              ::testing::HasSubstr("\"" + dir + "/no/such/folder.tfrecord\": cannot write: No such file or directory"));
}

}  // namespace
}  // namespace conveyor::ops
