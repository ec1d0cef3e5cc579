// HttpSource: the ByteSource of an http:// or https:// URL (OpenByteSource picks it for URLs).
//
//   Open ──> one request, `Range: bytes=0-0` (HttpFetcher::Open): the size from Content-Range
//   ReadAt ─> BlockCache: random reads are range requests of exactly the bytes asked; a sequential
//             reader's blocks are fetched ahead on two threads (block_cache.h)
//             └─> HttpFetcher::Read: retries with back-off, at most max_connections requests in
//                 flight, pooled keep-alive connections (http_fetcher.h, curl_transfer.h)
//
// | FetchOptions         | effect                                                                  |
// |----------------------|-------------------------------------------------------------------------|
// | read_ahead_bytes     | how far ahead of a sequential reader blocks are fetched (0: never)       |
// | memory_limit_bytes   | hard bound on the bytes this source's blocks hold at once               |
// | max_connections      | requests this source has in flight at once (readers and read-ahead)     |
// | max_retries, retry_base_ms, connect_timeout_ms, request_timeout_ms | the retry rule (http_fetcher.h) |
// | ca_file              | PEM bundle that verifies https servers instead of the system's          |
//
// Blocks are read_ahead_bytes / 8 long (at least 64 KiB, at most 4 MiB, and at most half the
// memory limit); with under 32 KiB of memory_limit_bytes nothing is cached or read ahead.
//
// A server that ignores Range (answers the probe 200 with the whole body) is read whole into
// memory when the body fits memory_limit_bytes, then served from there; a larger one is refused
// at open, naming the size and the limit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"

namespace conveyor::ops {

namespace http {
class BlockCache;
class HttpFetcher;
}  // namespace http

// What a source has done so far; tests assert on it and benchmarks print it.
struct HttpSourceStats {
  int64_t requests = 0;           // HTTP requests, the probe included
  int64_t failed_attempts = 0;    // requests that failed (retried or final)
  int64_t bytes_received = 0;     // bytes of the asked ranges that arrived
  int64_t block_bytes = 0;        // 0: no cache (too little memory, or a whole download)
  int64_t blocks_fetched = 0;
  int64_t read_ahead_blocks = 0;  // blocks queued ahead of a sequential reader
  int64_t sequential_reads = 0;
  int64_t held_bytes = 0;         // cache blocks, or the whole body of a server without ranges
  int64_t peak_held_bytes = 0;    // never above memory_limit_bytes
  bool ranges = true;             // false: the server ignores Range, the body is held whole
};

class HttpSource final : public ByteSource {
 public:
  // Probes the URL (one request, with retries). Throws InvalidArgument naming it: HTTP status or
  // curl error and attempts, no length, no ranges and too large, a bad FetchOptions value.
  static std::unique_ptr<HttpSource> Open(const std::string& url, const FetchOptions& options);
  ~HttpSource() override;
  HttpSource(const HttpSource&) = delete;  // read-ahead threads point at it
  HttpSource& operator=(const HttpSource&) = delete;

  const std::string& name() const override { return url_; }
  int64_t Size() const override { return size_; }
  void ReadAt(int64_t offset, void* dst, int64_t bytes) const override;

  HttpSourceStats stats() const;

 private:
  HttpSource(std::string url, const FetchOptions& options);

  std::string url_;
  int64_t size_ = 0;
  std::unique_ptr<http::HttpFetcher> fetcher_;
  std::unique_ptr<http::BlockCache> cache_;  // null: whole body, or no memory to cache in
  std::vector<uint8_t> whole_;               // the body of a server without range support
  bool ranges_ = true;
};

}  // namespace conveyor::ops
