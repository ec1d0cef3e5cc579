// readers.file throughput from the page cache: files/s and MB/s at batch 256 with 1..16 CPU
// threads, on 2,048 files of 40 KB (about the size of a 500x375 JPEG at quality 90) written to a
// temporary folder and read once before timing. Reading is open + fstat + pread + close per file.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/op/harness.h"

namespace conveyor {
namespace {

constexpr int kFiles = 2048;
constexpr size_t kFileBytes = 40 << 10;

const std::string& Dataset() {
  static const std::string root = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp ? tmp : "/tmp") + "/conveyor_reader_bench";
    std::filesystem::create_directories(dir + "/class");
    std::mt19937 rng(1);
    std::vector<char> data(kFileBytes);
    for (int i = 0; i < kFiles; ++i) {
      for (char& c : data) c = static_cast<char>(rng());
      std::ofstream(dir + "/class/" + std::to_string(i) + ".jpg", std::ios::binary).write(data.data(), kFileBytes);
    }
    return dir;
  }();
  return root;
}

void BM_FileReader(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  constexpr int kBatch = 256;
  OpHarness h(OpSpec("readers.file", "reader").AddOutput("data").AddOutput("labels").SetArg("file_root", Dataset()),
              Device::kCpu, kBatch);
  h.set_num_threads(threads);
  for (int i = 0; i < kFiles / kBatch; ++i) h.Run();  // warm: page cache, output buffers
  for (auto _ : state) h.Run();
  state.counters["files/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                 benchmark::Counter::kIsRate);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch * kFileBytes / 1e6,
                                              benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FileReader)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
