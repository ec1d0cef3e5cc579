// Fetch layer throughput: a 256 MiB file scanned front to back (the access of a tar reader without
// an index) through HttpSource from the loopback test server, with and without read-ahead, beside
// the same scan through the local pread source; and random 64 KiB reads from 4 threads (an indexed
// reader's access). MB/s is the benchmark's bytes_per_second. The server is http_test_server.py
// (Python, sendfile): on a small machine it shares the cores with the client.
//   bazel run -c opt //tests/operators/readers/io:fetch_bench
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/readers/io/http_source.h"
#include "tests/operators/readers/io/test_http_server.h"

namespace conveyor::ops::testing {
namespace {

constexpr int64_t kFileBytes = 256 << 20;

struct Served {
  TempDir dir;
  std::unique_ptr<TestHttpServer> server;
  Served() {
    WriteFile(dir.path() + "/data.bin", RandomBytes(kFileBytes));
    server = TestHttpServer::Start(dir.path());
  }
};

Served& Data() {
  static Served* const served = new Served();  // one server for the whole run
  return *served;
}

// Each iteration opens the source afresh: a source's cache could otherwise hold the whole file.
void Scan(benchmark::State& state, const std::string& path_or_url, const FetchOptions& options) {
  const int64_t read_bytes = state.range(0);
  std::vector<uint8_t> out(static_cast<size_t>(read_bytes));
  int64_t requests = 0;
  for (auto _ : state) {
    const std::unique_ptr<ByteSource> source = OpenByteSource(path_or_url, options);
    for (int64_t offset = 0; offset + read_bytes <= kFileBytes; offset += read_bytes) {
      source->ReadAt(offset, out.data(), read_bytes);
    }
    if (const auto* http = dynamic_cast<const HttpSource*>(source.get())) requests = http->stats().requests;
  }
  state.SetBytesProcessed(state.iterations() * kFileBytes);
  state.counters["requests"] = static_cast<double>(requests);
}

// Args: read size, read_ahead_bytes (0: off).
void BM_HttpScan(benchmark::State& state) {
  FetchOptions options;
  options.read_ahead_bytes = state.range(1);
  Scan(state, Data().server->Url("data.bin"), options);
}
BENCHMARK(BM_HttpScan)
    ->Args({64 << 10, 0})
    ->Args({4 << 10, 8 << 20})
    ->Args({64 << 10, 8 << 20})
    ->Args({64 << 10, 32 << 20})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_LocalScan(benchmark::State& state) { Scan(state, Data().dir.path() + "/data.bin", FetchOptions{}); }
BENCHMARK(BM_LocalScan)->Arg(64 << 10)->Unit(benchmark::kMillisecond)->UseRealTime();

// Random reads never fill the cache (only sequential runs do), so one source serves every iteration.
void BM_HttpRandom64K(benchmark::State& state) {
  static std::unique_ptr<HttpSource> source;
  if (state.thread_index() == 0) source = HttpSource::Open(Data().server->Url("data.bin"), FetchOptions{});
  std::mt19937_64 rng(state.thread_index());
  std::vector<uint8_t> out(64 << 10);
  for (auto _ : state) {
    const int64_t offset = std::uniform_int_distribution<int64_t>(0, kFileBytes - (64 << 10))(rng);
    source->ReadAt(offset, out.data(), 64 << 10);
  }
  state.SetBytesProcessed(state.iterations() * (64 << 10));
}
BENCHMARK(BM_HttpRandom64K)->Threads(4)->UseRealTime();

}  // namespace
}  // namespace conveyor::ops::testing

BENCHMARK_MAIN();
