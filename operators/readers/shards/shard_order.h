// ShardOrder: the sample stream of one rank of a sharded data set (shard readers), in two modes,
// as a pure function of (shard sizes, seed, epoch, rank, options) — like ReaderCore, whose state
// (epoch, position) it shares, so a checkpoint is two integers in both modes.
//
// Samples are numbered globally: shard 0's first, then shard 1's, ... (ShardIndex). M shards,
// N samples, S ranks, this rank s, batch size B.
//
// kSamples (`shuffle: samples`, indexed mode): ReaderCore over the N samples — exactly readers.file's
//   per-epoch permutation, contiguous cuts across ranks, rotation, stick_to_shard, pad_last_batch.
//   Reads jump between shards and within them (docs/readers.md measures what that costs).
//
// kShards (`shuffle: shards`): by shards, with reads that stay sequential within a window.
//   shards_e  = ReaderCore over the M shards: with random_shuffle a permutation of the shards from
//               (seed, e), cut into S contiguous runs; rank s takes run t = (s + e) mod S, or t = s
//               with stick_to_shard (its own shards, reordered among themselves each epoch)
//   stream_e  = the samples of shards_e, each shard's in shard order
//   samples_e = random_shuffle ? BufferShuffle(stream_e, initial_fill, Philox(seed, buffer, e, t))
//                              : stream_e
//   BufferShuffle is the shuffle buffer of WebDataset/DALI simulated on indices: fill `initial_fill`
//   samples, then repeatedly emit a uniformly drawn one and refill its slot with the next of the
//   stream. The output's sample p comes from the stream's first p + initial_fill samples, so reads
//   run ahead of the stream by at most initial_fill samples. The shuffle is approximate — samples
//   of one shard stay near each other — and is a pure function of (seed, epoch, run), so the state
//   (epoch, position) rebuilds the buffer exactly: no buffer contents are saved.
//
// Uneven shards in kShards mode: runs are cut by shards, so ranks' epochs differ in samples.
//   pad_last_batch: every rank's epoch is padded (repeating its last sample) to the most samples
//   any run can hold — the sum of the ceil(M/S) largest shards — rounded up to whole batches; the
//   same count on every rank and epoch, whatever the permutation did.
//   Without it the stream runs on across epochs, and a rank's epoch is its run's size, which
//   changes with the epoch when shard sizes differ (EpochSize below).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "operators/readers/reader_core.h"

namespace conveyor::ops {

enum class ShuffleMode { kSamples, kShards };

// "samples" / "shards"; anything else throws InvalidArgument naming `where` and the choices.
ShuffleMode ParseShuffleMode(const std::string& text, const std::string& where);
const char* ShuffleModeName(ShuffleMode mode);

struct ShardOrderOptions {
  ReaderOptions reader;
  ShuffleMode mode = ShuffleMode::kSamples;
  int64_t initial_fill = 1024;  // kShards with random_shuffle: the shuffle buffer's samples (>= 1)
};

class ShardOrder {
 public:
  // `shard_sizes`: samples per shard (each >= 1). Throws InvalidArgument (prefixed with `where`)
  // for an empty data set, a bad rank, or fewer shards than ranks in kShards mode.
  ShardOrder(std::vector<int64_t> shard_sizes, const ShardOrderOptions& options, const std::string& where);

  // The global sample indices of the next batch; advances the state (as ReaderCore::NextBatch).
  std::vector<int64_t> NextBatch(int64_t batch_size) { return NextSamples(batch_size, batch_size); }
  std::vector<int64_t> NextSamples(int64_t count, int64_t batch_size);
  std::vector<int64_t> PeekBatch(int64_t batch_size);

  const ReaderState& state() const { return samples_core_ ? samples_core_->state() : state_; }
  void Restore(const ReaderState& state);
  int64_t num_samples() const { return total_; }

  // Samples one epoch of this rank delivers (padding included). kSamples: ReaderCore's. kShards:
  // with pad_last_batch the padded bound above (exact on every rank and epoch); without, the
  // samples of the rank's run in epoch 0 — the same every epoch when the run cannot change
  // (no random_shuffle, stick_to_shard, or runs of equal sizes), else it holds for epoch 0 of
  // options.reader.seed only. A pure function (thread-safe).
  static int64_t EpochSize(const std::vector<int64_t>& shard_sizes, const ShardOrderOptions& options,
                           int64_t batch_size);
  int64_t EpochSize(int64_t batch_size) const { return EpochSize(sizes_, options_, batch_size); }
  // Whether EpochSize depends on options.reader.seed (kShards, unpadded, shuffled, uneven runs).
  static bool EpochSizeDependsOnSeed(const std::vector<int64_t>& shard_sizes, const ShardOrderOptions& options);

  // The building blocks, exposed for tests.
  // kShards: the shards rank `options.reader.shard_id` reads in epoch `epoch`, in order.
  std::vector<int64_t> EpochShards(int64_t epoch) const;
  // The rank's samples of epoch `epoch`, in order, without padding.
  std::vector<int64_t> EpochSamples(int64_t epoch) const;
  static std::vector<int64_t> BufferShuffle(const std::vector<int64_t>& stream, int64_t initial_fill, Philox rng);

 private:
  const std::vector<int64_t>& Order(int64_t epoch);
  int64_t EpochLength(int64_t order_size, int64_t batch_size) const;

  std::vector<int64_t> sizes_;
  std::vector<int64_t> begin_;  // global index of each shard's first sample
  int64_t total_ = 0;
  int64_t largest_run_ = 0;  // kShards: LargestRun of the sizes (the padded epoch before rounding)
  ShardOrderOptions options_;
  std::optional<ReaderCore> samples_core_;  // kSamples: over the N samples
  std::optional<ReaderCore> shards_core_;   // kShards: over the M shards (which run this rank reads)
  ReaderState state_;
  std::vector<int64_t> order_;  // EpochSamples(order_epoch_), cached
  int64_t order_epoch_ = -1;
};

}  // namespace conveyor::ops
