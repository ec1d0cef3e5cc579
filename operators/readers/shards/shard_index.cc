#include "operators/readers/shards/shard_index.h"

#include <algorithm>

namespace conveyor::ops {

ShardIndex::ShardIndex(std::vector<ShardInfo> shards) : shards_(std::move(shards)) {
  begin_.reserve(shards_.size() + 1);
  begin_.push_back(0);
  for (const ShardInfo& s : shards_) begin_.push_back(begin_.back() + static_cast<int64_t>(s.samples.size()));
}

std::pair<int64_t, int64_t> ShardIndex::Locate(int64_t g) const {
  // The last shard whose first sample is <= g (empty shards share a begin; upper_bound skips them).
  const auto it = std::upper_bound(begin_.begin(), begin_.end() - 1, g) - 1;
  const int64_t s = it - begin_.begin();
  return {s, g - *it};
}

const ShardSample& ShardIndex::sample(int64_t g) const {
  const auto [s, i] = Locate(g);
  return shards_[static_cast<size_t>(s)].samples[static_cast<size_t>(i)];
}

uint64_t ShardIndex::Fingerprint() const {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  for (const ShardInfo& s : shards_) {
    const int64_t n = static_cast<int64_t>(s.samples.size());
    mix(&n, sizeof(n));
    for (const ShardSample& sample : s.samples) mix(sample.key.data(), sample.key.size() + 1);
  }
  return h;
}

}  // namespace conveyor::ops
