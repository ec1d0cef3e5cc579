// The fetch layer's request policy for one URL: the retry rule, the bound on connections, the
// probe that finds a resource's size, and the wording of every error.
//
// Retry rule. A request is retried, after base * 2^k ms (k = 0, 1, ...; capped at 5 s), when
//   - the connection failed, was reset or dropped mid-body, or timed out (connect_timeout_ms,
//     request_timeout_ms), or a TLS handshake failed to complete;
//   - the server answered 5xx or 429.
// Any other 4xx, a TLS certificate that does not verify, or a malformed URL fails at once. After
// max_retries retries the read fails. Bytes that arrived before a failure are kept: the next
// request asks only for the remainder. A complete response that is shorter than asked (a server
// that caps its ranges) is no failure: the remainder is asked for at once, without back-off.
//
// Errors are InvalidArgument and read
//   "http://host/s0.tar": expected 4096 bytes at offset 1024: HTTP 503 after 5 attempts
//   "http://host/s0.tar": cannot open: HTTP 404 after 1 attempt
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/readers/io/curl_transfer.h"

namespace conveyor::ops::http {

// Counted over a fetcher's life (all threads); tests and benchmarks read them.
struct FetchCounters {
  std::atomic<int64_t> requests{0};        // HTTP requests sent, the probe included
  std::atomic<int64_t> failed_attempts{0}; // requests that failed and were retried or ended a read
  std::atomic<int64_t> bytes_received{0};  // bytes of asked ranges that arrived
};

class HttpFetcher {
 public:
  // What the probe learnt: the size and whether ranges work. Without range support the body came
  // whole (`whole`, at most the probe's limit).
  struct Probe {
    int64_t size = 0;
    bool ranges = true;
    std::vector<uint8_t> whole;
  };

  HttpFetcher(std::string url, FetchOptions options);
  HttpFetcher(const HttpFetcher&) = delete;  // the connection slots are shared by its readers
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  const std::string& url() const { return url_; }
  const FetchOptions& options() const { return options_; }

  // Asks `Range: bytes=0-0` (with the retry rule): a 206's Content-Range gives the size, a 416's
  // "bytes */0" an empty resource; a 200 means the server ignores ranges, and its body (when at
  // most `whole_limit` bytes) is kept. Throws "cannot open: ..." otherwise; a 200 larger than the
  // limit is refused with the reason.
  Probe Open(int64_t whole_limit);

  // Reads [offset, offset + bytes) into dst under the retry rule; throws as described above.
  // Thread-safe. `cancel` (may be null) stops it early with an InvalidArgument saying so.
  void Read(int64_t offset, int64_t bytes, uint8_t* dst, const std::atomic<bool>* cancel = nullptr);

  const FetchCounters& counters() const { return counters_; }

 private:
  class Slot;  // one of max_connections

  Request MakeRequest(int64_t offset, int64_t bytes, uint8_t* dst, const std::atomic<bool>* cancel) const;
  // Performs `request` within a connection slot and counts it.
  Response Send(const Request& request);

  // ms to wait before retry number `failures` (1-based).
  int64_t BackoffMs(int64_t failures) const;
  // Sleeps `ms`, returning early (false) when `cancel` turns true.
  static bool SleepUnlessCancelled(int64_t ms, const std::atomic<bool>* cancel);
  std::string Quoted() const { return "\"" + url_ + "\""; }

  const std::string url_;
  const FetchOptions options_;
  int64_t size_ = -1;  // set by Open; a later Content-Range total that differs means it changed
  FetchCounters counters_;
  std::mutex slots_mutex_;
  std::condition_variable slot_freed_;
  int64_t slots_in_use_ = 0;
};

}  // namespace conveyor::ops::http
