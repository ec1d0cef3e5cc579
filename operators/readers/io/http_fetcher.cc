#include "operators/readers/io/http_fetcher.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "core/error.h"
#include "operators/readers/io/curl_transfer.h"

namespace conveyor::ops::http {
namespace {

constexpr int64_t kMaxBackoffMs = 5000;

// Failures that say nothing about the resource itself: the same request may well succeed later.
bool IsTransientCurlError(int code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_HTTP2:
    case CURLE_PARTIAL_FILE:          // the connection closed mid-body
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SSL_CONNECT_ERROR:     // a handshake cut short; a bad certificate is CURLE_PEER_FAILED_VERIFICATION
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

bool IsTransientStatus(long status) { return status == 429 || (status >= 500 && status <= 599); }

// How a request that did not deliver everything asked ended.
struct Verdict {
  enum Kind { kProgress, kRetry, kFatal } kind;
  std::string what;  // for the error message: "HTTP 503", "curl error 28 (...)"
};

std::string CurlFailure(const Response& response) {
  return "curl error " + std::to_string(response.curl_code) + " (" + response.curl_error + ")";
}

Verdict JudgeRead(const Response& response, int64_t expected_size) {
  if (response.curl_code != CURLE_OK && response.curl_code != CURLE_WRITE_ERROR) {
    return {IsTransientCurlError(response.curl_code) ? Verdict::kRetry : Verdict::kFatal, CurlFailure(response)};
  }
  const long status = response.status;
  const std::string http = "HTTP " + std::to_string(status);
  if (status == 206 && response.range_total >= 0 && expected_size >= 0 && response.range_total != expected_size) {
    return {Verdict::kFatal, "the resource changed size since it was opened (" + http + " says " +
                                 std::to_string(response.range_total) + " bytes, it had " +
                                 std::to_string(expected_size) + ")"};
  }
  if (status == 206 || status == 200) {
    if (response.received > 0) return {Verdict::kProgress, http};
    const std::string answered =
        status == 206 && response.range_start >= 0 ? " (Content-Range from " + std::to_string(response.range_start) + ")"
                                                   : "";
    return {Verdict::kRetry, http + " without the asked bytes" + answered};
  }
  return {IsTransientStatus(status) ? Verdict::kRetry : Verdict::kFatal, http};
}

std::string Attempts(int64_t attempts) {
  return std::to_string(attempts) + (attempts == 1 ? " attempt" : " attempts");
}

}  // namespace

class HttpFetcher::Slot {
 public:
  explicit Slot(HttpFetcher& fetcher) : fetcher_(fetcher) {
    std::unique_lock<std::mutex> lock(fetcher_.slots_mutex_);
    fetcher_.slot_freed_.wait(lock, [&] { return fetcher_.slots_in_use_ < fetcher_.options_.max_connections; });
    ++fetcher_.slots_in_use_;
  }
  ~Slot() {
    {
      std::lock_guard<std::mutex> lock(fetcher_.slots_mutex_);
      --fetcher_.slots_in_use_;
    }
    fetcher_.slot_freed_.notify_one();
  }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

 private:
  HttpFetcher& fetcher_;
};

HttpFetcher::HttpFetcher(std::string url, FetchOptions options) : url_(std::move(url)), options_(std::move(options)) {
  const std::pair<const char*, int64_t> at_least_zero[] = {
      {"max_retries", options_.max_retries}, {"retry_base_ms", options_.retry_base_ms},
      {"read_ahead_bytes", options_.read_ahead_bytes}, {"memory_limit_bytes", options_.memory_limit_bytes}};
  for (const auto& [name, value] : at_least_zero) {
    if (value < 0) throw InvalidArgument(Quoted() + ": fetch option " + name + " must be >= 0, got " + std::to_string(value));
  }
  const std::pair<const char*, int64_t> at_least_one[] = {{"connect_timeout_ms", options_.connect_timeout_ms},
                                                          {"request_timeout_ms", options_.request_timeout_ms},
                                                          {"max_connections", options_.max_connections}};
  for (const auto& [name, value] : at_least_one) {
    if (value < 1) throw InvalidArgument(Quoted() + ": fetch option " + name + " must be >= 1, got " + std::to_string(value));
  }
}

Request HttpFetcher::MakeRequest(int64_t offset, int64_t bytes, uint8_t* dst, const std::atomic<bool>* cancel) const {
  Request request;
  request.url = &url_;
  request.options = &options_;
  request.offset = offset;
  request.bytes = bytes;
  request.dst = dst;
  request.cancel = cancel;
  return request;
}

Response HttpFetcher::Send(const Request& request) {
  Response response;
  {
    Slot slot(*this);
    response = Perform(request);
  }
  counters_.requests.fetch_add(1);
  counters_.bytes_received.fetch_add(response.received);
  return response;
}

int64_t HttpFetcher::BackoffMs(int64_t failures) const {
  const int64_t shift = std::min<int64_t>(failures - 1, 20);
  return std::min(kMaxBackoffMs, options_.retry_base_ms << shift);
}

bool HttpFetcher::SleepUnlessCancelled(int64_t ms, const std::atomic<bool>* cancel) {
  // Short naps: a closing source's read-ahead thread must not hold its destructor for seconds.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    if (cancel != nullptr && cancel->load()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(10), until - std::chrono::steady_clock::now()));
  }
  return cancel == nullptr || !cancel->load();
}

HttpFetcher::Probe HttpFetcher::Open(int64_t whole_limit) {
  int64_t attempts = 0;
  for (;;) {
    Probe probe;
    uint8_t first_byte = 0;
    Request request = MakeRequest(0, 1, &first_byte, nullptr);
    request.whole = &probe.whole;
    request.whole_limit = whole_limit;
    const Response response = Send(request);
    ++attempts;
    const long status = response.status;
    std::string failure;
    bool transient = false;
    if (status == 200 && response.over_limit) {
      const std::string size = response.content_length >= 0 ? std::to_string(response.content_length) + " bytes"
                                                             : "more than " + std::to_string(whole_limit) + " bytes";
      throw InvalidArgument(Quoted() + ": cannot open: the server does not answer range requests (HTTP 200 to "
                            "\"Range: bytes=0-0\") and the whole resource (" + size +
                            ") exceeds memory_limit_bytes (" + std::to_string(whole_limit) + ")");
    }
    // A 206 longer than the one byte asked was cut short by us (CURLE_WRITE_ERROR): still an answer.
    const bool answered = response.curl_code == CURLE_OK ||
                          (response.curl_code == CURLE_WRITE_ERROR && status == 206);
    if (!answered) {
      failure = CurlFailure(response);
      transient = IsTransientCurlError(response.curl_code);
    } else if ((status == 206 || status == 416) && response.range_total >= 0) {
      probe.size = response.range_total;
      size_ = probe.size;
      probe.whole.clear();
      return probe;
    } else if (status == 206) {
      throw InvalidArgument(Quoted() + ": cannot open: HTTP 206 without the resource's length (Content-Range total)");
    } else if (status == 200) {
      probe.ranges = false;
      probe.size = static_cast<int64_t>(probe.whole.size());
      size_ = probe.size;
      counters_.bytes_received.fetch_add(probe.size);
      return probe;
    } else {
      failure = "HTTP " + std::to_string(status);
      transient = IsTransientStatus(status);
    }
    counters_.failed_attempts.fetch_add(1);
    if (!transient || attempts > options_.max_retries) {
      throw InvalidArgument(Quoted() + ": cannot open: " + failure + " after " + Attempts(attempts));
    }
    SleepUnlessCancelled(BackoffMs(attempts), nullptr);
  }
}

void HttpFetcher::Read(int64_t offset, int64_t bytes, uint8_t* dst, const std::atomic<bool>* cancel) {
  const auto expected = [&] {
    return Quoted() + ": expected " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset);
  };
  int64_t got = 0;
  int64_t attempts = 0;
  int64_t failures = 0;
  while (got < bytes) {
    if (cancel != nullptr && cancel->load()) throw InvalidArgument(expected() + ": cancelled (the source closed)");
    const Response response = Send(MakeRequest(offset + got, bytes - got, dst + got, cancel));
    ++attempts;
    got += response.received;
    if (got == bytes) return;
    if (response.cancelled) throw InvalidArgument(expected() + ": cancelled (the source closed)");
    const Verdict verdict = JudgeRead(response, size_);
    if (verdict.kind == Verdict::kProgress) continue;  // a shorter, complete answer: ask for the rest now
    counters_.failed_attempts.fetch_add(1);
    if (verdict.kind == Verdict::kFatal || failures >= options_.max_retries) {
      const std::string arrived =
          got > 0 ? " (" + std::to_string(got) + " of " + std::to_string(bytes) + " bytes arrived)" : "";
      throw InvalidArgument(expected() + ": " + verdict.what + " after " + Attempts(attempts) + arrived);
    }
    ++failures;
    if (!SleepUnlessCancelled(BackoffMs(failures), cancel)) {
      throw InvalidArgument(expected() + ": cancelled (the source closed)");
    }
  }
}

}  // namespace conveyor::ops::http
