// What torchrun_check.py verifies for readers.file, for readers.webdataset without torch: one
// pipeline per rank (RANK / WORLD_SIZE through the YAML's ${...}), pad_last_batch, 3 epochs, 2 and
// 3 ranks, shuffle: samples (cut by samples; index files) and shuffle: shards (cut by whole
// shards; scanned). Every epoch the ranks together see every sample once, apart from each rank's
// padding (repeats of its own last sample); every rank runs Pipeline::EpochSize samples, which is
// the documented count (shard_order.h) and the same on every rank; each label arrives with its
// own sample's image bytes; the order changes between epochs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <tuple>

#include "core/pipeline/pipeline.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"
#include "tests/operators/readers/shards/rank_coverage.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor {
namespace {

constexpr int kBatch = 4;
constexpr int kEpochs = 3;
const std::vector<int> kShardSizes = {7, 9, 11, 6, 10};  // 43 samples, uneven on purpose

// shard-<s>.tar (+ .idx): sample i of the data set is "<s>/k<i>" with a random .jpg and its label
// i as a little-endian int32 .cls. Returns each label's .jpg bytes.
std::vector<std::vector<uint8_t>> MakeShards(const std::string& dir) {
  std::mt19937 rng(std::random_device{}());
  std::vector<std::vector<uint8_t>> jpgs;
  for (size_t s = 0; s < kShardSizes.size(); ++s) {
    std::vector<testing::TarMemberSpec> members;
    for (int i = 0; i < kShardSizes[s]; ++i) {
      const int32_t label = static_cast<int32_t>(jpgs.size());
      const std::string key = std::to_string(s) + "/k" + std::to_string(label);
      jpgs.push_back(testing::RandomBytes(rng, 1 + rng() % 700));
      std::vector<uint8_t> cls(sizeof(label));
      std::memcpy(cls.data(), &label, sizeof(label));
      members.push_back({key + ".jpg", jpgs.back(), false});
      members.push_back({key + ".cls", cls, false});
    }
    const std::string path = dir + "/shard-" + std::to_string(s) + ".tar";
    testing::WriteTar(path, members);
    std::ofstream(path + ".idx") << ops::FormatWdsIndex(ops::GroupMembers(ops::ScanTar(*ops::OpenByteSource(path))),
                                                        path);
  }
  return jpgs;
}

std::string Yaml(const std::string& mode) {
  const std::string index = mode == "samples" ? "index_paths: [\"shard-{0..4}.tar.idx\"], " : "";
  return "pipeline: {name: ranks, batch_size: " + std::to_string(kBatch) +
         ", device: cpu, num_threads: 2, prefetch_depth: 2, seed: 17}\n"
         "ops:\n  - op: readers.webdataset\n    name: reader\n"
         "    args: {paths: [\"shard-{0..4}.tar\"], " + index + "ext: [jpg, cls], dtypes: [uint8, int32],\n"
         "           random_shuffle: true, shuffle: " + mode + ", initial_fill: 5, pad_last_batch: true,\n"
         "           shard_id: \"${RANK:-0}\", num_shards: \"${WORLD_SIZE:-1}\"}\n"
         "    outputs: [jpgs, labels]\noutputs: [jpgs, labels]\n";
}

int64_t RoundUp(int64_t n, int64_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// shard_order.h: by samples, ceil(N / S) per rank; by shards, the ceil(M / S) largest shards;
// both padded to whole batches.
int64_t DocumentedEpochSize(const std::string& mode, int world) {
  std::vector<int> sizes = kShardSizes;
  const int64_t n = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (mode == "samples") return RoundUp((n + world - 1) / world, kBatch);
  std::sort(sizes.rbegin(), sizes.rend());
  const size_t runs = (sizes.size() + static_cast<size_t>(world) - 1) / static_cast<size_t>(world);
  return RoundUp(std::accumulate(sizes.begin(), sizes.begin() + static_cast<int64_t>(runs), int64_t{0}), kBatch);
}

class WebDatasetSharding : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(WebDatasetSharding, RanksCoverEverySampleOncePerEpoch) {
  const auto [mode, world] = GetParam();
  const std::string dir = testing::FreshTempDir("wds_ranks");
  const std::vector<std::vector<uint8_t>> jpgs = MakeShards(dir);
  const int64_t n = static_cast<int64_t>(jpgs.size());
  std::vector<std::vector<std::vector<int32_t>>> seen(static_cast<size_t>(world));  // rank, epoch: labels
  for (int rank = 0; rank < world; ++rank) {
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
    Pipeline p = Pipeline::FromYaml(Yaml(mode), dir);
    p.Build();
    const int64_t size = p.EpochSize("reader");
    ASSERT_EQ(size, DocumentedEpochSize(mode, world)) << "rank " << rank;
    for (int e = 0; e < kEpochs; ++e) {
      std::vector<int32_t> labels;
      for (int64_t b = 0; b < size / kBatch; ++b) {
        PipelineOutputs out = p.Outputs();
        const TensorListCPU& images = out.Cpu(out.Index("jpgs"));
        const TensorListCPU& classes = out.Cpu(out.Index("labels"));
        ASSERT_EQ(classes.num_samples(), kBatch);
        for (int i = 0; i < kBatch; ++i) {
          const int32_t label = *static_cast<const int32_t*>(classes.raw_sample(i));
          ASSERT_GE(label, 0);
          ASSERT_LT(label, n);
          const auto* bytes = static_cast<const uint8_t*>(images.raw_sample(i));
          ASSERT_EQ(std::vector<uint8_t>(bytes, bytes + images.shape(i).num_elements()),
                    jpgs[static_cast<size_t>(label)])
              << "label " << label << " arrived with another sample's image";
          labels.push_back(label);
        }
        out.Release();
        p.Run();
      }
      seen[static_cast<size_t>(rank)].push_back(labels);
    }
  }
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  std::set<int32_t> all;
  for (int32_t label = 0; label < n; ++label) all.insert(label);
  testing::ExpectRanksCoverEveryEpoch(seen, all, mode + ", " + std::to_string(world) + " ranks");
  for (int rank = 0; rank < world; ++rank) {
    EXPECT_NE(seen[static_cast<size_t>(rank)][0], seen[static_cast<size_t>(rank)][1]) << "rank " << rank << ": the order changes between epochs";
  }
}

INSTANTIATE_TEST_SUITE_P(ModesAndRanks, WebDatasetSharding,
                         ::testing::Combine(::testing::Values("samples", "shards"), ::testing::Values(2, 3)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "_ranks";
                         });

}  // namespace
}  // namespace conveyor
