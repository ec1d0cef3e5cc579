// readers.webdataset's order through the operator: indexed mode gives readers.file's permutation
// for the same N and seed; shard mode over uneven shards covers every sample once per epoch over
// all ranks with equal batch counts (pad_last_batch) and is deterministic; checkpoints resume
// exactly in both modes and refuse another mode, data set or rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/readers/shards/shard_reader_op.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using Strings = std::vector<std::string>;

std::vector<uint8_t> Bytes(const TensorListCPU& t, int i) {
  const auto* p = static_cast<const uint8_t*>(t.raw_sample(i));
  return {p, p + t.shape(i).num_elements()};
}

// Shards of the given sample counts (keys sorted across shards), one "bin" member per sample.
std::string MakeShards(std::mt19937& rng, const std::vector<int>& counts, std::vector<std::vector<uint8_t>>* contents) {
  const std::string dir = testing::FreshTempDir("order");
  for (size_t s = 0; s < counts.size(); ++s) {
    const testing::WdsShard shard =
        testing::MakeWdsShard(dir + "/part-" + std::to_string(s) + ".tar", counts[s], {"bin"}, rng,
                              "p" + std::to_string(s), 200);
    for (const auto& sample : shard.samples) contents->push_back(sample.members.at("bin"));
  }
  return dir;
}

OpSpec Reader(const std::string& dir, const std::string& mode, int64_t rank, int64_t ranks, bool pad) {
  OpSpec spec("readers.webdataset", "r");
  spec.SetArg("paths", Strings{dir + "/part-*.tar"}).SetArg("ext", Strings{"bin"}).AddOutput("bin");
  spec.SetArg("shuffle", mode).SetArg("random_shuffle", true).SetArg("shard_id", rank).SetArg("num_shards", ranks);
  spec.SetArg("pad_last_batch", pad).SetArg("initial_fill", int64_t{6});
  return spec;
}

const ops::ShardReaderOp& Op(OpHarness& h) { return dynamic_cast<const ops::ShardReaderOp&>(h.op()); }

TEST(WebDatasetOrder, IndexedModeIsReadersFilesPermutation) {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<uint8_t>> contents;
  const std::string dir = MakeShards(rng, {9, 4, 12}, &contents);  // 25 samples
  Strings files;  // the same bytes as files, in the same (global) order
  for (size_t i = 0; i < contents.size(); ++i) {
    files.push_back(dir + "/f" + std::to_string(100 + i) + ".bin");
    testing::WriteFile(files.back(), contents[i]);
  }
  const uint64_t seed = rng();
  for (int64_t rank = 0; rank < 3; ++rank) {
    OpSpec file_spec("readers.file", "r");
    file_spec.SetArg("files", files).SetArg("random_shuffle", true).SetArg("shard_id", rank);
    file_spec.SetArg("num_shards", int64_t{3}).SetArg("pad_last_batch", true).AddOutput("data").AddOutput("labels");
    OpHarness by_file(file_spec, Device::kCpu, 4), by_tar(Reader(dir, "samples", rank, 3, true), Device::kCpu, 4);
    by_file.set_seed(seed);
    by_tar.set_seed(seed);
    EXPECT_EQ(by_tar.op().EpochSize(4), by_file.op().EpochSize(4));
    for (int it = 0; it < 10; ++it) {  // 3 epochs of 3 batches and more
      by_file.Run();
      by_tar.Run();
      for (int i = 0; i < 4; ++i) ASSERT_EQ(Bytes(by_tar.OutputCpu(0), i), Bytes(by_file.OutputCpu(0), i)) << it;
    }
  }
}

TEST(WebDatasetOrder, ShardModeCoversEverySampleOnceWithEqualBatchCountsOverUnevenShards) {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<uint8_t>> contents;
  const std::string dir = MakeShards(rng, {9, 2, 14, 5, 7, 3, 11}, &contents);  // 51 samples, 7 shards
  const int batch = 4;
  const uint64_t seed = rng();
  for (int64_t ranks : {1, 2, 3}) {
    std::vector<std::vector<int64_t>> epochs(2);
    std::set<int64_t> sizes;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      OpHarness h(Reader(dir, "shards", rank, ranks, true), Device::kCpu, batch);
      h.set_seed(seed);
      const int64_t epoch_size = *h.op().EpochSize(batch);
      sizes.insert(epoch_size);
      for (size_t e = 0; e < 2; ++e) {
        std::vector<int64_t> seen;
        for (int64_t b = 0; b < epoch_size / batch; ++b) {
          h.Run();
          for (int i = 0; i < batch; ++i) seen.push_back(h.OutputCpu(0).source(i)->index);
          for (int i = 0; i < batch; ++i) {
            EXPECT_EQ(Bytes(h.OutputCpu(0), i), contents[static_cast<size_t>(h.OutputCpu(0).source(i)->index)]);
          }
        }
        EXPECT_EQ(Op(h).State(), (ops::ReaderState{static_cast<int64_t>(e) + 1, 0})) << "whole epochs";
        // Padding repeats the rank's last real sample: drop the repeats at the tail.
        while (seen.size() > 1 && seen.back() == seen[seen.size() - 2]) seen.pop_back();
        epochs[e].insert(epochs[e].end(), seen.begin(), seen.end());
      }
    }
    EXPECT_EQ(sizes.size(), 1u) << ranks << " ranks: every rank yields the same number of batches";
    for (const auto& e : epochs) {
      EXPECT_EQ(e.size(), contents.size()) << ranks << " ranks";
      EXPECT_EQ(std::set<int64_t>(e.begin(), e.end()).size(), contents.size()) << "every sample once";
    }
    if (ranks == 1) EXPECT_NE(epochs[0], epochs[1]) << "a new order each epoch";
  }
}

TEST(WebDatasetOrder, ShardModeIsDeterministicAndItsReadsStayNearTheStream) {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<uint8_t>> contents;
  const std::string dir = MakeShards(rng, {20, 20, 20}, &contents);
  OpHarness a(Reader(dir, "shards", 0, 1, false), Device::kCpu, 5), b(Reader(dir, "shards", 0, 1, false), Device::kCpu, 5);
  std::vector<int64_t> order;
  for (int it = 0; it < 12; ++it) {  // one epoch
    a.Run();
    b.Run();
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(Op(a).batch_indices(), Op(b).batch_indices());
      order.push_back(Op(a).batch_indices()[static_cast<size_t>(i)]);
    }
  }
  // Samples of one shard come out near each other: with a buffer of 6, the first 20 outputs are
  // from the first shard read and at most the next one's first 6 samples.
  std::set<int64_t> shards_of_first;
  for (int p = 0; p < 14; ++p) shards_of_first.insert(order[static_cast<size_t>(p)] / 20);
  EXPECT_EQ(shards_of_first.size(), 1u);
}

TEST(WebDatasetOrder, CheckpointsResumeExactlyInBothModes) {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<uint8_t>> contents;
  const std::string dir = MakeShards(rng, {6, 9, 4, 8}, &contents);
  for (const std::string mode : {"samples", "shards"}) {
    for (bool pad : {false, true}) {
      for (int stop : {1, 4, 7, 9}) {  // batch 5: mid-epoch, across epoch ends
        OpHarness a(Reader(dir, mode, 1, 2, pad), Device::kCpu, 5);
        for (int it = 0; it < stop; ++it) a.Run();
        const std::string state = a.op().CheckpointState();
        EXPECT_THAT(state, HasSubstr("mode=" + mode + " samples=27 shards=4 fingerprint="));
        OpHarness b(Reader(dir, mode, 1, 2, pad), Device::kCpu, 5);
        b.op().RestoreCheckpoint(state);
        for (int it = 0; it < 8; ++it) {
          a.Run();
          b.Run();
          ASSERT_EQ(Op(a).batch_indices(), Op(b).batch_indices()) << mode << " pad " << pad << " stop " << stop;
          for (int i = 0; i < 5; ++i) ASSERT_EQ(Bytes(a.OutputCpu(0), i), Bytes(b.OutputCpu(0), i));
        }
      }
    }
  }
}

TEST(WebDatasetOrder, CheckpointsOfAnotherModeDataSetOrRankAreRefused) {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<uint8_t>> contents, other;
  const std::string dir = MakeShards(rng, {6, 9, 4, 8}, &contents);
  const std::string other_dir = MakeShards(rng, {6, 9, 4, 8}, &other);  // a copy: same keys and counts
  OpHarness a(Reader(dir, "shards", 0, 2, true), Device::kCpu, 5);
  a.Run();
  const std::string state = a.op().CheckpointState();
  const auto restore = [&](const OpSpec& spec, const std::string& text) {
    try {
      OpHarness h(spec, Device::kCpu, 5);
      h.op().RestoreCheckpoint(text);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(restore(Reader(dir, "samples", 0, 2, true), state),
              HasSubstr("(r): the checkpoint is of another pipeline: it read with shuffle: shards, this node with "
                        "shuffle: samples"));
  EXPECT_THAT(restore(Reader(dir, "shards", 1, 2, true), state),
              HasSubstr("it read shard_id 0 of num_shards 2, this node reads shard_id 1 of num_shards 2"));
  std::vector<std::vector<uint8_t>> more;
  const std::string bigger = MakeShards(rng, {6, 9, 4, 9}, &more);
  EXPECT_THAT(restore(Reader(bigger, "shards", 0, 2, true), state),
              HasSubstr("its data set had 27 samples in 4 shards, this one has 28 in 4"));
  std::string renamed = state;  // same counts, other keys
  const size_t at = renamed.find("fingerprint=") + 12;
  renamed.replace(at, 16, "0123456789abcdef");
  EXPECT_THAT(restore(Reader(dir, "shards", 0, 2, true), renamed),
              HasSubstr("its data set's sample keys (fingerprint 0123456789abcdef) differ from this one's"));
  EXPECT_THAT(restore(Reader(dir, "shards", 0, 2, true), "dataset_size=27 shard_id=0 num_shards=2 epoch=0 position=5"),
              HasSubstr("(r): checkpoint: expected \"mode=M samples=N shards=K fingerprint=F shard_id=S num_shards=R "
                        "epoch=E position=P\" for a shard reader, got \"dataset_size=27"));
  EXPECT_EQ(restore(Reader(other_dir, "shards", 0, 2, true), state), "no error") << "same keys and counts";
}

}  // namespace
}  // namespace conveyor
