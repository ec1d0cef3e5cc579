// GPU JPEG decoding throughput (images/s) with GpuDecoder: the automatic engines/CUDA/CPU mix,
// each path alone, and random-crop (ROI) decoding with RN50-style windows. Batch 256, two slots
// alternating (as the executor's prefetch ring does), no synchronisation inside the loop except
// the decoder's own per-slot reuse check.
//
//   CONVEYOR_DECODE_BENCH_DIR=/data/photos ./decode_gpu_bench [--benchmark_...]
//   (the folder: >= 2,000 500x375 q90 JPEGs, e.g. from tools/make_test_images)
#include <benchmark/benchmark.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/philox.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/workspace.h"
#include "operators/common/crop_window.h"
#include "operators/decoders/gpu_decoder.h"

namespace conveyor::ops {
namespace {

constexpr int kBatch = 256;
constexpr int kSlots = 2;

struct File {
  std::string name;
  std::vector<uint8_t> bytes;
  int64_t height = 0, width = 0;
};

const std::vector<File>& Files() {
  static const std::vector<File> files = [] {
    std::vector<File> out;
    const char* dir = std::getenv("CONVEYOR_DECODE_BENCH_DIR");
    if (dir == nullptr) return out;
    tjhandle tj = tjInitDecompress();
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".jpg" && ext != ".jpeg")) continue;
      File f;
      f.name = e.path().string();
      std::ifstream in(f.name, std::ios::binary);
      f.bytes.assign(std::istreambuf_iterator<char>(in), {});
      int w = 0, h = 0, samp = 0, cs = 0;
      if (tjDecompressHeader3(tj, f.bytes.data(), f.bytes.size(), &w, &h, &samp, &cs) != 0) continue;
      f.height = h;
      f.width = w;
      out.push_back(std::move(f));
    }
    tjDestroy(tj);
    std::sort(out.begin(), out.end(), [](const File& a, const File& b) { return a.name < b.name; });
    return out;
  }();
  return files;
}

void DecodeBench(benchmark::State& state, DecodePaths paths, bool roi) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError("needs a CUDA GPU");
  const std::vector<File>& files = Files();
  if (files.size() < kBatch) return state.SkipWithError("set CONVEYOR_DECODE_BENCH_DIR to a folder of >= 256 JPEGs");
  GpuDecoderOptions options;
  options.paths = paths;
  GpuDecoder decoder(options);
  if (paths != DecodePaths::kCpuOnly && !decoder.counters().nvjpeg_available) {
    return state.SkipWithError(decoder.counters().unavailable_reason.c_str());
  }
  if (paths == DecodePaths::kHardwareOnly && !decoder.counters().hardware_available) {
    return state.SkipWithError("no hardware JPEG engines");
  }
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  OpSpec spec("decoders.image", "bench");
  Workspace ws(spec, kBatch);
  ws.set_stream(stream.view());
  ws.set_thread_pool(&pool);
  int64_t max_bytes = 0;
  for (const File& f : files) max_bytes = std::max(max_bytes, f.height * f.width * 3);
  std::vector<Buffer> outs[kSlots];
  for (auto& slot : outs) {
    for (int i = 0; i < kBatch; ++i) slot.push_back(Buffer::Allocate(MemoryKind::kDevice, max_bytes, stream.view()));
  }
  const RandomCropParams crop;
  std::vector<GpuDecodeSample> samples(kBatch);
  int64_t cursor = 0, iteration = 0, images = 0;
  auto cpu = [&](int i, uint8_t* dst) {
    tjhandle tj = tjInitDecompress();
    const GpuDecodeSample& s = samples[i];
    std::vector<uint8_t> full(static_cast<size_t>(s.height * s.width * 3));
    tjDecompress2(tj, s.data, s.size, full.data(), static_cast<int>(s.width), 0, static_cast<int>(s.height), TJPF_RGB,
                  TJFLAG_ACCURATEDCT);
    tjDestroy(tj);
    for (int64_t y = 0; y < s.roi.h; ++y) {
      std::copy_n(&full[static_cast<size_t>(((s.roi.y + y) * s.width + s.roi.x) * 3)], s.roi.w * 3, dst + y * s.roi.w * 3);
    }
  };
  for (auto _ : state) {
    const int slot = static_cast<int>(iteration % kSlots);
    ws.set_slot(slot);
    ws.set_iteration(iteration);
    for (int i = 0; i < kBatch; ++i) {
      const File& f = files[static_cast<size_t>(cursor++ % static_cast<int64_t>(files.size()))];
      CropWindow win{0, 0, f.height, f.width};
      if (roi) {
        Philox rng = ws.Rng(i);
        win = DrawRandomCropWindow(rng, f.height, f.width, crop);
      }
      samples[i] = GpuDecodeSample{f.bytes.data(), f.bytes.size(), true, f.height, f.width, win,
                                   static_cast<uint8_t*>(outs[slot][i].device_ptr())};
    }
    decoder.Decode(samples, ws, cpu, [&](int i) { return std::to_string(i); }, "bench");
    ++iteration;
    images += kBatch;
  }
  stream.Synchronize();
  state.SetItemsProcessed(images);
  const GpuDecoderCounters c = decoder.counters();
  state.counters["engines"] = static_cast<double>(c.images_hardware);
  state.counters["cuda"] = static_cast<double>(c.images_cuda);
  state.counters["cpu"] = static_cast<double>(c.images_cpu);
  state.counters["hw_share"] = c.hw_share;
}

BENCHMARK_CAPTURE(DecodeBench, auto_mix, DecodePaths::kAuto, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, engines_only, DecodePaths::kHardwareOnly, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, cuda_only, DecodePaths::kCudaOnly, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, cpu_only, DecodePaths::kCpuOnly, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, random_crop_auto, DecodePaths::kAuto, true)->UseRealTime()->MinTime(3);

}  // namespace
}  // namespace conveyor::ops

BENCHMARK_MAIN();
