// The reader core: permutations, shards, padding, epochs, epoch sizes and state.
#include "operators/readers/reader_core.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/error.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;

uint64_t FreshSeed() { return std::random_device{}() * 2654435761ull + std::random_device{}(); }

TEST(ReaderCore, ShuffleIsAPermutationSameEveryRunDifferentEveryEpoch) {
  const uint64_t seed = FreshSeed();
  for (int64_t n : {1, 2, 7, 1000, 4099}) {
    const std::vector<int64_t> p0 = ReaderCore::Permutation(n, seed, 0);
    std::vector<int64_t> sorted = p0;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> iota(static_cast<size_t>(n));
    std::iota(iota.begin(), iota.end(), 0);
    EXPECT_EQ(sorted, iota) << n;
    EXPECT_EQ(ReaderCore::Permutation(n, seed, 0), p0) << "same key, same permutation";
    if (n >= 7) {
      EXPECT_NE(ReaderCore::Permutation(n, seed, 1), p0) << "epoch 1 must differ from epoch 0";
      EXPECT_NE(ReaderCore::Permutation(n, seed + 1, 0), p0) << "another seed must differ";
      EXPECT_NE(p0, iota) << "a shuffle should move something";
    }
  }
}

TEST(ReaderCore, PermutationIsUniformEnough) {
  // Position of element 0 over many epochs: each of 8 positions about 1/8 of the time.
  std::vector<int> hits(8, 0);
  const uint64_t seed = FreshSeed();
  for (int e = 0; e < 8000; ++e) {
    const std::vector<int64_t> p = ReaderCore::Permutation(8, seed, e);
    ++hits[static_cast<size_t>(std::find(p.begin(), p.end(), 0) - p.begin())];
  }
  for (int h : hits) EXPECT_NEAR(h, 1000, 150);
}

TEST(ReaderCore, PermutationIsMachineIndependent) {
  // The draws are Philox: the first epoch's permutation of 10 for seed 1234 is fixed forever (a
  // change here breaks every resumed training run, so it must be deliberate).
  const std::vector<int64_t> p = ReaderCore::Permutation(10, 1234, 0);
  EXPECT_EQ(p, ReaderCore::Permutation(10, 1234, 0));
  std::set<int64_t> unique(p.begin(), p.end());
  EXPECT_EQ(unique.size(), 10u);
}

struct ShardCase {
  int64_t n, batch;
  bool shuffle, pad, stick;
};

// Per epoch: shards disjoint and their union the dataset (padding repeats only a shard's own
// last sample), equal batch counts with padding, and epoch sizes as documented.
void CheckShards(const ShardCase& c, int64_t num_shards, uint64_t seed) {
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    std::map<int64_t, int> seen;
    std::set<int64_t> batch_counts;
    for (int64_t s = 0; s < num_shards; ++s) {
      ReaderOptions o{c.shuffle, s, num_shards, c.stick, c.pad, seed};
      ReaderCore core(c.n, o, "test");
      core.Restore({epoch, 0});
      const std::vector<int64_t> own = core.EpochSamples(epoch);
      for (int64_t i : own) ++seen[i];
      const int64_t epoch_size = core.EpochSize(c.batch);
      // Unpadded shards rotate between epochs (without stick_to_shard) and may differ by one sample:
      // EpochSize is shard_id's own size, i.e. this epoch's when the shard did not move.
      if (!c.pad && (c.stick || epoch % num_shards == 0)) {
        EXPECT_EQ(epoch_size, static_cast<int64_t>(own.size()));
      }
      const int64_t batches = ((c.pad ? epoch_size : static_cast<int64_t>(own.size())) + c.batch - 1) / c.batch;
      batch_counts.insert(batches);
      std::vector<int64_t> delivered;
      for (int64_t b = 0; b < batches; ++b) {
        const std::vector<int64_t> batch = core.NextBatch(c.batch);
        ASSERT_EQ(static_cast<int64_t>(batch.size()), c.batch);
        delivered.insert(delivered.end(), batch.begin(), batch.end());
      }
      if (c.pad) {
        EXPECT_EQ(epoch_size % c.batch, 0);
        EXPECT_EQ(core.state(), (ReaderState{epoch + 1, 0})) << "a padded epoch ends on a batch boundary";
        ASSERT_GE(delivered.size(), own.size());
        EXPECT_TRUE(std::equal(own.begin(), own.end(), delivered.begin())) << "the shard's samples come first";
        for (size_t i = own.size(); i < delivered.size(); ++i) EXPECT_EQ(delivered[i], own.back()) << "padding";
      } else {
        EXPECT_TRUE(std::equal(own.begin(), own.end(), delivered.begin()));
      }
    }
    ASSERT_EQ(static_cast<int64_t>(seen.size()), c.n) << "union of the shards is the dataset";
    for (const auto& [i, count] : seen) EXPECT_EQ(count, 1) << "sample " << i << " in two shards";
    if (c.pad) {
      EXPECT_EQ(batch_counts.size(), 1u) << "every shard has the same number of batches";
    }
  }
}

TEST(ReaderCore, ShardsDisjointAndCompleteForOneToEightShards) {
  const uint64_t seed = FreshSeed();
  for (ShardCase c : {ShardCase{103, 8, true, true, false}, ShardCase{103, 8, true, false, false},
                      ShardCase{96, 4, false, true, false}, ShardCase{50, 3, false, false, false},
                      ShardCase{101, 5, true, true, true}, ShardCase{64, 16, true, false, true}}) {
    for (int64_t shards = 1; shards <= 8; ++shards) {
      SCOPED_TRACE(::testing::Message() << "n " << c.n << " batch " << c.batch << " shuffle " << c.shuffle << " pad "
                                        << c.pad << " stick " << c.stick << " shards " << shards);
      CheckShards(c, shards, seed);
    }
  }
}

TEST(ReaderCore, StickToShardKeepsTheFilesAndShufflesThem) {
  ReaderOptions o{true, 2, 4, true, false, FreshSeed()};
  ReaderCore core(400, o, "test");
  std::vector<int64_t> e0 = core.EpochSamples(0), e1 = core.EpochSamples(1);
  EXPECT_NE(e0, e1) << "shuffled within the shard";
  std::sort(e0.begin(), e0.end());
  std::sort(e1.begin(), e1.end());
  EXPECT_EQ(e0, e1) << "same files every epoch";
  EXPECT_EQ(e0.front(), 200);
  EXPECT_EQ(e0.back(), 299);

  o.stick_to_shard = false;
  ReaderCore roving(400, o, "test");
  std::vector<int64_t> r0 = roving.EpochSamples(0), r1 = roving.EpochSamples(1);
  std::sort(r0.begin(), r0.end());
  std::sort(r1.begin(), r1.end());
  EXPECT_NE(r0, r1) << "without stick_to_shard the files change between epochs";
}

TEST(ReaderCore, EpochBoundariesAndEpochSize) {
  // 10 samples, batch 4: without padding the third batch runs into the next epoch.
  ReaderCore plain(10, ReaderOptions{}, "test");
  EXPECT_EQ(plain.EpochSize(4), 10);
  EXPECT_EQ(plain.NextBatch(4), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(plain.NextBatch(4), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(plain.NextBatch(4), (std::vector<int64_t>{8, 9, 0, 1}));
  EXPECT_EQ(plain.state(), (ReaderState{1, 2}));

  ReaderOptions pad;
  pad.pad_last_batch = true;
  ReaderCore padded(10, pad, "test");
  EXPECT_EQ(padded.EpochSize(4), 12);
  EXPECT_EQ(padded.EpochSize(5), 10) << "a batch size that divides the dataset needs no padding";
  padded.NextBatch(4);
  padded.NextBatch(4);
  EXPECT_EQ(padded.NextBatch(4), (std::vector<int64_t>{8, 9, 9, 9}));
  EXPECT_EQ(padded.state(), (ReaderState{1, 0}));
  EXPECT_EQ(padded.NextBatch(4), (std::vector<int64_t>{0, 1, 2, 3}));

  // 3 shards of 10: sizes 3, 3, 4 (contiguous cuts); padded to the largest, in whole batches.
  EXPECT_EQ(ReaderCore(10, ReaderOptions{false, 0, 3, false, false, 0}, "t").EpochSize(2), 3);
  EXPECT_EQ(ReaderCore(10, ReaderOptions{false, 2, 3, false, false, 0}, "t").EpochSize(2), 4);
  EXPECT_EQ(ReaderCore(10, ReaderOptions{false, 0, 3, false, true, 0}, "t").EpochSize(2), 4);
  EXPECT_EQ(ReaderCore(10, ReaderOptions{false, 0, 3, false, true, 0}, "t").EpochSize(3), 6);
}

TEST(ReaderCore, StateSavesAndRestores) {
  ReaderOptions o{true, 1, 3, false, false, FreshSeed()};
  ReaderCore a(77, o, "test");
  for (int i = 0; i < 9; ++i) a.NextBatch(5);
  const std::string saved = ReaderCore::Save(a.state());
  ReaderCore b(77, o, "test");
  b.Restore(ReaderCore::Parse(saved));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(a.NextBatch(5), b.NextBatch(5)) << "batch " << i << " after resume";
  EXPECT_THAT([] { ReaderCore::Parse("epoch=1"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("expected \"epoch=E position=P\", got \"epoch=1\"")));
}

TEST(ReaderCore, PeekBatchIsTheNextBatchAndAdvancesNothing) {
  // Shuffled and padded, over several epoch boundaries: a read ahead asks for batch k+1 while
  // batch k is the last one drawn.
  for (const bool pad : {false, true}) {
    ReaderOptions o{true, 0, 1, false, pad, FreshSeed()};
    ReaderCore peeked(23, o, "test"), plain(23, o, "test");
    for (int i = 0; i < 20; ++i) {
      const ReaderState before = peeked.state();
      const std::vector<int64_t> next = peeked.PeekBatch(5);
      EXPECT_EQ(peeked.state(), before) << "batch " << i;
      EXPECT_EQ(peeked.PeekBatch(5), next) << "batch " << i << ": peeking twice";
      EXPECT_EQ(peeked.NextBatch(5), next) << "batch " << i;
      EXPECT_EQ(plain.NextBatch(5), next) << "batch " << i << ": a core that never peeked";
    }
  }
}

TEST(ReaderCore, Errors) {
  EXPECT_THAT([] { ReaderCore(0, ReaderOptions{}, "op \"r\""); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("op \"r\": the dataset is empty")));
  EXPECT_THAT([] { ReaderCore(10, ReaderOptions{false, 3, 3, false, false, 0}, "r"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("shard_id must be in [0, num_shards) = [0, 3), got 3")));
  EXPECT_THAT([] { ReaderCore(2, ReaderOptions{false, 0, 3, false, false, 0}, "r"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("3 shards of a dataset of 2 samples")));
}

}  // namespace
}  // namespace conveyor::ops
