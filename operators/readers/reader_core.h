// ReaderCore: the sample order every reader shares — which dataset samples go into each batch of
// this shard, epoch after epoch — as a pure function of (dataset size, seed, epoch, shard, options).
//
// Epoch e, dataset of N samples, S shards, this shard s, batch size B:
//
//   order_e   = random_shuffle ? P(seed, e) : [0, 1, ..., N-1]      P: a full permutation (Fisher–
//                                                                    Yates on Philox draws), the same
//                                                                    on every rank, run and machine
//   shard     = [N*t/S, N*(t+1)/S)                                  contiguous cut; t = s when
//                                                                    stick_to_shard, else (s + e) mod S
//   samples_e = stick_to_shard ? the shard's own indices, in order_e's relative order
//                              : order_e[shard]
//
// So in every epoch the S shards are disjoint and together the whole dataset; with stick_to_shard a
// rank keeps the same files (shuffled among themselves) for node-local caches.
//
// Batches: with pad_last_batch, an epoch of every shard is ceil(ceil(N/S) / B) batches, and the
// tail is filled by repeating the shard's last sample (DALI's semantics): every rank yields the
// same number of batches and no batch mixes two epochs. Without it the sample stream runs on: the
// last batch of epoch e is completed with the first samples of epoch e+1 (as DALI's readers do).
//
// EpochSize(): the samples one epoch of this shard delivers — padded to whole batches with
// pad_last_batch, else the shard's size. The state (epoch, position) is all that changes; it
// saves to and restores from a small string.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/op/philox.h"

namespace conveyor::ops {

struct ReaderOptions {
  bool random_shuffle = false;
  int64_t shard_id = 0;
  int64_t num_shards = 1;
  bool stick_to_shard = false;
  bool pad_last_batch = false;
  uint64_t seed = 0;
};

struct ReaderState {
  int64_t epoch = 0;
  int64_t position = 0;  // samples of the current epoch already handed out (padding included)
  friend bool operator==(const ReaderState&, const ReaderState&) = default;
};

class ReaderCore {
 public:
  // Throws InvalidArgument (prefixed with `where`) for an empty dataset or a bad shard.
  ReaderCore(int64_t dataset_size, const ReaderOptions& options, const std::string& where);

  // The dataset indices of the next `batch_size` samples; advances the state.
  std::vector<int64_t> NextBatch(int64_t batch_size) { return NextSamples(batch_size, batch_size); }
  // `count` more samples of the stream whose batches are `batch_size` (padding follows
  // batch_size): how a reader draws replacements for samples it skipped.
  std::vector<int64_t> NextSamples(int64_t count, int64_t batch_size);
  // What NextBatch(batch_size) would return now, without advancing the state (a reader's read
  // ahead of its next batch). The epoch order it may compute stays cached for that NextBatch.
  std::vector<int64_t> PeekBatch(int64_t batch_size) {
    const ReaderState saved = state_;
    std::vector<int64_t> batch = NextBatch(batch_size);
    state_ = saved;
    return batch;
  }

  int64_t dataset_size() const { return size_; }
  // Samples per epoch of this shard: ceil(N/S) rounded up to whole batches with pad_last_batch;
  // else the size of shard `shard_id` (without stick_to_shard the shards rotate, and one epoch
  // may have one sample more or less). A pure function of its arguments (thread-safe).
  static int64_t EpochSize(int64_t dataset_size, const ReaderOptions& options, int64_t batch_size);
  int64_t EpochSize(int64_t batch_size) const { return EpochSize(size_, options_, batch_size); }
  const ReaderState& state() const { return state_; }
  void Restore(const ReaderState& state) { state_ = state; order_epoch_ = -1; }
  // "epoch=3 position=128"; Parse throws InvalidArgument on anything else.
  static std::string Save(const ReaderState& state);
  static ReaderState Parse(const std::string& text);

  // The walk NextSamples makes, for any epoch order: `count` samples from `state` on, taking
  // order(epoch)[position] (padding repeats the order's last sample up to `padded_epoch` samples
  // per epoch; padded_epoch < 0: no padding, each epoch is its order's size). The shard readers'
  // order (shards/shard_order.h) walks its own epochs with it.
  using EpochOrder = std::function<const std::vector<int64_t>&(int64_t epoch)>;
  static std::vector<int64_t> Walk(ReaderState& state, int64_t count, int64_t padded_epoch, const EpochOrder& order);

  // The building blocks, exposed for tests.
  static std::vector<int64_t> Permutation(int64_t n, uint64_t seed, int64_t epoch);
  // An unbiased integer in [0, bound), bound in [1, 2^63], from `rng`: the draw every reader order
  // (this permutation, the shard readers' shuffle buffer) is made of.
  static uint64_t UniformBelow(Philox& rng, uint64_t bound);
  // [begin, end) of shard `shard` of `num_shards` over n samples.
  static std::pair<int64_t, int64_t> ShardRange(int64_t n, int64_t shard, int64_t num_shards);
  // The samples of epoch `epoch` of this shard, in order (no padding).
  std::vector<int64_t> EpochSamples(int64_t epoch) const;

 private:
  int64_t ShardSize(int64_t epoch) const;
  const std::vector<int64_t>& Order(int64_t epoch);

  int64_t size_;
  ReaderOptions options_;
  ReaderState state_;
  std::vector<int64_t> order_;  // EpochSamples(order_epoch_), cached
  int64_t order_epoch_ = -1;
};

}  // namespace conveyor::ops
