#include "operators/readers/shards/shard_order.h"

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "core/op/philox.h"

namespace conveyor::ops {
namespace {

// The shuffle buffer's Philox stream: apart from the permutations' (ReaderCore) and operators'.
constexpr uint32_t kBufferStream = NodeId("readers.shuffle_buffer");

int64_t RunIndex(const ReaderOptions& o, int64_t epoch) {
  return o.stick_to_shard ? o.shard_id : (o.shard_id + epoch) % o.num_shards;
}

// The most samples any run of shards can hold: the sum of the ceil(M/S) largest shards.
int64_t LargestRun(std::vector<int64_t> sizes, int64_t num_ranks) {
  const size_t m = sizes.size();
  const size_t take = std::min(m, (m + static_cast<size_t>(num_ranks) - 1) / static_cast<size_t>(num_ranks));
  std::partial_sort(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(take), sizes.end(), std::greater<>());
  int64_t sum = 0;
  for (size_t i = 0; i < take; ++i) sum += sizes[i];
  return sum;
}

int64_t RunSamples(const std::vector<int64_t>& sizes, const std::vector<int64_t>& run) {
  int64_t n = 0;
  for (int64_t s : run) n += sizes[static_cast<size_t>(s)];
  return n;
}

}  // namespace

ShuffleMode ParseShuffleMode(const std::string& text, const std::string& where) {
  if (text == "samples") return ShuffleMode::kSamples;
  if (text == "shards") return ShuffleMode::kShards;
  throw InvalidArgument(where + ": shuffle: expected \"samples\" (an exact permutation of all samples) or \"shards\" "
                        "(shard order and a shuffle buffer), got \"" + text + "\"");
}

const char* ShuffleModeName(ShuffleMode mode) { return mode == ShuffleMode::kSamples ? "samples" : "shards"; }

ShardOrder::ShardOrder(std::vector<int64_t> shard_sizes, const ShardOrderOptions& options, const std::string& where)
    : sizes_(std::move(shard_sizes)), options_(options) {
  begin_.reserve(sizes_.size());
  for (size_t s = 0; s < sizes_.size(); ++s) {
    if (sizes_[s] < 1) {
      throw InvalidArgument(where + ": shard " + std::to_string(s) + " has no samples (empty shards are left out "
                            "before ordering)");
    }
    begin_.push_back(total_);
    total_ += sizes_[s];
  }
  if (options_.mode == ShuffleMode::kSamples) {
    samples_core_.emplace(total_, options_.reader, where);
    return;
  }
  if (options_.initial_fill < 1) {
    throw InvalidArgument(where + ": initial_fill must be at least 1, got " + std::to_string(options_.initial_fill));
  }
  const int64_t m = static_cast<int64_t>(sizes_.size());
  if (m > 0 && options_.reader.num_shards > m) {
    throw InvalidArgument(where + ": shuffle: shards gives each of the " + std::to_string(options_.reader.num_shards) +
                          " ranks (num_shards) whole shards, but the data set has only " + std::to_string(m) +
                          " shards; use shuffle: samples, fewer ranks, or more shards");
  }
  shards_core_.emplace(m, options_.reader, where);  // validates the rank and an empty data set
  largest_run_ = LargestRun(sizes_, options_.reader.num_shards);
}

void ShardOrder::Restore(const ReaderState& state) {
  if (samples_core_) {
    samples_core_->Restore(state);
    return;
  }
  state_ = state;
  order_epoch_ = -1;
}

std::vector<int64_t> ShardOrder::EpochShards(int64_t epoch) const {
  if (!shards_core_) throw InvalidArgument("ShardOrder::EpochShards: only in shuffle: shards mode");
  return shards_core_->EpochSamples(epoch);
}

std::vector<int64_t> ShardOrder::EpochSamples(int64_t epoch) const {
  if (samples_core_) return samples_core_->EpochSamples(epoch);
  std::vector<int64_t> stream;
  for (int64_t s : EpochShards(epoch)) {
    for (int64_t i = 0; i < sizes_[static_cast<size_t>(s)]; ++i) stream.push_back(begin_[static_cast<size_t>(s)] + i);
  }
  if (!options_.reader.random_shuffle) return stream;
  const Philox rng(options_.reader.seed, kBufferStream, static_cast<uint64_t>(epoch),
                   static_cast<uint32_t>(RunIndex(options_.reader, epoch)));
  return BufferShuffle(stream, options_.initial_fill, rng);
}

std::vector<int64_t> ShardOrder::BufferShuffle(const std::vector<int64_t>& stream, int64_t initial_fill, Philox rng) {
  const size_t n = stream.size();
  const size_t fill = static_cast<size_t>(std::max<int64_t>(initial_fill, 1));
  std::vector<int64_t> buffer;
  buffer.reserve(std::min(n, fill));
  size_t next = 0;
  while (next < n && buffer.size() < fill) buffer.push_back(stream[next++]);
  std::vector<int64_t> out;
  out.reserve(n);
  while (!buffer.empty()) {
    const size_t j = static_cast<size_t>(ReaderCore::UniformBelow(rng, buffer.size()));
    out.push_back(buffer[j]);
    if (next < n) {
      buffer[j] = stream[next++];
    } else {
      buffer[j] = buffer.back();
      buffer.pop_back();
    }
  }
  return out;
}

bool ShardOrder::EpochSizeDependsOnSeed(const std::vector<int64_t>& sizes, const ShardOrderOptions& options) {
  const ReaderOptions& r = options.reader;
  if (options.mode == ShuffleMode::kSamples || r.pad_last_batch || !r.random_shuffle || r.stick_to_shard) return false;
  // Shuffled runs of whole shards: their sizes vary with the permutation unless all shards are
  // equal and every run holds as many shards.
  const bool equal = std::all_of(sizes.begin(), sizes.end(), [&](int64_t n) { return n == sizes.front(); });
  return !(equal && static_cast<int64_t>(sizes.size()) % r.num_shards == 0);
}

int64_t ShardOrder::EpochSize(const std::vector<int64_t>& sizes, const ShardOrderOptions& options,
                              int64_t batch_size) {
  const ReaderOptions& r = options.reader;
  if (options.mode == ShuffleMode::kSamples) {
    int64_t total = 0;
    for (int64_t n : sizes) total += n;
    return ReaderCore::EpochSize(total, r, batch_size);
  }
  if (r.pad_last_batch) {
    const int64_t b = std::max<int64_t>(batch_size, 1);
    return (LargestRun(sizes, r.num_shards) + b - 1) / b * b;
  }
  // The rank's run in epoch 0 (where t = shard_id with or without stick_to_shard).
  const ReaderCore shards(static_cast<int64_t>(sizes.size()), r, "ShardOrder::EpochSize");
  return RunSamples(sizes, shards.EpochSamples(0));
}

int64_t ShardOrder::EpochLength(int64_t order_size, int64_t batch_size) const {
  if (!options_.reader.pad_last_batch) return order_size;
  const int64_t b = std::max<int64_t>(batch_size, 1);
  return (largest_run_ + b - 1) / b * b;
}

const std::vector<int64_t>& ShardOrder::Order(int64_t epoch) {
  if (order_epoch_ != epoch) {
    order_ = EpochSamples(epoch);
    order_epoch_ = epoch;
  }
  return order_;
}

std::vector<int64_t> ShardOrder::NextSamples(int64_t count, int64_t batch_size) {
  if (samples_core_) return samples_core_->NextSamples(count, batch_size);
  const int64_t padded = options_.reader.pad_last_batch ? EpochLength(0, batch_size) : -1;
  return ReaderCore::Walk(state_, count, padded,
                          [this](int64_t epoch) -> const std::vector<int64_t>& { return Order(epoch); });
}

std::vector<int64_t> ShardOrder::PeekBatch(int64_t batch_size) {
  if (samples_core_) return samples_core_->PeekBatch(batch_size);
  const ReaderState saved = state_;
  std::vector<int64_t> batch = NextBatch(batch_size);
  state_ = saved;
  return batch;
}

}  // namespace conveyor::ops
