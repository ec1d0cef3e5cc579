#include "operators/readers/io/curl_transfer.h"

#include <curl/curl.h>
#include <strings.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <mutex>
#include <string_view>

#include "core/error.h"

namespace conveyor::ops::http {
namespace {

// Idle handles kept for reuse; each holds its open connections. More than this are closed.
constexpr size_t kMaxIdleHandles = 64;

// Easy handles shared by every source of the process. Never destroyed: a read-ahead thread of a
// source that outlives main() must still find it, and the OS reclaims the sockets at exit.
class HandlePool {
 public:
  static HandlePool& Instance() {
    static HandlePool* const pool = new HandlePool();
    return *pool;
  }

  CURL* Take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        CURL* handle = idle_.back();  // the most recently used one: its connection is warmest
        idle_.pop_back();
        return handle;
      }
    }
    CURL* handle = curl_easy_init();
    if (handle == nullptr) throw InvalidArgument("libcurl: curl_easy_init failed (out of memory?)");
    return handle;
  }

  // curl_easy_reset drops every option (and our pointers into a finished request's stack) but
  // keeps the live connections, the DNS cache and TLS sessions.
  void Give(CURL* handle) {
    curl_easy_reset(handle);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (idle_.size() < kMaxIdleHandles) {
        idle_.push_back(handle);
        return;
      }
    }
    curl_easy_cleanup(handle);
  }

  CURLSH* share() const { return share_; }

 private:
  HandlePool() {
    share_ = curl_share_init();
    if (share_ == nullptr) return;  // requests then work unshared
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &HandlePool::Lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &HandlePool::Unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
    static_cast<HandlePool*>(self)->share_locks_[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* self) {
    static_cast<HandlePool*>(self)->share_locks_[data].unlock();
  }

  std::mutex mutex_;
  std::vector<CURL*> idle_;
  CURLSH* share_ = nullptr;
  std::mutex share_locks_[CURL_LOCK_DATA_LAST];
};

class HandleLease {
 public:
  HandleLease() : handle_(HandlePool::Instance().Take()) {}
  ~HandleLease() { HandlePool::Instance().Give(handle_); }
  HandleLease(const HandleLease&) = delete;  // one request, one handle
  HandleLease& operator=(const HandleLease&) = delete;
  CURL* get() const { return handle_; }

 private:
  CURL* handle_;
};

struct Transfer {
  const Request* request;
  Response* response;
  bool body_started = false;
  int64_t body_position = 0;  // file position of the next body byte
};

int64_t ParseInt(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  int64_t value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  (void)end;
  return error == std::errc() ? value : -1;
}

bool StartsWithNoCase(std::string_view line, std::string_view prefix) {
  return line.size() >= prefix.size() && strncasecmp(line.data(), prefix.data(), prefix.size()) == 0;
}

// "bytes a-b/total", "bytes */total", "bytes a-b/*".
void ParseContentRange(std::string_view value, Response& response) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (!StartsWithNoCase(value, "bytes")) return;
  value.remove_prefix(5);
  const size_t slash = value.find('/');
  if (slash == std::string_view::npos) return;
  const std::string_view span = value.substr(0, slash);
  const size_t dash = span.find('-');
  if (dash != std::string_view::npos) response.range_start = ParseInt(span.substr(0, dash));
  response.range_total = ParseInt(value.substr(slash + 1));
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  Response& response = *transfer->response;
  std::string_view line(data, size * count);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (StartsWithNoCase(line, "HTTP/")) {  // a new response (after a redirect): forget the last one's
    const size_t space = line.find(' ');
    response.status = space == std::string_view::npos ? 0 : ParseInt(line.substr(space + 1, 3));
    response.range_start = response.range_total = response.content_length = -1;
  } else if (StartsWithNoCase(line, "content-range:")) {
    ParseContentRange(line.substr(14), response);
  } else if (StartsWithNoCase(line, "content-length:")) {
    response.content_length = ParseInt(line.substr(15));
  }
  return size * count;
}

// Returning less than `length` stops the transfer (CURLE_WRITE_ERROR): done when nothing more of
// the body is wanted.
size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const Request& request = *transfer->request;
  Response& response = *transfer->response;
  const auto length = static_cast<int64_t>(size * count);
  if (response.status == 200 && request.whole != nullptr) {
    const int64_t grown = static_cast<int64_t>(request.whole->size()) + length;
    if (std::max(grown, response.content_length) > request.whole_limit) {
      response.over_limit = true;
      return 0;
    }
    request.whole->insert(request.whole->end(), data, data + length);
    return static_cast<size_t>(length);
  }
  if (response.status != 200 && response.status != 206) return static_cast<size_t>(length);  // error page
  if (!transfer->body_started) {
    transfer->body_started = true;
    transfer->body_position = response.status == 206 ? response.range_start : 0;
  }
  if (transfer->body_position < 0) return static_cast<size_t>(length);  // a 206 without Content-Range
  const int64_t chunk_begin = transfer->body_position;
  const int64_t chunk_end = chunk_begin + length;
  transfer->body_position = chunk_end;
  const int64_t want_begin = request.offset + response.received;
  const int64_t want_end = request.offset + request.bytes;
  if (chunk_begin <= want_begin && chunk_end > want_begin) {
    const int64_t copy_end = std::min(chunk_end, want_end);
    std::memcpy(request.dst + (want_begin - request.offset), data + (want_begin - chunk_begin),
                static_cast<size_t>(copy_end - want_begin));
    response.received += copy_end - want_begin;
  }
  return chunk_end > want_end ? 0 : static_cast<size_t>(length);
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

void SetOptions(CURL* handle, const Request& request, Transfer& transfer, char* error_buffer,
                const std::string& range) {
  const FetchOptions& options = *request.options;
  curl_easy_setopt(handle, CURLOPT_URL, request.url->c_str());
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);  // signed object-store URLs redirect
  curl_easy_setopt(handle, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);        // timeouts without SIGALRM: threads
  curl_easy_setopt(handle, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout_ms));
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(options.request_timeout_ms));
  curl_easy_setopt(handle, CURLOPT_USERAGENT, "conveyor");
  curl_easy_setopt(handle, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(handle, CURLOPT_BUFFERSIZE, 256L << 10);  // 16x fewer OnBody calls on a block
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &transfer);
  if (!options.ca_file.empty()) curl_easy_setopt(handle, CURLOPT_CAINFO, options.ca_file.c_str());
  if (CURLSH* share = HandlePool::Instance().share()) curl_easy_setopt(handle, CURLOPT_SHARE, share);
  if (request.cancel != nullptr) {
    curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(handle, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(request.cancel));
    curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
  }
}

}  // namespace

void EnsureCurlInitialized() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);  // magic static: once, thread-safe
  if (code != CURLE_OK) {
    throw InvalidArgument(std::string("libcurl: curl_global_init failed: ") + curl_easy_strerror(code));
  }
}

Response Perform(const Request& request) {
  EnsureCurlInitialized();
  Response response;
  Transfer transfer{&request, &response};
  char error_buffer[CURL_ERROR_SIZE] = {};
  const std::string range =
      std::to_string(request.offset) + "-" + std::to_string(request.offset + request.bytes - 1);
  HandleLease lease;
  SetOptions(lease.get(), request, transfer, error_buffer, range);
  const CURLcode code = curl_easy_perform(lease.get());
  response.curl_code = code;
  if (code == CURLE_ABORTED_BY_CALLBACK) response.cancelled = true;
  if (code != CURLE_OK) {
    response.curl_error = curl_easy_strerror(code);
    if (error_buffer[0] != '\0') response.curl_error += std::string(": ") + error_buffer;
  }
  return response;
}

}  // namespace conveyor::ops::http
