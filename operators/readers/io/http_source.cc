#include "operators/readers/io/http_source.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "operators/readers/io/block_cache.h"
#include "operators/readers/io/http_fetcher.h"

namespace conveyor::ops {
namespace {

constexpr int64_t kMinBlockBytes = 64 << 10;
constexpr int64_t kMaxBlockBytes = 4 << 20;
constexpr int64_t kSmallestCachedBlock = 16 << 10;  // below: requests would cost more than they save

// Blocks of read_ahead / 8: a window of eight keeps several requests' worth queued, while a block
// fetched for a run that turns out short wastes little.
bool PlanBlocks(const FetchOptions& options, http::BlockCache::Plan* plan) {
  if (options.read_ahead_bytes <= 0) return false;
  const int64_t block = std::min(std::clamp(options.read_ahead_bytes / 8, kMinBlockBytes, kMaxBlockBytes),
                                 options.memory_limit_bytes / 2);
  if (block < kSmallestCachedBlock) return false;
  plan->block_bytes = block;
  plan->max_ahead_blocks = std::max<int64_t>(1, options.read_ahead_bytes / block);
  plan->memory_limit_bytes = options.memory_limit_bytes;
  return true;
}

}  // namespace

HttpSource::HttpSource(std::string url, const FetchOptions& options)
    : url_(std::move(url)), fetcher_(std::make_unique<http::HttpFetcher>(url_, options)) {}

HttpSource::~HttpSource() = default;

std::unique_ptr<HttpSource> HttpSource::Open(const std::string& url, const FetchOptions& options) {
  std::unique_ptr<HttpSource> source(new HttpSource(url, options));
  http::HttpFetcher::Probe probe = source->fetcher_->Open(options.memory_limit_bytes);
  source->size_ = probe.size;
  source->ranges_ = probe.ranges;
  if (!probe.ranges) {
    source->whole_ = std::move(probe.whole);
    return source;
  }
  http::BlockCache::Plan plan;
  if (PlanBlocks(options, &plan)) {
    http::HttpFetcher* fetcher = source->fetcher_.get();
    source->cache_ = std::make_unique<http::BlockCache>(
        probe.size, plan, [fetcher](int64_t offset, int64_t bytes, uint8_t* dst, const std::atomic<bool>* cancel) {
          fetcher->Read(offset, bytes, dst, cancel);
        });
  }
  return source;
}

void HttpSource::ReadAt(int64_t offset, void* dst, int64_t bytes) const {
  if (offset < 0 || bytes < 0 || offset > size_ || bytes > size_ - offset) {
    throw InvalidArgument("\"" + url_ + "\": expected " + std::to_string(bytes) + " bytes at offset " +
                          std::to_string(offset) + ", the source holds " + std::to_string(size_));
  }
  if (bytes == 0) return;
  auto* out = static_cast<uint8_t*>(dst);
  if (!ranges_) {
    std::memcpy(out, whole_.data() + offset, static_cast<size_t>(bytes));
  } else if (cache_ != nullptr) {
    cache_->Read(offset, bytes, out);
  } else {
    fetcher_->Read(offset, bytes, out);
  }
}

HttpSourceStats HttpSource::stats() const {
  HttpSourceStats stats;
  const http::FetchCounters& counters = fetcher_->counters();
  stats.requests = counters.requests.load();
  stats.failed_attempts = counters.failed_attempts.load();
  stats.bytes_received = counters.bytes_received.load();
  stats.ranges = ranges_;
  if (!ranges_) {
    stats.held_bytes = stats.peak_held_bytes = static_cast<int64_t>(whole_.size());
  }
  if (cache_ != nullptr) {
    const http::BlockCache::Stats cache = cache_->stats();
    http::BlockCache::Plan plan;
    PlanBlocks(fetcher_->options(), &plan);
    stats.block_bytes = plan.block_bytes;
    stats.blocks_fetched = cache.blocks_fetched;
    stats.read_ahead_blocks = cache.read_ahead_blocks;
    stats.sequential_reads = cache.sequential_reads;
    stats.held_bytes = cache.held_bytes;
    stats.peak_held_bytes = cache.peak_held_bytes;
  }
  return stats;
}

}  // namespace conveyor::ops
