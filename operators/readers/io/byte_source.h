// ByteSource: random-access reads of one shard or file, local or remote — the one I/O seam every
// shard reader (readers.webdataset, readers.tfrecord) reads through, so an HTTP(S) URL works
// wherever a path does.
//
// | source               | how it reads                                                         |
// |----------------------|----------------------------------------------------------------------|
// | a path               | pread on a file descriptor opened once (thread-safe, no cache)       |
// | http:// or https://  | libcurl range requests through the fetch layer (http_source.h):      |
// |                      | read-ahead, retries with back-off, a bound on the memory it holds    |
//
// Every error is InvalidArgument naming the source (path or URL), and for a read the offset and the
// byte count asked: `shard "s3.tar": expected 4096 bytes at offset 1024, the source ends at 2000`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace conveyor::ops {

// How remote sources are fetched (ignored for local paths). Reader arguments map onto these.
struct FetchOptions {
  int64_t max_retries = 4;                  // a failed request (network error, 5xx, 429) is retried
  int64_t retry_base_ms = 100;              // back-off: base * 2^attempt, capped at 5 s
  int64_t connect_timeout_ms = 10000;
  int64_t request_timeout_ms = 60000;       // one request, start to end
  int64_t read_ahead_bytes = 8 << 20;       // a sequential reader's next block is fetched early
  int64_t memory_limit_bytes = 256 << 20;   // bytes a source's cache and read-ahead may hold
  int64_t max_connections = 8;              // requests one source has in flight at once
  std::string ca_file;                      // PEM CA bundle for https; empty: the system's
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // The path or URL as given; messages name it.
  virtual const std::string& name() const = 0;
  // Total bytes of the source.
  virtual int64_t Size() const = 0;
  // Reads exactly `bytes` at `offset` into `dst`, or throws InvalidArgument naming the source, the
  // offset and the count (past the end, a short read, a failed request after its retries).
  // Thread-safe: readers call it concurrently from the CPU stage's threads.
  virtual void ReadAt(int64_t offset, void* dst, int64_t bytes) const = 0;
};

// "http://..." or "https://..." (case-insensitive scheme).
bool IsUrl(const std::string& path_or_url);

// Opens a local path (pread) or a URL (the fetch layer). Throws InvalidArgument naming it when it
// cannot be opened (missing, not a regular file, HTTP status, no length).
std::unique_ptr<ByteSource> OpenByteSource(const std::string& path_or_url, const FetchOptions& options = {});

}  // namespace conveyor::ops
