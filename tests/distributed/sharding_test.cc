// Sharding over WORLD_SIZE 1..8 (issue 14): for every world size, random_shuffle, pad_last_batch
// and stick_to_shard on and off, per epoch: the ranks together read the dataset, pairwise
// disjoint except pad_last_batch's repeats of a rank's own last sample; every rank yields the same
// number of batches (pad_last_batch); without stick_to_shard an epoch is one global permutation
// cut into contiguous shards; the permutation changes between epochs. Then the same through the
// YAML environment substitution a torchrun job uses (RANK, WORLD_SIZE), on real files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "core/pipeline/pipeline.h"
#include "operators/readers/reader_core.h"

namespace conveyor {
namespace {

using ops::ReaderCore;
using ops::ReaderOptions;

constexpr int kEpochs = 3;
constexpr int64_t kBatch = 5;

struct Case {
  int64_t n;
  int64_t world;
  bool shuffle, pad, stick;
  std::string Name() const {
    return "N=" + std::to_string(n) + " WORLD_SIZE=" + std::to_string(world) + " shuffle=" + std::to_string(shuffle) +
           " pad=" + std::to_string(pad) + " stick=" + std::to_string(stick);
  }
};

// What rank `r` reads in each epoch: the batches (pad_last_batch) or the epoch's samples as they
// come out of the batched stream (without it, batches run across epochs: the stream is cut at
// the epoch's sample count).
std::vector<std::vector<int64_t>> ReadEpochs(const Case& c, int64_t rank, std::vector<int64_t>* batches) {
  ReaderOptions o;
  o.random_shuffle = c.shuffle;
  o.pad_last_batch = c.pad;
  o.stick_to_shard = c.stick;
  o.shard_id = rank;
  o.num_shards = c.world;
  o.seed = 1234;
  ReaderCore core(c.n, o, "test");
  std::vector<std::vector<int64_t>> epochs(kEpochs);
  if (c.pad) {
    for (int e = 0; e < kEpochs; ++e) {
      int64_t count = 0;
      do {
        for (int64_t i : core.NextBatch(kBatch)) epochs[static_cast<size_t>(e)].push_back(i);
        ++count;
      } while (core.state().epoch == e);
      batches->push_back(count);
    }
    return epochs;
  }
  std::vector<int64_t> stream;
  while (static_cast<int64_t>(stream.size()) < c.n * kEpochs) {
    for (int64_t i : core.NextBatch(kBatch)) stream.push_back(i);
  }
  size_t at = 0;
  for (int e = 0; e < kEpochs; ++e) {
    const size_t len = core.EpochSamples(e).size();
    epochs[static_cast<size_t>(e)].assign(stream.begin() + static_cast<std::ptrdiff_t>(at),
                                          stream.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
  }
  return epochs;
}

TEST(Sharding, WorldSizes1To8) {
  int checked = 0;
  for (int64_t n : {37, 64}) {
    for (int64_t world = 1; world <= 8; ++world) {
      for (int flags = 0; flags < 8; ++flags) {
        const Case c{n, world, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0};
        SCOPED_TRACE(c.Name());
        std::vector<std::vector<std::vector<int64_t>>> per_rank;  // [rank][epoch] → samples
        std::vector<std::vector<int64_t>> batch_counts(static_cast<size_t>(world));
        for (int64_t r = 0; r < world; ++r) per_rank.push_back(ReadEpochs(c, r, &batch_counts[static_cast<size_t>(r)]));
        std::vector<int64_t> previous_global;
        for (int e = 0; e < kEpochs; ++e) {
          std::set<int64_t> all;
          std::vector<int64_t> global(static_cast<size_t>(n), -1);  // the epoch's order, shard by shard
          for (int64_t r = 0; r < world; ++r) {
            const std::vector<int64_t>& got = per_rank[static_cast<size_t>(r)][static_cast<size_t>(e)];
            ASSERT_FALSE(got.empty());
            // Distinct samples: the rank's shard; the only repeats are padding of its last sample.
            std::vector<int64_t> distinct;
            for (size_t i = 0; i < got.size(); ++i) {
              if (std::find(distinct.begin(), distinct.end(), got[i]) == distinct.end()) {
                ASSERT_EQ(distinct.size(), i) << "a repeat before the padding, rank " << r << " epoch " << e;
                distinct.push_back(got[i]);
              } else {
                ASSERT_TRUE(c.pad) << "a repeat without pad_last_batch";
                ASSERT_EQ(got[i], distinct.back()) << "padding repeats the shard's last sample";
              }
            }
            for (int64_t i : distinct) ASSERT_TRUE(all.insert(i).second) << "sample " << i << " on two ranks";
            const int64_t t = c.stick ? r : (r + e) % world;
            const auto [begin, end] = ReaderCore::ShardRange(n, t, world);
            ASSERT_EQ(static_cast<int64_t>(distinct.size()), end - begin);
            for (size_t i = 0; i < distinct.size(); ++i) global[static_cast<size_t>(begin) + i] = distinct[i];
            if (c.pad) {
              EXPECT_EQ(batch_counts[static_cast<size_t>(r)][static_cast<size_t>(e)],
                        ((n + world - 1) / world + kBatch - 1) / kBatch)
                  << "rank " << r << " epoch " << e;
            }
          }
          EXPECT_EQ(static_cast<int64_t>(all.size()), n) << "epoch " << e << ": the union is not the dataset";
          if (!c.stick) {
            // One global permutation (the identity without shuffling), cut into shards.
            std::vector<int64_t> expect(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) expect[static_cast<size_t>(i)] = i;
            if (c.shuffle) expect = ReaderCore::Permutation(n, 1234, e);
            EXPECT_EQ(global, expect) << "epoch " << e;
          }
          if (c.shuffle && e > 0) {
            EXPECT_NE(global, previous_global) << "epoch " << e << " repeats the order";
          }
          previous_global = global;
        }
        if (c.stick) {
          for (int64_t r = 0; r < world; ++r) {
            const auto& epochs = per_rank[static_cast<size_t>(r)];
            EXPECT_EQ(std::set<int64_t>(epochs[0].begin(), epochs[0].end()),
                      std::set<int64_t>(epochs[1].begin(), epochs[1].end()))
                << "stick_to_shard: rank " << r << " changed files";
          }
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2 * 8 * 8);
}

// The same contract end to end: one YAML, RANK / WORLD_SIZE from the environment (as torchrun
// sets them), readers.file on real files whose content names them.
TEST(Sharding, OneYamlServesEveryRankThroughTheEnvironment) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path root = std::filesystem::path(base ? base : "/tmp") /
                                     ("shard_" + std::to_string(std::random_device{}()));
  constexpr int kFiles = 29;
  for (int i = 0; i < kFiles; ++i) {
    std::filesystem::create_directories(root / ("c" + std::to_string(i % 3)));
    std::ofstream(root / ("c" + std::to_string(i % 3)) / ("f" + std::to_string(i))) << "file " << i;
  }
  const std::string yaml =
      "pipeline: {name: ranks, batch_size: 4, device: cpu, device_id: \"${LOCAL_RANK:-0}\", seed: 3}\n"
      "ops:\n  - {op: readers.file, name: reader, outputs: [data, labels], args: {file_root: \"" +
      root.string() +
      "\", file_filters: [\"*\"], random_shuffle: true, pad_last_batch: true, shard_id: \"${RANK:-0}\", "
      "num_shards: \"${WORLD_SIZE:-1}\"}}\noutputs: [data]\n";
  for (int world : {1, 3, 4}) {
    std::map<int, std::set<std::string>> seen;  // epoch → contents
    std::set<int64_t> batch_counts;
    ::setenv("WORLD_SIZE", std::to_string(world).c_str(), 1);
    for (int rank = 0; rank < world; ++rank) {
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      Pipeline p = Pipeline::FromYaml(yaml);
      p.Build();
      const int64_t batches = p.EpochSize("reader") / 4;
      batch_counts.insert(batches);
      for (int e = 0; e < 2; ++e) {
        std::set<std::string> mine;
        for (int64_t b = 0; b < batches; ++b) {
          PipelineOutputs out = p.Outputs();
          const TensorListCPU& data = out.Cpu(0);
          for (int i = 0; i < data.num_samples(); ++i) {
            const auto* c = static_cast<const char*>(data.raw_sample(i));
            mine.insert(std::string(c, c + data.shape(i).num_elements()));
          }
          out.Release();
          p.Run();
        }
        for (const std::string& s : mine) {
          EXPECT_TRUE(seen[e].insert(s).second) << "\"" << s << "\" on two ranks (world " << world << ")";
        }
      }
    }
    EXPECT_EQ(batch_counts.size(), 1u) << "ranks of world " << world << " differ in batches per epoch";
    for (int e = 0; e < 2; ++e) EXPECT_EQ(seen[e].size(), static_cast<size_t>(kFiles)) << "world " << world;
  }
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
}

}  // namespace
}  // namespace conveyor
