// ShardOrder: indexed mode is readers.file's order; shard mode covers every sample once per epoch
// over all ranks, keeps its shuffle buffer's bound, pads uneven ranks to equal batch counts, is a
// pure function of (seed, epoch, rank) and resumes exactly from (epoch, position).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/error.h"
#include "operators/readers/shards/shard_order.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;

ShardOrderOptions Options(ShuffleMode mode, bool shuffle, int64_t rank, int64_t ranks, uint64_t seed = 7) {
  ShardOrderOptions o;
  o.mode = mode;
  o.reader.random_shuffle = shuffle;
  o.reader.shard_id = rank;
  o.reader.num_shards = ranks;
  o.reader.seed = seed;
  return o;
}

std::vector<int64_t> RandomSizes(std::mt19937& rng, int shards, int max_size) {
  std::vector<int64_t> sizes(static_cast<size_t>(shards));
  for (int64_t& n : sizes) n = std::uniform_int_distribution<int64_t>(1, max_size)(rng);
  return sizes;
}

int64_t Sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

TEST(ShardOrder, IndexedModeIsReaderCoresOrderOverAllSamples) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<int64_t> sizes = RandomSizes(rng, 1 + trial % 7, 40);
    const int64_t ranks = 1 + trial % 3;
    if (Sum(sizes) < ranks) continue;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      ShardOrderOptions o = Options(ShuffleMode::kSamples, trial % 2 == 0, rank, ranks, rng());
      o.reader.pad_last_batch = trial % 4 < 2;
      o.reader.stick_to_shard = trial % 5 == 0;
      ShardOrder order(sizes, o, "r");
      ReaderCore core(Sum(sizes), o.reader, "r");
      EXPECT_EQ(order.EpochSize(5), core.EpochSize(5));
      for (int it = 0; it < 12; ++it) ASSERT_EQ(order.NextBatch(5), core.NextBatch(5)) << trial << " " << it;
      EXPECT_EQ(order.state(), core.state());
    }
  }
}

TEST(ShardOrder, BufferShuffleIsAPermutationThatStaysWithinItsWindow) {
  std::mt19937 rng(std::random_device{}());
  for (int64_t fill : {1, 2, 5, 64, 1000}) {
    std::vector<int64_t> stream(300);
    std::iota(stream.begin(), stream.end(), 1000);
    const std::vector<int64_t> out = ShardOrder::BufferShuffle(stream, fill, Philox(rng(), 1, 2, 3));
    ASSERT_EQ(out.size(), stream.size());
    EXPECT_EQ(std::set<int64_t>(out.begin(), out.end()).size(), stream.size()) << "every sample once";
    for (size_t p = 0; p < out.size(); ++p) {
      // Output p comes from the stream's first p + fill samples: reads run ahead by < fill.
      EXPECT_LT(out[p] - 1000, static_cast<int64_t>(p) + fill) << "fill " << fill << " position " << p;
    }
    if (fill == 1) {
      EXPECT_EQ(out, stream);
    }
    if (fill >= 64) {
      EXPECT_NE(out, stream);
    }
  }
}

// Shard mode over uneven shards: per epoch, the ranks together read every sample exactly once,
// each rank whole shards only, and the order is a pure function of (seed, epoch, rank).
TEST(ShardOrder, ShardModeCoversEverySampleOncePerEpochAcrossRanks) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 12; ++trial) {
    const std::vector<int64_t> sizes = RandomSizes(rng, 4 + trial % 6, 30);
    std::vector<int64_t> begin(sizes.size());
    std::exclusive_scan(sizes.begin(), sizes.end(), begin.begin(), int64_t{0});
    const int64_t ranks = 1 + trial % 4;
    const bool shuffle = trial % 3 != 0;
    const uint64_t seed = rng();
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      std::multiset<int64_t> seen;
      for (int64_t rank = 0; rank < ranks; ++rank) {
        ShardOrderOptions o = Options(ShuffleMode::kShards, shuffle, rank, ranks, seed);
        o.initial_fill = 1 + trial * 3;
        const ShardOrder order(sizes, o, "r");
        const std::vector<int64_t> samples = order.EpochSamples(epoch);
        EXPECT_EQ(samples, ShardOrder(sizes, o, "r").EpochSamples(epoch)) << "deterministic";
        // The rank's samples are exactly those of its shards.
        std::multiset<int64_t> of_shards;
        for (int64_t s : order.EpochShards(epoch)) {
          for (int64_t i = 0; i < sizes[static_cast<size_t>(s)]; ++i) of_shards.insert(begin[static_cast<size_t>(s)] + i);
        }
        EXPECT_EQ(std::multiset<int64_t>(samples.begin(), samples.end()), of_shards);
        seen.insert(samples.begin(), samples.end());
      }
      ASSERT_EQ(static_cast<int64_t>(seen.size()), Sum(sizes));
      EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), seen.size()) << "no sample twice";
    }
  }
}

TEST(ShardOrder, ShardModeShufflesShardsPerEpochAndSamplesWithinTheBufferBound) {
  const std::vector<int64_t> sizes(16, 50);  // 800 samples, shard s = [50 s, 50 s + 50)
  ShardOrderOptions o = Options(ShuffleMode::kShards, true, 0, 1, std::random_device{}());
  o.initial_fill = 20;
  const ShardOrder order(sizes, o, "r");
  EXPECT_NE(order.EpochShards(0), order.EpochShards(1)) << "a new shard order every epoch";
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const std::vector<int64_t> shards = order.EpochShards(epoch);
    std::map<int64_t, int64_t> stream_position;  // sample -> its position in the unshuffled stream
    for (int64_t s : shards) {
      for (int64_t i = 0; i < 50; ++i) stream_position[s * 50 + i] = static_cast<int64_t>(stream_position.size());
    }
    const std::vector<int64_t> samples = order.EpochSamples(epoch);
    for (size_t p = 0; p < samples.size(); ++p) {
      EXPECT_LT(stream_position.at(samples[p]), static_cast<int64_t>(p) + 20) << "position " << p;
    }
    int64_t moved = 0;
    for (size_t p = 0; p < samples.size(); ++p) moved += stream_position.at(samples[p]) != static_cast<int64_t>(p);
    EXPECT_GT(moved, 700) << "the buffer shuffles";
  }
  // Without random_shuffle: shards in order, samples in order.
  const ShardOrder plain(sizes, Options(ShuffleMode::kShards, false, 0, 1), "r");
  std::vector<int64_t> all(800);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(plain.EpochSamples(3), all);
}

TEST(ShardOrder, PaddedShardModeGivesEveryRankTheSameBatchCount) {
  std::mt19937 rng(std::random_device{}());
  for (int trial = 0; trial < 10; ++trial) {
    const std::vector<int64_t> sizes = RandomSizes(rng, 5 + trial, 40);
    const int64_t ranks = 2 + trial % 3, batch = 4;
    std::vector<int64_t> sorted = sizes;
    std::sort(sorted.rbegin(), sorted.rend());
    const int64_t per_rank = (static_cast<int64_t>(sizes.size()) + ranks - 1) / ranks;
    const int64_t bound = std::accumulate(sorted.begin(), sorted.begin() + per_rank, int64_t{0});
    const uint64_t seed = rng();
    std::set<int64_t> union_of_ranks;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      ShardOrderOptions o = Options(ShuffleMode::kShards, true, rank, ranks, seed);
      o.reader.pad_last_batch = true;
      ShardOrder order(sizes, o, "r");
      const int64_t epoch_size = order.EpochSize(batch);
      EXPECT_EQ(epoch_size, (bound + batch - 1) / batch * batch);
      const std::vector<int64_t> real = order.EpochSamples(0);
      // One epoch = EpochSize / batch batches: the real samples then copies of the last one.
      std::vector<int64_t> got;
      for (int64_t b = 0; b < epoch_size / batch; ++b) {
        const std::vector<int64_t> next = order.NextBatch(batch);
        got.insert(got.end(), next.begin(), next.end());
      }
      ASSERT_EQ(static_cast<int64_t>(got.size()), epoch_size);
      EXPECT_TRUE(std::equal(real.begin(), real.end(), got.begin()));
      for (size_t i = real.size(); i < got.size(); ++i) EXPECT_EQ(got[i], real.back());
      EXPECT_EQ(order.state(), (ReaderState{1, 0})) << "the next batch starts epoch 1";
      union_of_ranks.insert(real.begin(), real.end());
    }
    EXPECT_EQ(static_cast<int64_t>(union_of_ranks.size()), Sum(sizes));
  }
}

TEST(ShardOrder, UnpaddedShardModeEpochSizeIsTheRunOfEpochZero) {
  const std::vector<int64_t> sizes = {5, 9, 2, 7, 4};
  for (int64_t rank = 0; rank < 2; ++rank) {
    for (bool stick : {false, true}) {
      ShardOrderOptions o = Options(ShuffleMode::kShards, true, rank, 2, 99);
      o.reader.stick_to_shard = stick;
      const ShardOrder order(sizes, o, "r");
      EXPECT_EQ(order.EpochSize(8), static_cast<int64_t>(order.EpochSamples(0).size()));
      if (stick) {
        EXPECT_EQ(order.EpochSize(8), static_cast<int64_t>(order.EpochSamples(3).size())) << "same shards every epoch";
      }
    }
  }
  EXPECT_TRUE(ShardOrder::EpochSizeDependsOnSeed(sizes, Options(ShuffleMode::kShards, true, 0, 2)));
  EXPECT_FALSE(ShardOrder::EpochSizeDependsOnSeed({8, 8, 8, 8}, Options(ShuffleMode::kShards, true, 0, 2)));
  EXPECT_FALSE(ShardOrder::EpochSizeDependsOnSeed(sizes, Options(ShuffleMode::kShards, false, 0, 2)));
}

TEST(ShardOrder, RestoredStateContinuesTheSameStreamInBothModes) {
  std::mt19937 rng(std::random_device{}());
  const std::vector<int64_t> sizes = RandomSizes(rng, 6, 25);
  for (ShuffleMode mode : {ShuffleMode::kSamples, ShuffleMode::kShards}) {
    for (bool pad : {false, true}) {
      ShardOrderOptions o = Options(mode, true, 1, 2, rng());
      o.reader.pad_last_batch = pad;
      o.initial_fill = 7;
      ShardOrder a(sizes, o, "r");
      for (int it = 0; it < 1 + static_cast<int>(rng() % 20); ++it) a.NextBatch(6);
      const std::string saved = ReaderCore::Save(a.state());
      ShardOrder b(sizes, o, "r");
      b.Restore(ReaderCore::Parse(saved));
      for (int it = 0; it < 25; ++it) ASSERT_EQ(a.NextBatch(6), b.NextBatch(6)) << ShuffleModeName(mode) << " " << it;
    }
  }
}

TEST(ShardOrder, ErrorsNameTheProblem) {
  EXPECT_THAT([] { ShardOrder({3, 4}, Options(ShuffleMode::kShards, true, 0, 3), "op \"r\""); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("op \"r\": shuffle: shards gives each of the 3 ranks (num_shards) whole shards, but the "
                            "data set has only 2 shards")));
  EXPECT_THAT([] { ShardOrder({3, 0}, Options(ShuffleMode::kSamples, true, 0, 1), "r"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("r: shard 1 has no samples")));
  EXPECT_THAT([] { ParseShuffleMode("sample", "r"); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("r: shuffle: expected \"samples\" (an exact permutation of all samples) or \"shards\"")));
  ShardOrderOptions o = Options(ShuffleMode::kShards, true, 0, 1);
  o.initial_fill = 0;
  EXPECT_THAT([&] { ShardOrder({3}, o, "r"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("r: initial_fill must be at least 1, got 0")));
}

}  // namespace
}  // namespace conveyor::ops
