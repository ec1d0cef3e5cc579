// The fetch layer's tests talk to a real HTTP(S) server on the loopback interface:
// http_test_server.py (Range support, fault injection, request counters; see its docstring),
// started here on a port the system picks and killed when the object goes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"

namespace conveyor::ops::testing {

class TestHttpServer {
 public:
  // Serves `root`; with cert and key (PEM files) over TLS. Throws std::runtime_error on failure.
  static std::unique_ptr<TestHttpServer> Start(const std::string& root, const std::string& cert = "",
                                               const std::string& key = "");
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;  // one process, one owner
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port>/<path>" ("https://" for a TLS server); path without the leading '/'.
  std::string Url(const std::string& path) const;

  struct Counts {
    int64_t requests = 0;
    int64_t bytes = 0;  // body bytes sent
  };
  void Reset();           // forgets counts, log and fault counters
  Counts counts() const;  // file requests since the last Reset
  std::string Log() const;

 private:
  TestHttpServer() = default;
  std::string Control(const std::string& path) const;

  pid_t pid_ = -1;
  int stdin_fd_ = -1;  // closing it (or dying) stops the server
  int port_ = 0;
  std::string scheme_ = "http";
};

// A folder under TEST_TMPDIR (or /tmp) that is removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Fresh random bytes (a new seed each run, printed so a failure can be replayed).
std::vector<uint8_t> RandomBytes(size_t size);
void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes);

// A free loopback port that nothing listens on (bound, read, closed).
int UnusedPort();

// The message of the InvalidArgument `call` throws ("" when it throws none).
template <typename Call>
std::string ErrorOf(Call&& call) {
  try {
    call();
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "";
}

}  // namespace conveyor::ops::testing
