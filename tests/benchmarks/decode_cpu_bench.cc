// CPU decoding throughput (libjpeg-turbo through decoders.image) on photo-like 500x375 q90 4:2:0
// JPEGs of ~41 KB: the files in $CONVEYOR_BENCH_IMAGES (make_test_images --photos N; up to 2,048
// are loaded) or, without it, 256 generated in memory. Batches of 256 through the operator with 1..16
// CPU threads (images/s), decoders.image_random_crop with its default RN50-style windows, and the
// bare per-image function on one thread (images/s per thread, no operator around it).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/op/harness.h"
#include "core/op/registry.h"
#include "core/op/tbb_thread_pool.h"
#include "operators/decoders/decode_cpu.h"
#include "tools/testimages/test_images.h"

namespace conveyor {
namespace {

constexpr int kBatch = 256;

const std::vector<std::vector<uint8_t>>& Files() {
  static const std::vector<std::vector<uint8_t>> files = [] {
    std::vector<std::vector<uint8_t>> out;
    if (const char* dir = std::getenv("CONVEYOR_BENCH_IMAGES")) {
      std::vector<std::filesystem::path> paths;
      for (const auto& e : std::filesystem::directory_iterator(dir)) {
        if (e.path().extension() == ".jpg") paths.push_back(e.path());
      }
      std::sort(paths.begin(), paths.end());
      if (paths.size() > 2048) paths.resize(2048);
      for (const auto& p : paths) {
        std::ifstream in(p, std::ios::binary);
        out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    }
    if (out.empty()) {
      for (int i = 0; i < kBatch; ++i) out.push_back(testimages::MakePhotoJpeg(i));
    }
    return out;
  }();
  return files;
}

// Batches of kBatch files, cycling through the set.
std::vector<TensorListCPU> Batches() {
  const auto& files = Files();
  std::vector<TensorListCPU> batches;
  const size_t n = std::max<size_t>(1, files.size() / kBatch);
  for (size_t b = 0; b < n; ++b) {
    std::vector<Shape> shapes;
    std::vector<std::vector<uint8_t>> values;
    for (int i = 0; i < kBatch; ++i) {
      const auto& f = files[(b * kBatch + static_cast<size_t>(i)) % files.size()];
      shapes.push_back(Shape{static_cast<int64_t>(f.size())});
      values.push_back(f);
    }
    batches.push_back(MakeBatch<uint8_t>(shapes, values));
  }
  return batches;
}

// The operator as the executor drives it (Setup, allocate, RunCpu on a TBB arena), without
// OpHarness, whose output poisoning (a serial memset of every output byte) would be timed too.
void RunDecoder(benchmark::State& state, const std::string& op_name) {
  const int threads = static_cast<int>(state.range(0));
  const OpSpec spec = OpSpec(op_name, "dec").AddInput("encoded").AddOutput("images");
  spec.Validate();
  std::unique_ptr<Operator> op = OpRegistry::Global().Create(spec);
  TbbThreadPool pool(threads);
  Workspace ws(spec, kBatch);
  ws.set_thread_pool(&pool);
  const std::vector<TensorListCPU> batches = Batches();
  TensorListCPU out;
  size_t b = 0;
  int64_t iteration = 0;
  const auto run = [&] {
    ws.ClearInputs();
    ws.ClearOutputs();
    ws.AddInput(batches[b]);
    ws.set_iteration(iteration++);
    const OutputDescs descs = op->Setup(ws);
    out.Resize(descs[0].shapes, descs[0].dtype);
    out.set_layout(descs[0].layout);
    ws.AddOutput(out);
    op->RunCpu(ws);
    b = (b + 1) % batches.size();
  };
  run();  // warm: the output buffer, TBB's workers
  for (auto _ : state) run();
  state.counters["images/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kBatch, benchmark::Counter::kIsRate);
  state.counters["images/s/thread"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kBatch / threads, benchmark::Counter::kIsRate);
}

void BM_DecodeImage(benchmark::State& state) { RunDecoder(state, "decoders.image"); }
void BM_DecodeImageRandomCrop(benchmark::State& state) { RunDecoder(state, "decoders.image_random_crop"); }
BENCHMARK(BM_DecodeImage)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeImageRandomCrop)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->UseRealTime()->Unit(benchmark::kMillisecond);

// One image at a time on the calling thread: the library's cost without the operator.
void BM_DecodeOneThread(benchmark::State& state) {
  const auto& files = Files();
  std::vector<ops::ImageInfo> infos;
  size_t max_bytes = 0;
  for (const auto& f : files) {
    infos.push_back(ops::ParseImageInfo(f.data(), f.size()));
    max_bytes = std::max(max_bytes, static_cast<size_t>(infos.back().height * infos.back().width * 3));
  }
  std::vector<uint8_t> out(max_bytes);
  size_t i = 0;
  for (auto _ : state) {
    ops::DecodeImageCpu(files[i].data(), files[i].size(), infos[i], ops::OutputColor::kRgb, ops::FullWindow(infos[i]),
                        out.data());
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % files.size();
  }
  state.counters["images/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DecodeOneThread)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
