// readers.tfrecord on files written by protobuf's Python runtime (write_tfrecords.py): every record
// and feature read back, scan and index alike; the indexed permutation equals readers.file's;
// checkpoints resume exactly in both shuffle modes; every error through the operator; EpochSize.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/readers/shards/shard_reader_op.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using testing::ErrorOf;
using testing::PlanFile;
using testing::PlanRecord;

const std::vector<std::string> kFeatures = {"image/encoded: bytes", "label: int64[1] = -1", "bbox: float[]",
                                            "grid: int64[2, 3]", "captions: bytes[]", "weight: float = 0.5"};

OpSpec Reader(const std::vector<std::string>& paths, const std::vector<std::string>& features = kFeatures) {
  OpSpec spec("readers.tfrecord", "r");
  spec.SetArg("path", paths).SetArg("features", features);
  for (size_t f = 0; f < features.size(); ++f) spec.AddOutput("out" + std::to_string(f));
  return spec;
}

std::vector<std::string> Paths(const std::vector<PlanFile>& files, const std::string& suffix = "") {
  std::vector<std::string> out;
  for (const PlanFile& f : files) out.push_back(f.path + suffix);
  return out;
}

template <typename T>
std::vector<T> Values(const TensorListCPU& list, int i) {
  std::vector<T> v(static_cast<size_t>(list.shape(i).num_elements()));
  if (!v.empty()) std::memcpy(v.data(), list.raw_sample(i), v.size() * sizeof(T));
  return v;
}

// Checks sample i of the harness's outputs against `want` (kFeatures' outputs).
void ExpectRecord(const OpHarness& h, int i, const PlanRecord& want) {
  const std::vector<uint8_t> jpeg = Values<uint8_t>(h.OutputCpu(0), i);
  EXPECT_EQ(std::string(jpeg.begin(), jpeg.end()), want.Find("image/encoded")->bytes[0]);
  EXPECT_EQ(Values<int64_t>(h.OutputCpu(1), i), want.Find("label")->ints);
  EXPECT_EQ(Values<float>(h.OutputCpu(2), i), want.Find("bbox")->floats);
  EXPECT_EQ(h.OutputCpu(3).shape(i), (Shape{2, 3}));
  EXPECT_EQ(Values<int64_t>(h.OutputCpu(3), i), want.Find("grid")->ints);
  EXPECT_EQ(h.OutputCpu(4).shape(i)[0], static_cast<int64_t>(want.Find("captions")->bytes.size()));
  EXPECT_EQ(Values<float>(h.OutputCpu(5), i),
            want.Find("weight") ? want.Find("weight")->floats : std::vector<float>{0.5f});
}

int64_t LabelOf(const OpHarness& h, int i) { return *static_cast<const int64_t*>(h.OutputCpu(1).raw_sample(i)); }

class TfRecordReader : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTempDir("tfrecord_reader");
    files_ = testing::MakeTfRecordDataset(dir_, 3, 10, rng_);
    for (const PlanFile& f : files_) {
      for (size_t r = 0; r < f.records.size(); ++r) {
        serial_.push_back({f.path, static_cast<int>(r)});
        by_label_[f.records[r].Find("label")->ints[0]] = &f.records[r];
      }
    }
  }
  // The global index of the sample whose label is `label` (labels are serial * 1000 + noise).
  static int64_t IndexOf(int64_t label) { return label / 1000; }

  std::mt19937 rng_{std::random_device{}()};
  std::string dir_;
  std::vector<PlanFile> files_;
  std::vector<std::pair<std::string, int>> serial_;  // global index -> (file, record)
  std::map<int64_t, const PlanRecord*> by_label_;
};

TEST_F(TfRecordReader, EveryRecordInFileOrderWithItsSourceScannedOrIndexed) {
  for (bool indexed : {false, true}) {
    OpSpec spec = Reader(Paths(files_));
    if (indexed) spec.SetArg("index_path", Paths(files_, ".idx"));
    OpHarness h(spec, Device::kCpu, 7);
    std::vector<int64_t> seen;
    for (int it = 0; it < 5; ++it) {  // 35 samples: the 30 records, then the next epoch's first 5
      h.Run();
      for (int i = 0; i < 7; ++i) {
        const int64_t g = static_cast<int64_t>(seen.size()) % 30;
        ExpectRecord(h, i, *by_label_.at(LabelOf(h, i)));
        EXPECT_EQ(IndexOf(LabelOf(h, i)), g) << "indexed " << indexed;
        const std::string source = serial_[static_cast<size_t>(g)].first + ":record " +
                                   std::to_string(serial_[static_cast<size_t>(g)].second);
        for (int o = 0; o < 6; ++o) EXPECT_EQ(h.OutputCpu(o).sources()[static_cast<size_t>(i)].file, source);
        seen.push_back(IndexOf(LabelOf(h, i)));
      }
    }
    EXPECT_EQ(h.op().EpochSize(7), 30);
  }
}

TEST_F(TfRecordReader, OutputDtypesAndShapes) {
  OpHarness h(Reader(Paths(files_)), Device::kCpu, 4);
  h.Run();
  const DType want[] = {DType::kUInt8, DType::kInt64, DType::kFloat32, DType::kInt64, DType::kUInt8, DType::kFloat32};
  for (int o = 0; o < 6; ++o) EXPECT_EQ(h.OutputCpu(o).dtype(), want[o]) << o;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(h.OutputCpu(1).shape(i), Shape{1});
    EXPECT_EQ(h.OutputCpu(5).shape(i), Shape{1});
    EXPECT_EQ(h.OutputCpu(4).shape(i).ndim(), 2);
  }
}

// The same exact per-epoch permutation as readers.file over as many files, for the same seed.
TEST_F(TfRecordReader, IndexedShuffleIsReadersFilesPermutation) {
  std::vector<std::string> files;
  std::vector<int64_t> labels;
  for (int i = 0; i < 30; ++i) {
    files.push_back(dir_ + "/plain" + std::to_string(i));
    testing::WriteText(files.back(), "x");
    labels.push_back(i);
  }
  for (int64_t num_shards : {1, 3}) {
    OpSpec file_spec("readers.file", "f");
    file_spec.SetArg("files", files).SetArg("labels", labels).SetArg("random_shuffle", true).SetArg("seed", 77);
    file_spec.SetArg("num_shards", num_shards).SetArg("shard_id", num_shards - 1);
    file_spec.AddOutput("d").AddOutput("l");
    OpSpec tf_spec = Reader(Paths(files_));
    tf_spec.SetArg("index_path", Paths(files_, ".idx")).SetArg("random_shuffle", true).SetArg("seed", 77);
    tf_spec.SetArg("num_shards", num_shards).SetArg("shard_id", num_shards - 1);
    OpHarness file_reader(file_spec, Device::kCpu, 5);
    OpHarness tf_reader(tf_spec, Device::kCpu, 5);
    std::vector<int64_t> file_order, tf_order;
    for (int it = 0; it < 12; ++it) {  // several epochs
      file_reader.Run();
      tf_reader.Run();
      for (int i = 0; i < 5; ++i) {
        file_order.push_back(*static_cast<const int32_t*>(file_reader.OutputCpu(1).raw_sample(i)));
        tf_order.push_back(IndexOf(LabelOf(tf_reader, i)));
      }
    }
    EXPECT_EQ(tf_order, file_order) << num_shards << " shards";
    EXPECT_NE(tf_order, std::vector<int64_t>(tf_order.size(), tf_order[0]));
    EXPECT_EQ(tf_reader.op().EpochSize(5), file_reader.op().EpochSize(5));
  }
}

// Stopping after k batches and restoring the checkpoint into a new reader continues the stream
// exactly, in both shuffle modes.
TEST_F(TfRecordReader, CheckpointResumesExactly) {
  for (const std::string mode : {"samples", "shards"}) {
    OpSpec spec = Reader(Paths(files_));
    spec.SetArg("random_shuffle", true).SetArg("seed", 5).SetArg("shuffle", mode).SetArg("initial_fill", 8);
    OpHarness whole(spec, Device::kCpu, 4);
    std::vector<int64_t> want;
    for (int it = 0; it < 20; ++it) {
      whole.Run();
      for (int i = 0; i < 4; ++i) want.push_back(LabelOf(whole, i));
    }
    for (int stop : {1, 7, 8, 13}) {
      OpHarness first(spec, Device::kCpu, 4);
      std::vector<int64_t> got;
      for (int it = 0; it < stop; ++it) {
        first.Run();
        for (int i = 0; i < 4; ++i) got.push_back(LabelOf(first, i));
      }
      const std::string state = first.op().CheckpointState();
      OpHarness second(spec, Device::kCpu, 4);
      second.op().RestoreCheckpoint(state);
      for (int it = stop; it < 20; ++it) {
        second.Run();
        for (int i = 0; i < 4; ++i) got.push_back(LabelOf(second, i));
      }
      EXPECT_EQ(got, want) << "shuffle: " << mode << ", stopped after " << stop << " (" << state << ")";
    }
  }
}

TEST_F(TfRecordReader, EpochSizeWithPaddingAndShards) {
  OpSpec spec = Reader(Paths(files_));
  spec.SetArg("num_shards", 4).SetArg("shard_id", 1).SetArg("pad_last_batch", true);
  OpHarness h(spec, Device::kCpu, 4);
  EXPECT_EQ(h.op().EpochSize(4), 8);  // ceil(30 / 4) = 8 samples, two whole batches
}

// testdata/two_records.tfrecord: two Examples written by write_tfrecords.py (a JPEG and a PNG
// signature as image/encoded, labels 7 and 3), with its tfrecord2idx index.
const std::string kTwoRecords = "tests/operators/readers/tfrecord/testdata/two_records.tfrecord";
using testing::OperatorConformance;
INSTANTIATE_TEST_SUITE_P(
    TfRecordReader, OperatorConformance,
    ::testing::Values(testing::ConformanceCase{"cpu", Reader({kTwoRecords}, {"image/encoded: bytes", "label: int64"}),
                                               Device::kCpu},
                      testing::ConformanceCase{
                          "cpu_indexed",
                          Reader({kTwoRecords}, {"image/encoded: bytes", "label: int64[1] = -1", "none: float[]"})
                              .SetArg("index_path", std::vector<std::string>{kTwoRecords + ".idx"}),
                          Device::kCpu}),
    testing::CaseName);

}  // namespace
}  // namespace conveyor
