// The fixture of the fetch layer's HTTP tests: one loopback server per test binary (started once,
// counters reset before each test), files of fresh random bytes served from its folder.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/readers/io/http_source.h"
#include "tests/operators/readers/io/test_http_server.h"

namespace conveyor::ops::testing {

class HttpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    server_ = TestHttpServer::Start(dir_->path()).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
    server_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override { server_->Reset(); }

  // Serves `size` fresh random bytes as /<name>; returns them.
  static std::vector<uint8_t> AddFile(const std::string& name, size_t size) {
    std::vector<uint8_t> bytes = RandomBytes(size);
    WriteFile(dir_->path() + "/" + name, bytes);
    return bytes;
  }

  // Fast retries, timeouts far above a loopback request's time even under a sanitizer.
  static FetchOptions Fast() {
    FetchOptions options;
    options.max_retries = 2;
    options.retry_base_ms = 1;
    options.connect_timeout_ms = 5000;
    options.request_timeout_ms = 10000;
    return options;
  }

  static std::unique_ptr<HttpSource> Open(const std::string& path, const FetchOptions& options = Fast()) {
    return HttpSource::Open(server_->Url(path), options);
  }

  static double SecondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  static inline TempDir* dir_ = nullptr;
  static inline TestHttpServer* server_ = nullptr;
};

}  // namespace conveyor::ops::testing
