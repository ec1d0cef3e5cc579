#include "operators/readers/shards/shard_reader_op.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <exception>
#include <map>
#include <thread>

#include "core/error.h"

namespace conveyor::ops {

OpSchema WithShardReaderArgs(OpSchema schema) {
  return schema
      .Arg<bool>("random_shuffle", false,
                 "Shuffle every epoch: an exact permutation of all samples (shuffle: samples) or the shard order "
                 "plus a shuffle buffer (shuffle: shards), from the seed and the epoch.")
      .Arg<int64_t>("shard_id", 0, "This reader's rank.")
      .Min(0)
      .Arg<int64_t>("num_shards", 1, "Ranks the data set is cut into (by samples, or by whole shards).")
      .Min(1)
      .Arg<bool>("stick_to_shard", false, "Keep the same part every epoch (else part (shard_id + epoch) mod num_shards).")
      .Arg<bool>("pad_last_batch", false,
                 "Pad each rank's epoch by repeating its last sample: every rank yields the same number of batches.")
      .Arg<int64_t>("seed", -1, "Shuffle seed; -1 takes the pipeline's seed.")
      .Min(-1)
      .Arg<std::string>("shuffle", "samples",
                        "samples: the same exact per-epoch permutation of all samples as readers.file (reads jump "
                        "within and between shards); shards: the shard order is permuted and ranks take whole "
                        "shards, whose samples pass a shuffle buffer of initial_fill (approximate; reads stay "
                        "sequential within a window).")
      .Choices({"samples", "shards"})
      .Arg<int64_t>("initial_fill", 1024, "shuffle: shards: the shuffle buffer's samples.")
      .Min(1)
      .Arg<int64_t>("max_open_shards", 64, "Shards kept open at once (least recently used closed first).")
      .Min(1)
      // How http(s):// shards and index files are fetched (FetchOptions; local paths ignore them).
      .Arg<int64_t>("http_max_retries", 4,
                    "URLs: retries of a request that failed with a connection error, a timeout, HTTP 5xx or 429 "
                    "(0: one attempt).")
      .Range(0, 100)
      .Arg<int64_t>("http_retry_backoff_ms", 100, "URLs: the wait before retry k is this * 2^k ms (at most 5 s).")
      .Range(0, 5000)
      .Arg<int64_t>("http_connect_timeout_ms", 10000, "URLs: the longest a connection may take to open.")
      .Range(1, 3600000)
      .Arg<int64_t>("http_timeout_ms", 60000, "URLs: the longest one request may take, start to end.")
      .Range(1, 86400000)
      .Arg<int64_t>("http_read_ahead_bytes", int64_t{8} << 20,
                    "URLs: how far ahead of a sequential reader (a scan, shuffle: shards) blocks are fetched on "
                    "background threads (0: never).")
      .Range(0, static_cast<double>(int64_t{1} << 32))
      .Arg<int64_t>("http_memory_limit_bytes", int64_t{256} << 20,
                    "URLs: the most bytes one open shard's cached and read-ahead blocks hold at once (under 32 KiB: "
                    "no cache); a server without range support must fit in it.")
      .Range(0, 1e12)
      .Arg<int64_t>("http_max_connections", 8, "URLs: requests one open shard has in flight at once.")
      .Range(1, 256)
      .Arg<std::string>("http_ca_file", "", "URLs: a PEM bundle that verifies https servers (empty: the system's).")
      .Path()
      .Backends({Device::kCpu});
}

FetchOptions ShardFetchOptions(const OpSpec& spec) {
  FetchOptions options;
  options.max_retries = spec.Arg<int64_t>("http_max_retries");
  options.retry_base_ms = spec.Arg<int64_t>("http_retry_backoff_ms");
  options.connect_timeout_ms = spec.Arg<int64_t>("http_connect_timeout_ms");
  options.request_timeout_ms = spec.Arg<int64_t>("http_timeout_ms");
  options.read_ahead_bytes = spec.Arg<int64_t>("http_read_ahead_bytes");
  options.memory_limit_bytes = spec.Arg<int64_t>("http_memory_limit_bytes");
  options.max_connections = spec.Arg<int64_t>("http_max_connections");
  options.ca_file = spec.Arg<std::string>("http_ca_file");
  return options;
}

ShardReaderOp::ShardReaderOp(const OpSpec& spec)
    : Operator(spec),
      fetch_options_(ShardFetchOptions(spec)),
      seed_arg_(spec.Arg<int64_t>("seed")),
      max_open_shards_(spec.Arg<int64_t>("max_open_shards")) {
  ReaderOptions& r = order_options_.reader;
  r.random_shuffle = spec.Arg<bool>("random_shuffle");
  r.shard_id = spec.Arg<int64_t>("shard_id");
  r.num_shards = spec.Arg<int64_t>("num_shards");
  r.stick_to_shard = spec.Arg<bool>("stick_to_shard");
  r.pad_last_batch = spec.Arg<bool>("pad_last_batch");
  order_options_.mode = ParseShuffleMode(spec.Arg<std::string>("shuffle"), spec.Describe());
  order_options_.initial_fill = spec.Arg<int64_t>("initial_fill");
  if (seed_arg_ >= 0) known_seed_ = seed_arg_;
}

void ShardReaderOp::SetIndex(ShardIndex index) {
  std::vector<ShardInfo> kept;
  kept.reserve(static_cast<size_t>(index.num_shards()));
  empty_shards_ = 0;
  for (const ShardInfo& s : index.shards()) {
    if (s.samples.empty()) {
      ++empty_shards_;
    } else {
      kept.push_back(s);
    }
  }
  if (kept.empty()) {
    throw InvalidArgument(spec().Describe() + ": no samples in any of the " + std::to_string(index.num_shards()) +
                          " shards" + (index.num_shards() > 0 ? " (first: \"" + index.shard(0).path + "\")" : ""));
  }
  index_ = ShardIndex(std::move(kept));
  shard_sizes_.clear();
  for (int64_t s = 0; s < index_.num_shards(); ++s) shard_sizes_.push_back(index_.shard_size(s));
  // Validates the rank and the mode's constraints now; the seed only matters at the first batch.
  ShardOrder(shard_sizes_, order_options_, spec().Describe());
  cache_ = std::make_unique<ShardCache>(&index_, max_open_shards_, fetch_options_, spec().Describe());
}

ShardOrderOptions ShardReaderOp::OptionsWithSeed(uint64_t seed) const {
  ShardOrderOptions o = order_options_;
  o.reader.seed = seed;
  return o;
}

std::optional<int64_t> ShardReaderOp::EpochSize(int64_t batch_size) const {
  // Before the first batch the pipeline's seed is unknown; the few cases whose size depends on it
  // (shard_order.h) then report the seed-0 epoch.
  const int64_t seed = known_seed_.load();
  return ShardOrder::EpochSize(shard_sizes_, OptionsWithSeed(static_cast<uint64_t>(std::max<int64_t>(seed, 0))),
                               batch_size);
}

OutputDescs ShardReaderOp::Setup(const Workspace& ws) {
  if (!order_) {
    const uint64_t seed = seed_arg_ >= 0 ? static_cast<uint64_t>(seed_arg_) : ws.seed();
    known_seed_ = static_cast<int64_t>(seed);
    order_.emplace(shard_sizes_, OptionsWithSeed(seed), spec().Describe());
    if (restored_) order_->Restore(*restored_);
  }
  batch_indices_ = order_->NextBatch(ws.batch_size());
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    state_ = order_->state();
  }
  batch_.resize(batch_indices_.size());
  std::map<int64_t, bool> shards;
  for (size_t i = 0; i < batch_indices_.size(); ++i) {
    const auto [shard, local] = index_.Locate(batch_indices_[i]);
    batch_[i] = BatchSample{batch_indices_[i], shard, &index_.shard(shard).samples[static_cast<size_t>(local)]};
    shards[shard] = true;
  }
  // Open (and on first use check) the batch's shards before any output is sized from the index.
  std::vector<int64_t> to_open;
  for (const auto& [shard, unused] : shards) to_open.push_back(shard);
  ws.ParallelFor(static_cast<int64_t>(to_open.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) cache_->Get(to_open[static_cast<size_t>(k)]);
  });
  return SetupSamples(ws, batch_);
}

void ShardReaderOp::RunCpu(Workspace& ws) {
  for (int o = 0; o < ws.num_outputs(); ++o) {
    std::vector<SampleSource> sources(batch_.size());
    for (size_t i = 0; i < batch_.size(); ++i) sources[i] = SampleSource{SourceName(batch_[i], o), batch_[i].index};
    ws.OutputCpu(o).set_sources(std::move(sources));
  }
  ws.ParallelFor(static_cast<int64_t>(batch_.size()), 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ReadSample(ws, static_cast<int>(i), batch_[static_cast<size_t>(i)]);
  });
}

std::string ShardReaderOp::SourceName(const BatchSample& sample, int output) const {
  (void)output;
  return SampleName(sample, "");
}

std::string ShardReaderOp::SampleName(const BatchSample& sample, const std::string& ext) const {
  return index_.shard(sample.shard).path + ":" + sample.sample->key + (ext.empty() ? "" : "." + ext);
}

std::string ShardReaderOp::SampleWhere(const BatchSample& sample, const std::string& ext) const {
  return spec().Describe() + ": " + SampleName(sample, ext);
}

void ShardReaderOp::ReadRange(const BatchSample& sample, const std::string& ext, int64_t offset, int64_t bytes,
                              void* dst) const {
  if (bytes == 0) return;
  const std::shared_ptr<const ByteSource> source = cache_->Get(sample.shard);
  try {
    source->ReadAt(offset, dst, bytes);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(SampleWhere(sample, ext) + ": " + e.what());
  }
}

ReaderState ShardReaderOp::State() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return order_ || !restored_ ? state_ : *restored_;
}

void ShardReaderOp::RestoreState(const ReaderState& state) {
  if (state.epoch < 0 || state.position < 0) {
    throw InvalidArgument(spec().Describe() + ": cannot restore reader state " + ReaderCore::Save(state) +
                          " (epoch and position must be >= 0)");
  }
  std::lock_guard<std::mutex> lock(state_mutex_);
  restored_ = state;
  state_ = state;
  if (order_) order_->Restore(state);
}

std::string ShardReaderOp::CheckpointState() const {
  char fingerprint[17];
  std::snprintf(fingerprint, sizeof(fingerprint), "%016" PRIx64, index_.Fingerprint());
  const ReaderOptions& r = order_options_.reader;
  return std::string("mode=") + ShuffleModeName(order_options_.mode) +
         " samples=" + std::to_string(index_.num_samples()) + " shards=" + std::to_string(index_.num_shards()) +
         " fingerprint=" + fingerprint + " shard_id=" + std::to_string(r.shard_id) +
         " num_shards=" + std::to_string(r.num_shards) + " " + ReaderCore::Save(State());
}

void ShardReaderOp::RestoreCheckpoint(const std::string& state) {
  char mode[16] = {0}, fingerprint[17] = {0};
  long long samples = -1, shards = -1, shard = -1, num_shards = -1;
  int used = 0;
  if (std::sscanf(state.c_str(), "mode=%15s samples=%lld shards=%lld fingerprint=%16s shard_id=%lld num_shards=%lld %n",
                  mode, &samples, &shards, fingerprint, &shard, &num_shards, &used) != 6) {
    throw InvalidArgument(spec().Describe() + ": checkpoint: expected \"mode=M samples=N shards=K fingerprint=F "
                          "shard_id=S num_shards=R epoch=E position=P\" for a shard reader, got \"" + state + "\"");
  }
  const std::string where = spec().Describe() + ": the checkpoint is of another pipeline: ";
  const std::string here = ShuffleModeName(order_options_.mode);
  if (here != mode) throw InvalidArgument(where + "it read with shuffle: " + mode + ", this node with shuffle: " + here);
  if (samples != index_.num_samples() || shards != index_.num_shards()) {
    throw InvalidArgument(where + "its data set had " + std::to_string(samples) + " samples in " +
                          std::to_string(shards) + " shards, this one has " + std::to_string(index_.num_samples()) +
                          " in " + std::to_string(index_.num_shards()));
  }
  char have[17];
  std::snprintf(have, sizeof(have), "%016" PRIx64, index_.Fingerprint());
  if (std::string(have) != fingerprint) {
    throw InvalidArgument(where + "its data set's sample keys (fingerprint " + fingerprint +
                          ") differ from this one's (" + have + ")");
  }
  const ReaderOptions& r = order_options_.reader;
  if (shard != r.shard_id || num_shards != r.num_shards) {
    throw InvalidArgument(where + "it read shard_id " + std::to_string(shard) + " of num_shards " +
                          std::to_string(num_shards) + ", this node reads shard_id " + std::to_string(r.shard_id) +
                          " of num_shards " + std::to_string(r.num_shards));
  }
  RestoreState(ReaderCore::Parse(state.substr(static_cast<size_t>(used))));
}

void ShardReaderOp::ListShards(int64_t n, const std::function<void(int64_t)>& list) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::atomic<int64_t> next{0};
  const auto work = [&] {
    for (int64_t i; (i = next++) < n;) {
      try {
        list(i);
      } catch (...) {
        errors[static_cast<size_t>(i)] = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> threads;
    for (int64_t t = 1; t < std::min<int64_t>(kListThreads, n); ++t) threads.emplace_back(work);
    work();
  }  // joined
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace conveyor::ops
