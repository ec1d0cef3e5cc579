#include "operators/readers/reader_core.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/op/philox.h"

namespace conveyor::ops {
namespace {

// The Philox stream of an epoch's permutation: a fixed "node" id keeps it apart from operator draws.
constexpr uint32_t kShuffleStream = NodeId("readers.shuffle");

// Unbiased integer in [0, bound) (Lemire's multiply-and-reject), bound <= 2^32.
uint64_t Bounded(Philox& rng, uint64_t bound) {
  if (bound <= 1) return 0;
  const uint64_t threshold = (uint64_t{1} << 32) % bound;
  for (;;) {
    const uint64_t m = static_cast<uint64_t>(rng.NextU32()) * bound;
    if ((m & 0xFFFFFFFFu) >= threshold) return m >> 32;
  }
}

// Unbiased integer in [0, bound) for any bound up to 2^63.
uint64_t BoundedWide(Philox& rng, uint64_t bound) {
  if (bound <= (uint64_t{1} << 32)) return Bounded(rng, bound);
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  for (;;) {
    const uint64_t v = (static_cast<uint64_t>(rng.NextU32()) << 32) | rng.NextU32();
    if (v < limit) return v % bound;
  }
}

}  // namespace

ReaderCore::ReaderCore(int64_t dataset_size, const ReaderOptions& options, const std::string& where)
    : size_(dataset_size), options_(options) {
  if (size_ <= 0) throw InvalidArgument(where + ": the dataset is empty");
  if (options_.num_shards < 1) {
    throw InvalidArgument(where + ": num_shards must be at least 1, got " + std::to_string(options_.num_shards));
  }
  if (options_.shard_id < 0 || options_.shard_id >= options_.num_shards) {
    throw InvalidArgument(where + ": shard_id must be in [0, num_shards) = [0, " + std::to_string(options_.num_shards) +
                          "), got " + std::to_string(options_.shard_id));
  }
  if (options_.num_shards > size_) {
    throw InvalidArgument(where + ": " + std::to_string(options_.num_shards) + " shards of a dataset of " +
                          std::to_string(size_) + " samples would leave a shard empty");
  }
}

std::vector<int64_t> ReaderCore::Permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = i;
  Philox rng(seed, kShuffleStream, static_cast<uint64_t>(epoch), 0);
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(UniformBelow(rng, static_cast<uint64_t>(i) + 1));
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(j)]);
  }
  return p;
}

uint64_t ReaderCore::UniformBelow(Philox& rng, uint64_t bound) { return BoundedWide(rng, bound); }

std::pair<int64_t, int64_t> ReaderCore::ShardRange(int64_t n, int64_t shard, int64_t num_shards) {
  // n * shard fits in int64 for any real dataset (n < 2^40, shards < 2^20).
  return {n * shard / num_shards, n * (shard + 1) / num_shards};
}

std::vector<int64_t> ReaderCore::EpochSamples(int64_t epoch) const {
  const int64_t s = options_.num_shards;
  const int64_t t = options_.stick_to_shard ? options_.shard_id : (options_.shard_id + epoch) % s;
  const auto [begin, end] = ShardRange(size_, t, s);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(end - begin));
  if (!options_.random_shuffle) {
    for (int64_t i = begin; i < end; ++i) out.push_back(i);
    return out;
  }
  const std::vector<int64_t> order = Permutation(size_, options_.seed, epoch);
  if (!options_.stick_to_shard) {
    out.assign(order.begin() + begin, order.begin() + end);
    return out;
  }
  // The shard's own samples, in the order the epoch's permutation puts them.
  for (int64_t i : order) {
    if (i >= begin && i < end) out.push_back(i);
  }
  return out;
}

int64_t ReaderCore::ShardSize(int64_t epoch) const {
  const int64_t t = options_.stick_to_shard ? options_.shard_id : (options_.shard_id + epoch) % options_.num_shards;
  const auto [begin, end] = ShardRange(size_, t, options_.num_shards);
  return end - begin;
}

int64_t ReaderCore::EpochSize(int64_t n, const ReaderOptions& options, int64_t batch_size) {
  if (!options.pad_last_batch) {
    const auto [begin, end] = ShardRange(n, options.shard_id, options.num_shards);
    return end - begin;
  }
  const int64_t b = std::max<int64_t>(batch_size, 1);
  const int64_t largest = (n + options.num_shards - 1) / options.num_shards;
  return (largest + b - 1) / b * b;
}

const std::vector<int64_t>& ReaderCore::Order(int64_t epoch) {
  if (order_epoch_ != epoch) {
    order_ = EpochSamples(epoch);
    order_epoch_ = epoch;
  }
  return order_;
}

std::vector<int64_t> ReaderCore::Walk(ReaderState& state, int64_t count, int64_t padded_epoch, const EpochOrder& order) {
  std::vector<int64_t> batch;
  batch.reserve(static_cast<size_t>(std::max<int64_t>(count, 0)));
  while (static_cast<int64_t>(batch.size()) < count) {
    const std::vector<int64_t>& epoch_order = order(state.epoch);
    const int64_t n = static_cast<int64_t>(epoch_order.size());
    const int64_t epoch_len = padded_epoch >= 0 ? padded_epoch : n;
    if (state.position >= epoch_len) {
      ++state.epoch;
      state.position = 0;
      continue;
    }
    batch.push_back(epoch_order[static_cast<size_t>(std::min(state.position, n - 1))]);  // pad: repeat the last
    ++state.position;
  }
  if (padded_epoch >= 0 && state.position >= padded_epoch) {
    ++state.epoch;
    state.position = 0;
  }
  return batch;
}

std::vector<int64_t> ReaderCore::NextSamples(int64_t count, int64_t batch_size) {
  const int64_t padded = options_.pad_last_batch ? EpochSize(batch_size) : -1;
  return Walk(state_, count, padded, [this](int64_t epoch) -> const std::vector<int64_t>& { return Order(epoch); });
}

std::string ReaderCore::Save(const ReaderState& state) {
  return "epoch=" + std::to_string(state.epoch) + " position=" + std::to_string(state.position);
}

ReaderState ReaderCore::Parse(const std::string& text) {
  ReaderState s;
  long long epoch = -1, position = -1;
  char tail = 0;
  if (std::sscanf(text.c_str(), "epoch=%lld position=%lld%c", &epoch, &position, &tail) != 2 || epoch < 0 ||
      position < 0) {
    throw InvalidArgument("reader state: expected \"epoch=E position=P\", got \"" + text + "\"");
  }
  s.epoch = epoch;
  s.position = position;
  return s;
}

}  // namespace conveyor::ops
