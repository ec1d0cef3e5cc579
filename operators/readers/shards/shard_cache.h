// ShardCache: the open shards of a shard reader — opened on first use, at most `capacity` kept
// (least recently used closed first), shared with the reads in flight (a closed shard stays open
// until its last read returns). Thread-safe: the CPU stage's threads read through it concurrently.
//
// The first time a shard is opened, every component the index lists for it is checked to lie
// inside it — an index file's offsets and sizes are believed only after that, and before any
// output is sized from them. A violation throws InvalidArgument naming the index file and line, the
// member and both sizes.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/readers/shards/shard_index.h"

namespace conveyor::ops {

class ShardCache {
 public:
  // `index` must outlive the cache. `where` prefixes messages (the reader's Describe()).
  ShardCache(const ShardIndex* index, int64_t capacity, FetchOptions fetch, std::string where);

  // Shard `shard`, open (opening and checking it when it is not).
  std::shared_ptr<const ByteSource> Get(int64_t shard);

  int64_t num_open() const;
  int64_t opens() const;  // how many times a shard was opened (tests: the LRU bound works)

 private:
  void Check(int64_t shard, const ByteSource& source) const;

  const ShardIndex* index_;
  int64_t capacity_;
  FetchOptions fetch_;
  std::string where_;
  mutable std::mutex mutex_;
  std::list<int64_t> lru_;  // most recently used first
  struct Entry {
    std::shared_ptr<const ByteSource> source;
    std::list<int64_t>::iterator position;
  };
  std::unordered_map<int64_t, Entry> open_;
  std::vector<char> checked_;  // per shard: its components were checked against its size
  int64_t opens_ = 0;
};

}  // namespace conveyor::ops
