// ShardIndex: what a shard reader knows about its data set before reading a byte of sample data —
// the shards (a path or URL each) and, per shard, its samples in shard order; per sample its key and
// its components (where each lies in the shard). A derived reader builds it (readers.webdataset by
// scanning tar headers or from index files; readers.tfrecord from its record index) and hands it
// to ShardReaderOp, which orders, shards and reads the samples.
//
//   global sample index g:  shard 0's samples 0..n0-1, then shard 1's, ... (the flattened order
//   that indexed mode permutes exactly like readers.file permutes its files)
//
// A component is a byte range of its shard: `ext` names it (WebDataset: "jpg", "cls"; TFRecord:
// ""), [offset, offset + size) lies inside the shard (checked before anything is allocated: by the
// scan, or when an index's shard is first opened).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace conveyor::ops {

struct ShardComponent {
  std::string ext;
  int64_t offset = 0;
  int64_t size = 0;
  friend bool operator==(const ShardComponent&, const ShardComponent&) = default;
};

struct ShardSample {
  std::string key;  // WebDataset: the member path up to the first dot of its basename
  std::vector<ShardComponent> components;
  int64_t line = 0;  // the index file's line that listed it (0: the shard was scanned)
  friend bool operator==(const ShardSample& a, const ShardSample& b) {
    return a.key == b.key && a.components == b.components;  // where it was listed does not matter
  }
};

struct ShardInfo {
  std::string path;        // as given: a local path or an http(s) URL
  std::string index_path;  // the index file it came from; "" when the shard was scanned
  int64_t bytes = -1;      // the shard's size when known (scanned); -1: checked when first opened
  std::vector<ShardSample> samples;
};

class ShardIndex {
 public:
  ShardIndex() = default;
  explicit ShardIndex(std::vector<ShardInfo> shards);

  int64_t num_shards() const { return static_cast<int64_t>(shards_.size()); }
  int64_t num_samples() const { return begin_.empty() ? 0 : begin_.back(); }
  const ShardInfo& shard(int64_t s) const { return shards_[static_cast<size_t>(s)]; }
  const std::vector<ShardInfo>& shards() const { return shards_; }
  // Samples of shard s and the global index of its first one.
  int64_t shard_size(int64_t s) const { return begin_[static_cast<size_t>(s) + 1] - begin_[static_cast<size_t>(s)]; }
  int64_t shard_begin(int64_t s) const { return begin_[static_cast<size_t>(s)]; }
  // (shard, sample within it) of global index g (0 <= g < num_samples()): a binary search.
  std::pair<int64_t, int64_t> Locate(int64_t g) const;
  const ShardSample& sample(int64_t g) const;
  // FNV-1a 64 over every shard's sample count and keys: checkpoints name the data set by it.
  uint64_t Fingerprint() const;

 private:
  std::vector<ShardInfo> shards_;
  std::vector<int64_t> begin_;  // begin_[s] = global index of shard s's first sample; back() = total
};

}  // namespace conveyor::ops
