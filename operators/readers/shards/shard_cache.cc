#include "operators/readers/shards/shard_cache.h"

#include "core/error.h"

namespace conveyor::ops {

ShardCache::ShardCache(const ShardIndex* index, int64_t capacity, FetchOptions fetch, std::string where)
    : index_(index),
      capacity_(std::max<int64_t>(capacity, 1)),
      fetch_(fetch),
      where_(std::move(where)),
      checked_(static_cast<size_t>(index->num_shards()), 0) {}

std::shared_ptr<const ByteSource> ShardCache::Get(int64_t shard) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = open_.find(shard);
    if (it != open_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.position);
      return it->second.source;
    }
  }
  // Opened outside the lock: a URL's open is a request, and other shards' reads go on meanwhile.
  const ShardInfo& info = index_->shard(shard);
  std::shared_ptr<const ByteSource> source;
  try {
    source = OpenByteSource(info.path, fetch_);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(where_ + ": shard " + e.what());
  }
  bool check = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check = !checked_[static_cast<size_t>(shard)];
  }
  if (check) Check(shard, *source);
  std::lock_guard<std::mutex> lock(mutex_);
  checked_[static_cast<size_t>(shard)] = 1;
  const auto it = open_.find(shard);
  if (it != open_.end()) return it->second.source;  // another thread opened it meanwhile
  ++opens_;
  lru_.push_front(shard);
  open_[shard] = Entry{source, lru_.begin()};
  while (static_cast<int64_t>(open_.size()) > capacity_) {
    open_.erase(lru_.back());
    lru_.pop_back();
  }
  return source;
}

void ShardCache::Check(int64_t shard, const ByteSource& source) const {
  const ShardInfo& info = index_->shard(shard);
  const int64_t bytes = source.Size();
  if (info.bytes >= 0 && info.bytes != bytes) {
    throw InvalidArgument(where_ + ": shard \"" + info.path + "\" holds " + std::to_string(bytes) +
                          " bytes now, " + std::to_string(info.bytes) + " when it was scanned (changed since?)");
  }
  for (const ShardSample& sample : info.samples) {
    for (const ShardComponent& c : sample.components) {
      if (c.offset >= 0 && c.size >= 0 && c.offset <= bytes && c.size <= bytes - c.offset) continue;
      const std::string listed =
          info.index_path.empty() ? std::string("the scan")
                                  : "index \"" + info.index_path + "\" line " + std::to_string(sample.line);
      throw InvalidArgument(where_ + ": " + listed + ": \"" + sample.key + (c.ext.empty() ? "" : "." + c.ext) +
                            "\" is " + std::to_string(c.size) + " bytes at offset " + std::to_string(c.offset) +
                            ", but shard \"" + info.path + "\" holds " + std::to_string(bytes) +
                            " bytes (is the index of another shard, or the shard truncated?)");
    }
  }
}

int64_t ShardCache::num_open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(open_.size());
}

int64_t ShardCache::opens() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return opens_;
}

}  // namespace conveyor::ops
