// readers.tfrecord's costs, from the page cache: CRC32C (SSE4.2 vs slicing-by-8), the header scan a
// reader without index_path does at construction (records/s, MB/s of file covered), parsing a
// tfrecord2idx index, and the reader itself at batch 256 on 2,048 Examples of a 40 KB "JPEG" +
// label in 8 files (readers.file's reader_bench uses the same sizes), with 1 and 2 threads, in
// file order, shuffle: samples (exact permutation, random reads) and shuffle: shards.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/op/harness.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/tfrecord/crc32c.h"
#include "operators/readers/tfrecord/tf_example.pb.h"
#include "operators/readers/tfrecord/tfrecord_format.h"

namespace conveyor {
namespace {

std::string BenchDir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/conveyor_tfrecord_bench";
  std::filesystem::create_directories(dir);
  return dir;
}

// `files` TFRecord files of `records` Examples each (image/encoded: `bytes` random bytes, label),
// with their indexes; written once per process.
std::vector<std::string> Dataset(int files, int records, size_t bytes) {
  std::vector<std::string> paths;
  std::mt19937 rng(1);
  std::string payload(bytes, '\0');
  for (int f = 0; f < files; ++f) {
    const std::string path = BenchDir() + "/d" + std::to_string(bytes) + "-" + std::to_string(f) + ".tfrecord";
    paths.push_back(path);
    if (std::filesystem::exists(path + ".idx")) continue;
    std::ofstream out(path, std::ios::binary);
    std::vector<ops::TfRecordSpan> spans;
    int64_t offset = 0;
    for (int r = 0; r < records; ++r) {
      for (char& c : payload) c = static_cast<char>(rng());
      tfexample::Example example;
      tfexample::FeatureEntry* image = example.mutable_features()->add_feature();
      image->set_key("image/encoded");
      image->mutable_value()->mutable_bytes_list()->add_value(payload);
      tfexample::FeatureEntry* label = example.mutable_features()->add_feature();
      label->set_key("image/class/label");
      label->mutable_value()->mutable_int64_list()->add_value(r);
      const std::string data = example.SerializeAsString();
      const std::string framed =
          ops::FrameTfRecord({reinterpret_cast<const uint8_t*>(data.data()), data.size()});
      out << framed;
      spans.push_back({offset, static_cast<int64_t>(framed.size()), 0});
      offset += static_cast<int64_t>(framed.size());
    }
    std::ofstream(path + ".idx") << ops::FormatTfRecordIndex(spans);
  }
  return paths;
}

void BM_Crc32c(benchmark::State& state) {
  const bool hardware = state.range(0) == 1;
  if (hardware && !ops::Crc32cHasHardware()) return state.SkipWithError("no SSE4.2");
  std::vector<uint8_t> data(1 << 20);
  std::mt19937 rng(2);
  for (uint8_t& b : data) b = static_cast<uint8_t>(rng());
  for (auto _ : state) {
    benchmark::DoNotOptimize(hardware ? ops::Crc32cHardware(data.data(), data.size())
                                      : ops::Crc32cPortable(data.data(), data.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(data.size()));
  state.SetLabel(hardware ? "sse4.2" : "slicing-by-8");
}
BENCHMARK(BM_Crc32c)->Arg(0)->Arg(1);

// The scan of one ~64 MB file of records of range(0) bytes.
void BM_Scan(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const int records = static_cast<int>((64 << 20) / (bytes + 40));
  const std::string path = Dataset(1, records, bytes)[0];
  const auto source = ops::OpenByteSource(path);
  int64_t found = 0;
  for (auto _ : state) found += static_cast<int64_t>(ops::ScanTfRecords(*source).size());
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(found), benchmark::Counter::kIsRate);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) *
                                                  static_cast<double>(source->Size()) / 1e6,
                                              benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Scan)->Arg(100)->Arg(1 << 10)->Arg(40 << 10)->Arg(110 << 10)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ParseIndex(benchmark::State& state) {
  std::vector<ops::TfRecordSpan> spans;
  for (int64_t r = 0; r < 100000; ++r) spans.push_back({r * 40996, 40996, 0});
  const std::string text = ops::FormatTfRecordIndex(spans);
  for (auto _ : state) benchmark::DoNotOptimize(ops::ParseTfRecordIndex(text, "bench.idx"));
  state.counters["lines/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * 1e5,
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseIndex)->Unit(benchmark::kMillisecond);

// range(0): threads; range(1): 0 file order, 1 shuffle: samples, 2 shuffle: shards.
void BM_TfRecordReader(benchmark::State& state) {
  constexpr int kBatch = 256;
  constexpr size_t kBytes = 40 << 10;
  const std::vector<std::string> paths = Dataset(8, 256, kBytes);
  std::vector<std::string> indexes;
  for (const std::string& p : paths) indexes.push_back(p + ".idx");
  OpSpec spec("readers.tfrecord", "reader");
  spec.SetArg("path", paths).SetArg("index_path", indexes).AddOutput("jpegs").AddOutput("labels");
  spec.SetArg("features", std::vector<std::string>{"image/encoded: bytes", "image/class/label: int64[1] = -1"});
  const int64_t mode = state.range(1);
  if (mode > 0) spec.SetArg("random_shuffle", true).SetArg("shuffle", mode == 1 ? "samples" : "shards");
  OpHarness h(spec, Device::kCpu, kBatch);
  h.set_num_threads(static_cast<int>(state.range(0)));
  for (int i = 0; i < 8; ++i) h.Run();  // warm: page cache, buffers
  for (auto _ : state) h.Run();
  state.counters["records/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch,
                                                   benchmark::Counter::kIsRate);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch * kBytes / 1e6,
                                              benchmark::Counter::kIsRate);
  state.SetLabel(mode == 0 ? "file order" : mode == 1 ? "shuffle: samples" : "shuffle: shards");
}
BENCHMARK(BM_TfRecordReader)
    ->ArgsProduct({{1, 2}, {0, 1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
