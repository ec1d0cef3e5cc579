// ShardReaderOp: the operator base of the shard readers (readers.webdataset, readers.tfrecord),
// what ReaderOp is to readers.file. It owns the sharding arguments, the ShardIndex, the ShardOrder
// that picks each batch's samples, the open shards (ShardCache), epoch sizes and checkpoints; a
// derived reader supplies the index and maps a sample's components to its outputs.
//
//   constructor (derived):  build the ShardIndex (scan the shards or read index files), SetIndex()
//   Setup(ws):   batch = order.NextBatch(batch_size)     (the state advances once per iteration)
//                open the batch's shards (in parallel; a shard's components are checked against
//                its size the first time) → SetupSamples(ws, batch) → output shapes
//   RunCpu(ws):  every output's per-sample sources = SourceName(sample, output) (its file) and the
//                global sample index; ReadSample(ws, i, sample) for the batch's samples in parallel
//                on the CPU stage's threads, each reading with ReadComponent / ReadRange straight
//                into the executor's output buffers (pinned staging when a GPU node reads them)
//
// Arguments (WithShardReaderArgs; DALI's names): random_shuffle, shard_id, num_shards,
// stick_to_shard, pad_last_batch, seed (-1: the pipeline's), shuffle (samples | shards: the two
// modes of shard_order.h), initial_fill (the shuffle buffer of shuffle: shards), max_open_shards
// (the ShardCache's bound); http_max_retries, http_retry_backoff_ms, http_connect_timeout_ms,
// http_timeout_ms, http_read_ahead_bytes, http_memory_limit_bytes, http_max_connections,
// http_ca_file: the FetchOptions every URL the reader opens is read with — shards, index files,
// scans (byte_source.h; local paths ignore them).
//
// Sample names: "<shard path or URL>:<key>" and, for a component, ":<key>.<ext>" — what every
// error of the reader and of later operators (through the sources) names.
//
// Checkpoints: "mode=samples samples=N shards=M fingerprint=F shard_id=s num_shards=S epoch=E
// position=P"; restoring one of another mode, data set (samples, shards, or keys: the
// fingerprint) or rank throws InvalidArgument naming what differs.
//
// Thread-safety: Setup and RunCpu run on the executor's stage thread (ReadSample on its pool);
// EpochSize, CheckpointState and the counters may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/op/operator.h"
#include "core/op/schema.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/shards/shard_cache.h"
#include "operators/readers/shards/shard_index.h"
#include "operators/readers/shards/shard_order.h"

namespace conveyor::ops {

// Adds random_shuffle, shard_id, num_shards, stick_to_shard, pad_last_batch, seed, shuffle,
// initial_fill, max_open_shards, the http_* fetch arguments, and Backends({kCpu}).
OpSchema WithShardReaderArgs(OpSchema schema);

// The http_* arguments of a spec whose schema came from WithShardReaderArgs, as FetchOptions.
FetchOptions ShardFetchOptions(const OpSpec& spec);

class ShardReaderOp : public Operator {
 public:
  explicit ShardReaderOp(const OpSpec& spec);

  OutputDescs Setup(const Workspace& ws) final;
  void RunCpu(Workspace& ws) final;
  std::optional<int64_t> EpochSize(int64_t batch_size) const final;
  std::string CheckpointState() const override;
  void RestoreCheckpoint(const std::string& state) override;

  // The position (epoch, samples of it handed out) after the last Setup; RestoreState before the
  // next Setup continues from there (same seed).
  ReaderState State() const;
  void RestoreState(const ReaderState& state);

  const ShardIndex& index() const { return index_; }
  ShuffleMode mode() const { return order_options_.mode; }
  // The global sample indices of the last batch Setup drew (tests: the order, the buffer bound).
  const std::vector<int64_t>& batch_indices() const { return batch_indices_; }
  int64_t open_shards() const { return cache_ ? cache_->num_open() : 0; }
  int64_t shard_opens() const { return cache_ ? cache_->opens() : 0; }
  // How this reader opens URLs (its http_* arguments); derived readers open index files and scan
  // shards with them too.
  const FetchOptions& fetch_options() const { return fetch_options_; }

 protected:
  struct BatchSample {
    int64_t index = 0;  // global sample index (ShardIndex)
    int64_t shard = 0;
    const ShardSample* sample = nullptr;
  };

  // Derived constructors call this once. Shards without samples are left out (counted in
  // empty_shards()); an empty data set throws InvalidArgument.
  void SetIndex(ShardIndex index);
  // Runs list(i) for every shard i in [0, n) on up to kListThreads threads — how a derived
  // constructor builds its index (a URL's index read or scan waits on the network) — and rethrows
  // the failure of the lowest i, so the error does not depend on which thread failed first.
  static void ListShards(int64_t n, const std::function<void(int64_t)>& list);
  static constexpr int kListThreads = 16;
  int64_t empty_shards() const { return empty_shards_; }

  // Output descriptors of the batch (may read sample bytes with ReadRange, e.g. to parse records).
  virtual OutputDescs SetupSamples(const Workspace& ws, const std::vector<BatchSample>& batch) = 0;
  // Fills sample `i` of every output. Called concurrently for different i.
  virtual void ReadSample(Workspace& ws, int i, const BatchSample& sample) = 0;
  // What output `output`'s sources name for `sample` (default: SampleName(sample, "")).
  virtual std::string SourceName(const BatchSample& sample, int output) const;

  // "shard.tar:key" (ext "") or "shard.tar:key.ext".
  std::string SampleName(const BatchSample& sample, const std::string& ext) const;
  // "op \"readers.webdataset\" (r): shard.tar:key.ext": how messages about one sample start.
  std::string SampleWhere(const BatchSample& sample, const std::string& ext) const;
  // Reads `bytes` at `offset` of the sample's shard into `dst`, or throws InvalidArgument naming
  // SampleWhere(sample, ext) and the ByteSource's reason. Thread-safe.
  void ReadRange(const BatchSample& sample, const std::string& ext, int64_t offset, int64_t bytes, void* dst) const;
  void ReadComponent(const BatchSample& sample, const ShardComponent& c, void* dst) const {
    ReadRange(sample, c.ext, c.offset, c.size, dst);
  }

 private:
  ShardOrderOptions OptionsWithSeed(uint64_t seed) const;

  ShardIndex index_;
  std::vector<int64_t> shard_sizes_;
  int64_t empty_shards_ = 0;
  ShardOrderOptions order_options_;
  FetchOptions fetch_options_;
  int64_t seed_arg_;
  int64_t max_open_shards_;
  std::atomic<int64_t> known_seed_{-1};  // the seed once known (the op's, or the pipeline's at Setup)
  std::optional<ShardOrder> order_;
  std::optional<ReaderState> restored_;
  std::unique_ptr<ShardCache> cache_;
  std::vector<int64_t> batch_indices_;
  std::vector<BatchSample> batch_;
  mutable std::mutex state_mutex_;  // State() from any thread
  ReaderState state_;
};

}  // namespace conveyor::ops
