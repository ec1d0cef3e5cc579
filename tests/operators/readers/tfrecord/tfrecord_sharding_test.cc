// What torchrun_check.py verifies for readers.file, for readers.tfrecord without torch: one
// pipeline per rank (RANK / WORLD_SIZE through the YAML's ${...}), pad_last_batch, several epochs.
// Every epoch the ranks together see every record; they overlap only in each rank's padding
// (repeats of its own last sample); every rank runs Pipeline::EpochSize samples; the permutation
// changes between epochs. In shuffle: samples (cut by samples) and shuffle: shards (by files).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <set>

#include "core/pipeline/pipeline.h"
#include "tests/operators/readers/shards/rank_coverage.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor {
namespace {

std::string Yaml(const std::string& mode) {
  return "pipeline: {name: ranks, batch_size: 4, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 21}\n"
         "ops:\n  - op: readers.tfrecord\n    name: reader\n"
         "    args: {path: [\"part-*.tfrecord\"], index_path: [\"part-*.tfrecord.idx\"], features: [\"label: int64\"],\n"
         "           random_shuffle: true, shuffle: " + mode + ", initial_fill: 6, pad_last_batch: true,\n"
         "           shard_id: \"${RANK:-0}\", num_shards: \"${WORLD_SIZE:-1}\"}\n"
         "    outputs: [labels]\noutputs: [labels]\n";
}

TEST(TfRecordSharding, RanksCoverEveryRecordEachEpoch) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("tfrecord_ranks");
  const auto files = testing::MakeTfRecordDataset(dir, 5, 9, rng, 50);  // 45 records, labels serial*1000+noise
  std::set<int64_t> all;
  for (const auto& f : files) {
    for (const auto& r : f.records) all.insert(r.Find("label")->ints[0]);
  }
  constexpr int kWorld = 3, kEpochs = 3;
  for (const std::string mode : {"samples", "shards"}) {
    std::vector<std::vector<std::vector<int64_t>>> seen(kWorld);  // rank, epoch: labels
    int64_t epoch_size = -1;
    for (int rank = 0; rank < kWorld; ++rank) {
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(kWorld).c_str(), 1);
      Pipeline p = Pipeline::FromYaml(Yaml(mode), dir);
      p.Build();
      const int64_t size = p.EpochSize("reader");
      if (epoch_size < 0) epoch_size = size;
      EXPECT_EQ(size, epoch_size) << mode << ": every rank runs as many samples";
      ASSERT_EQ(size % 4, 0) << mode << ": padded to whole batches";
      for (int e = 0; e < kEpochs; ++e) {
        std::vector<int64_t> labels;
        for (int64_t b = 0; b < size / 4; ++b) {
          PipelineOutputs out = p.Outputs();
          const TensorListCPU& t = out.Cpu(0);
          for (int i = 0; i < t.num_samples(); ++i) labels.push_back(*static_cast<const int64_t*>(t.raw_sample(i)));
          out.Release();
          p.Run();
        }
        seen[rank].push_back(labels);
      }
    }
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    testing::ExpectRanksCoverEveryEpoch(seen, all, mode);
    EXPECT_NE(seen[0][0], seen[0][1]) << mode << ": the order changes between epochs";
  }
}

}  // namespace
}  // namespace conveyor
