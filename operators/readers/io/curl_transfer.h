// One HTTP request through libcurl, with no retries: the primitive the fetch layer's retry rule
// (http_fetcher.h) is built on. Easy handles come from a process-wide pool and go back to it with
// their keep-alive connections open, so consecutive requests to a server (the next block, the next
// shard) skip the TCP and TLS handshakes; DNS answers and TLS sessions are shared between handles.
//
// A request asks `Range: bytes=offset-(offset+bytes-1)` and writes the wanted bytes into `dst`,
// wherever they arrive in the body: a 206 at the asked start, a shorter 206 (the server caps its
// ranges), or a 200 with the whole file (a server that ignores Range; bytes before the range are
// skipped, and the transfer stops once the range is complete).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"

namespace conveyor::ops::http {

// curl_global_init, once per process and thread-safely; every request calls it first.
void EnsureCurlInitialized();

struct Request {
  const std::string* url = nullptr;
  const FetchOptions* options = nullptr;
  int64_t offset = 0;
  int64_t bytes = 0;       // > 0
  uint8_t* dst = nullptr;  // receives bytes [offset, offset + bytes)
  // When set, a 200 answer's whole body is collected here (up to whole_limit bytes) instead.
  std::vector<uint8_t>* whole = nullptr;
  int64_t whole_limit = 0;
  // When set and true, the transfer is aborted at its next progress callback (within ~1 s at most,
  // usually at once: curl calls it as data moves).
  const std::atomic<bool>* cancel = nullptr;
};

struct Response {
  int curl_code = 0;          // CURLcode; 0 when the exchange completed (any HTTP status)
  std::string curl_error;     // curl's text for curl_code, with its detail
  long status = 0;            // the final response's HTTP status; 0 when none arrived
  int64_t range_start = -1;   // Content-Range "bytes a-b/total" (206) or "bytes */total" (416)
  int64_t range_total = -1;   // -1: absent or "*"
  int64_t content_length = -1;
  int64_t received = 0;       // bytes written to dst: [offset, offset + received)
  bool over_limit = false;    // a 200's body grew past whole_limit (the transfer was stopped)
  bool cancelled = false;
};

// Performs `request` once. Never throws for network or HTTP failures: they are in the Response.
Response Perform(const Request& request);

}  // namespace conveyor::ops::http
