// GPU JPEG decoding throughput (images/s) with GpuDecoder: the automatic engines/CUDA/CPU mix,
// each path alone, and random-crop (ROI) decoding with RN50-style windows. Batch 256, two slots
// alternating (as the executor's prefetch ring does), no synchronisation inside the loop except
// the decoder's own per-slot reuse check.
//
//   CONVEYOR_DECODE_BENCH_DIR=/data/photos ./decode_gpu_bench [--benchmark_...]
//   (the folder: >= 2,000 500x375 q90 JPEGs, e.g. from tools/make_test_images)
//   CONVEYOR_DECODE_BENCH_THREADS: the pool's threads (default: every core)
#include <benchmark/benchmark.h>
#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/philox.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/thread_affinity.h"
#include "core/op/workspace.h"
#include "operators/common/crop_window.h"
#include "operators/decoders/decoder_env.h"
#include "operators/decoders/gpu_decoder.h"
#include "operators/decoders/image_info.h"
#include "operators/decoders/nvjpeg/nvjpeg_loader.h"

namespace conveyor::ops {
namespace {

constexpr int kBatch = 256;
// Slots alternating (the executor's prefetch ring); CONVEYOR_DECODE_BENCH_SLOTS (1 to 8) changes it.
int Slots() {
  static const int slots = [] {
    const char* v = std::getenv("CONVEYOR_DECODE_BENCH_SLOTS");
    const int n = v == nullptr ? 2 : std::atoi(v);
    if (n < 1 || n > 8) {
      std::cerr << "CONVEYOR_DECODE_BENCH_SLOTS: expected 1 to 8, got \"" << v << "\"\n";
      std::exit(2);
    }
    return n;
  }();
  return slots;
}

struct File {
  std::string name;
  std::vector<uint8_t> bytes;
  int64_t height = 0, width = 0;
  ChromaSubsampling subsampling = ChromaSubsampling::kNone;  // GpuDecodeSample's
  bool progressive = false;
  bool common_layout = false;
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
      const ImageInfo info = ParseImageInfo(f.bytes.data(), f.bytes.size());
      f.subsampling = info.subsampling;
      f.progressive = info.progressive;
      f.common_layout = info.jpeg_common_layout;
      out.push_back(std::move(f));
    }
    tjDestroy(tj);
    std::sort(out.begin(), out.end(), [](const File& a, const File& b) { return a.name < b.name; });
    return out;
  }();
  return files;
}

// The same files' bytes in one pinned buffer: how the executor hands a GPU operator its host input
// (docs/executor.md). nvJPEG's engines copy the bitstreams by DMA from pinned memory and through a
// pageable bounce on the calling thread otherwise (DecodePageableInput measures that).
const std::vector<const uint8_t*>& PinnedFiles() {
  static const std::vector<const uint8_t*> ptrs = [] {
    std::vector<const uint8_t*> out;
    size_t total = 0;
    for (const File& f : Files()) total += (f.bytes.size() + 63) / 64 * 64;
    if (total == 0) return out;
    // Kept to the process's end (never freed: no pinned free after the CUDA runtime's teardown).
    auto* pinned = new Buffer(Buffer::Allocate(MemoryKind::kPinned, total));
    uint8_t* p = static_cast<uint8_t*>(pinned->host_ptr());
    for (const File& f : Files()) {
      std::copy(f.bytes.begin(), f.bytes.end(), p);
      out.push_back(p);
      p += (f.bytes.size() + 63) / 64 * 64;
    }
    return out;
  }();
  return ptrs;
}

int PoolThreads() {
  const char* env = std::getenv("CONVEYOR_DECODE_BENCH_THREADS");
  const int n = env != nullptr ? std::atoi(env) : 0;
  return n > 0 ? n : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// One decoder with its own stream, thread pool and two slots of outputs, stepping through the
// files a batch at a time.
struct Runner {
  GpuDecoder decoder;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool;
  OpSpec spec{"decoders.image", "bench"};
  Workspace ws{spec, kBatch};
  std::vector<std::vector<Buffer>> outs = std::vector<std::vector<Buffer>>(Slots());
  std::vector<GpuDecodeSample> samples = std::vector<GpuDecodeSample>(kBatch);
  const RandomCropParams crop;
  bool roi = false;
  bool pinned_input = true;  // samples point into PinnedFiles(), else into the pageable Files()
  int64_t cursor = 0, iteration = 0, images = 0;

  Runner(DecodePaths paths, bool roi_windows, int threads, int64_t first_file)
      : Runner(GpuDecoderOptions{.paths = paths}, roi_windows, threads, first_file) {}
  Runner(const GpuDecoderOptions& options, bool roi_windows, int threads, int64_t first_file)
      : decoder(options), pool(threads), roi(roi_windows), cursor(first_file) {
    ws.set_stream(stream.view());
    ws.set_thread_pool(&pool);
    int64_t max_bytes = 0;
    for (const File& f : Files()) max_bytes = std::max(max_bytes, f.height * f.width * 3);
    for (auto& slot : outs) {
      for (int i = 0; i < kBatch; ++i) slot.push_back(Buffer::Allocate(MemoryKind::kDevice, max_bytes, stream.view()));
    }
  }

  // Why this configuration cannot run, or "".
  std::string Unusable(DecodePaths paths) const {
    if (paths != DecodePaths::kCpuOnly && !decoder.counters().nvjpeg_available) {
      return decoder.counters().unavailable_reason;
    }
    if (paths == DecodePaths::kHardwareOnly && !decoder.counters().hardware_available) {
      return "no hardware JPEG engines";
    }
    return "";
  }

  void Step() {
    const std::vector<File>& files = Files();
    const int slot = static_cast<int>(iteration % Slots());
    ws.set_slot(slot);
    ws.set_iteration(iteration);
    for (int i = 0; i < kBatch; ++i) {
      const size_t index = static_cast<size_t>(cursor++ % static_cast<int64_t>(files.size()));
      const File& f = files[index];
      const uint8_t* data = pinned_input ? PinnedFiles()[index] : f.bytes.data();
      CropWindow win{0, 0, f.height, f.width};
      if (roi) {
        Philox rng = ws.Rng(i);
        win = DrawRandomCropWindow(rng, f.height, f.width, crop);
      }
      samples[i] = GpuDecodeSample{data,     f.bytes.size(), true, f.height, f.width, win,
                                   static_cast<uint8_t*>(outs[slot][i].device_ptr()), f.subsampling, f.progressive,
                                   false, f.common_layout};
    }
    auto cpu = [&](int i, uint8_t* dst) {
      tjhandle tj = tjInitDecompress();
      const GpuDecodeSample& s = samples[i];
      std::vector<uint8_t> full(static_cast<size_t>(s.height * s.width * 3));
      tjDecompress2(tj, s.data, s.size, full.data(), static_cast<int>(s.width), 0, static_cast<int>(s.height), TJPF_RGB,
                    TJFLAG_ACCURATEDCT);
      tjDestroy(tj);
      for (int64_t y = 0; y < s.roi.h; ++y) {
        std::copy_n(&full[static_cast<size_t>(((s.roi.y + y) * s.width + s.roi.x) * 3)], s.roi.w * 3,
                    dst + y * s.roi.w * 3);
      }
    };
    decoder.Decode(samples, ws, cpu, [&](int i) { return std::to_string(i); }, "bench");
    ++iteration;
    images += kBatch;
  }

  // Two calls per slot before the clock starts: a decoder's first calls create and preallocate its
  // nvJPEG states (per slot and engines' part). Without this, Google Benchmark's sizing run met
  // cold calls of ~0.9 s and timed 4 calls of a fresh decoder (290 images/s, H200, 2026-11-27).
  // Returns the counters then, for Report's `before`.
  GpuDecoderCounters WarmUp() {
    for (int k = 0; k < 2 * Slots(); ++k) Step();
    stream.Synchronize();
    images = 0;
    return decoder.counters();
  }
};

// Every summed counter per Decode call (decoder_counters.h's table; seconds as ms), then the
// latest state: the share, the balancer's rates, the engines, nvJPEG's memory through our allocators.
// `before`: the counters when the clock started (the warm-up's calls are not reported).
void Report(benchmark::State& state, const GpuDecoderCounters& c, const std::string& prefix,
            const GpuDecoderCounters& before = {}) {
  const double calls = static_cast<double>(std::max<int64_t>(c.calls - before.calls, 1));
  for (const DecoderCounterField& f : DecoderCounterFields()) {
    std::string name = f.name;
    if (f.seconds != nullptr) name = name.substr(0, name.size() - std::string("seconds").size()) + "ms";
    state.counters[prefix + name] = (f.seconds != nullptr ? 1e3 : 1.0) * (f.Value(c) - f.Value(before)) / calls;
  }
  state.counters[prefix + "hw_share"] = c.hw_share;
  state.counters[prefix + "hw_rate_MPs"] = c.hw_rate;
  state.counters[prefix + "cuda_rate_MPs"] = c.cuda_rate;
  state.counters[prefix + "hw_engines"] = c.hw_engines;
  state.counters[prefix + "hw_parts"] = c.hw_parts;
  constexpr double kMiB = 1 << 20;
  state.counters[prefix + "engines_dev_MiB"] = static_cast<double>(c.engines_memory.device_bytes) / kMiB;
  state.counters[prefix + "cuda_dev_MiB"] = static_cast<double>(c.cuda_memory.device_bytes) / kMiB;
  state.counters[prefix + "cuda_pinned_MiB"] = static_cast<double>(c.cuda_memory.pinned_bytes) / kMiB;
}

// One decoder made with `options` stepping through the files; `needs` names the path this machine
// must have (the case skips otherwise). With `env_name`, that measuring switch is `env_value` for
// this decoder (decoder_env.h).
void RunDecoder(benchmark::State& state, const GpuDecoderOptions& options, bool roi, DecodePaths needs,
                bool pinned_input = true, const char* env_name = nullptr, const char* env_value = nullptr) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError("needs a CUDA GPU");
  if (Files().size() < kBatch) return state.SkipWithError("set CONVEYOR_DECODE_BENCH_DIR to a folder of >= 256 JPEGs");
  GpuDecoderOptions with_env = options;
  if (env_name != nullptr) {
    const char* before = std::getenv(env_name);
    const std::string kept = before != nullptr ? before : "";
    setenv(env_name, env_value, 1);
    ApplyDecoderEnv(with_env);
    before != nullptr ? setenv(env_name, kept.c_str(), 1) : unsetenv(env_name);
  }
  std::optional<Runner> made;
  made.emplace(with_env, roi, PoolThreads(), 0);
  Runner& r = *made;
  r.pinned_input = pinned_input;
  const std::string why = r.Unusable(needs);
  if (!why.empty()) return state.SkipWithError(why.c_str());
  const GpuDecoderCounters before = r.WarmUp();
  for (auto _ : state) r.Step();
  r.stream.Synchronize();
  state.SetItemsProcessed(r.images);
  Report(state, r.decoder.counters(), "", before);
  state.counters["hw_no_pipeline"] = r.decoder.counters().hw_no_pipeline ? 1 : 0;
}

void DecodeBench(benchmark::State& state, DecodePaths paths, bool roi) {
  RunDecoder(state, GpuDecoderOptions{.paths = paths}, roi, paths);
}

// The same from pageable host memory (what the executor handed the decoder before 2026-11-26): on
// the H100 the engines' batch of 256 took 8.3 ms from pageable and 5.7 ms from pinned memory.
void DecodePageableInput(benchmark::State& state, DecodePaths paths, bool roi) {
  RunDecoder(state, GpuDecoderOptions{.paths = paths}, roi, paths, false);
}

// A decoder with the measuring switch `name` set to `value`: nvJPEG's pipelined hardware decode on the
// engines' handles (CONVEYOR_JPEG_HW_PIPELINE=1; the default sets NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE), or more pinned
// buffers per CUDA-backend worker (CONVEYOR_JPEG_CUDA_PINNED: do the workers wait for transfers?).
void DecodeWithEnv(benchmark::State& state, DecodePaths paths, bool roi, const char* name, const char* value) {
  RunDecoder(state, GpuDecoderOptions{.paths = paths}, roi, paths, true, name, value);
}

// The automatic mix with the engines' share fixed (GpuDecoderOptions::hw_load = Arg / 100) instead
// of balanced: images/s against the share, and the engines' time per call against the images they
// get. On the H100 (2026-11-25) the engines' call took 8.2 ms for 147 images in the mix and 8.2 ms
// for 256 alone: if their time hardly grows with the images, the balancer (which assumes rate ∝
// images) settles on too small a share.
void DecodeShare(benchmark::State& state, bool roi) {
  GpuDecoderOptions options;
  options.paths = DecodePaths::kAuto;
  options.hw_load = static_cast<double>(state.range(0)) / 100;
  RunDecoder(state, options, roi, DecodePaths::kHardwareOnly);
}

// Engines-only and CUDA-only decoders side by side in one process, each on its own thread, pool
// and stream (the engines' pool: CONVEYOR_DECODE_BENCH_HW_THREADS, default 2): do the two paths
// add up when they share nothing of ours? Images/s of both together.
void TwoDecoders(benchmark::State& state) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError("needs a CUDA GPU");
  if (Files().size() < kBatch) return state.SkipWithError("set CONVEYOR_DECODE_BENCH_DIR to a folder of >= 256 JPEGs");
  const char* env = std::getenv("CONVEYOR_DECODE_BENCH_HW_THREADS");
  const int hw_threads = std::max(1, env != nullptr ? std::atoi(env) : 2);
  const int cuda_threads = std::max(1, PoolThreads() - hw_threads);
  Runner hw(DecodePaths::kHardwareOnly, false, hw_threads, 0);
  Runner cu(DecodePaths::kCudaOnly, false, cuda_threads, 1024);
  std::string why = hw.Unusable(DecodePaths::kHardwareOnly);
  if (why.empty()) why = cu.Unusable(DecodePaths::kCudaOnly);
  if (!why.empty()) return state.SkipWithError(why.c_str());
  const GpuDecoderCounters hw_before = hw.WarmUp(), cu_before = cu.WarmUp();
  const int64_t hw0 = hw.images, cu0 = cu.images;
  std::atomic<bool> stop{false};
  std::thread engines([&] {
    while (!stop.load()) hw.Step();
    hw.stream.Synchronize();
  });
  for (auto _ : state) cu.Step();
  stop = true;
  engines.join();
  cu.stream.Synchronize();
  state.SetItemsProcessed(hw.images - hw0 + cu.images - cu0);
  state.counters["engine_images"] = static_cast<double>(hw.images - hw0);
  state.counters["cuda_images"] = static_cast<double>(cu.images - cu0);
  Report(state, hw.decoder.counters(), "hw.", hw_before);
  Report(state, cu.decoder.counters(), "cu.", cu_before);
}

// N engines-only decoders (each its own nvJPEG hardware handle, stream and one-thread pool), each
// stepping batches on a thread of its own: does the engines' host work (CPU-bound on its thread,
// ~27-45 µs per image on the H100, 2026-11-26) spread over threads when the handles are separate?
// (Several states of one handle from several threads crashed or hung; gpu_decoder_setup.cc.)
void ParallelEngineDecoders(benchmark::State& state) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError("needs a CUDA GPU");
  if (Files().size() < kBatch) return state.SkipWithError("set CONVEYOR_DECODE_BENCH_DIR to a folder of >= 256 JPEGs");
  const int n = static_cast<int>(state.range(0));
  std::vector<std::unique_ptr<Runner>> runners;
  for (int k = 0; k < n; ++k) {
    runners.push_back(std::make_unique<Runner>(DecodePaths::kHardwareOnly, false, 1, int64_t{k} * 512));
    const std::string why = runners.back()->Unusable(DecodePaths::kHardwareOnly);
    if (!why.empty()) return state.SkipWithError(why.c_str());
  }
  const GpuDecoderCounters first_before = runners[0]->WarmUp();
  for (size_t k = 1; k < runners.size(); ++k) runners[k]->WarmUp();
  std::vector<int64_t> before;
  for (auto& r : runners) before.push_back(r->images);
  std::atomic<bool> stop{false};
  std::vector<std::thread> others;
  for (int k = 1; k < n; ++k) {
    others.emplace_back([&, k] {
      while (!stop.load()) runners[static_cast<size_t>(k)]->Step();
      runners[static_cast<size_t>(k)]->stream.Synchronize();
    });
  }
  for (auto _ : state) runners[0]->Step();
  stop = true;
  for (std::thread& t : others) t.join();
  runners[0]->stream.Synchronize();
  int64_t total = 0;
  for (int k = 0; k < n; ++k) total += runners[static_cast<size_t>(k)]->images - before[static_cast<size_t>(k)];
  state.SetItemsProcessed(total);
  Report(state, runners[0]->decoder.counters(), "first.", first_before);
}

// What the engines' support check costs per image (phase A of every batch): nvJPEG's header
// parse and nvjpegDecodeBatchedSupportedEx on the engines' handle, over the files, from `threads`
// threads at once (each with its own stream and parameters). Does it scale with threads?
void HeaderChecks(benchmark::State& state, bool support_check) {
  using namespace nvjpeg;  // NOLINT
  if (!cuda::HasCudaDevice()) return state.SkipWithError("needs a CUDA GPU");
  const std::vector<File>& files = Files();
  if (files.size() < kBatch) return state.SkipWithError("set CONVEYOR_DECODE_BENCH_DIR to a folder of >= 256 JPEGs");
  std::string why;
  const NvjpegLibrary* lib = SharedNvjpeg(&why);
  if (lib == nullptr) return state.SkipWithError(why.c_str());
  const NvjpegApi& a = lib->api();
  // The V2 constructor wants allocators (with null ones the H100 refused the hardware backend).
  nvjpegDevAllocatorV2_t dev{
      [](void*, void** p, size_t n, cudaStream_t) { return cudaMalloc(p, n) == cudaSuccess ? 0 : 1; },
      [](void*, void* p, size_t, cudaStream_t) { return cudaFree(p) == cudaSuccess ? 0 : 1; }, nullptr};
  nvjpegPinnedAllocatorV2_t pinned{
      [](void*, void** p, size_t n, cudaStream_t) { return cudaMallocHost(p, n) == cudaSuccess ? 0 : 1; },
      [](void*, void* p, size_t, cudaStream_t) { return cudaFreeHost(p) == cudaSuccess ? 0 : 1; }, nullptr};
  nvjpegHandle_t h = nullptr;
  const nvjpegStatus_t created = a.nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, &dev, &pinned, 0, &h);
  if (created != NVJPEG_STATUS_SUCCESS) {
    return state.SkipWithError(
        (std::string("nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE): ") + StatusName(created)).c_str());
  }
  const int threads = static_cast<int>(state.range(0));
  std::vector<nvjpegJpegStream_t> streams(threads);
  std::vector<nvjpegDecodeParams_t> params(threads);
  for (int t = 0; t < threads; ++t) {
    a.nvjpegJpegStreamCreate(h, &streams[t]);
    a.nvjpegDecodeParamsCreate(h, &params[t]);
    a.nvjpegDecodeParamsSetOutputFormat(params[t], NVJPEG_OUTPUT_RGBI);
    a.nvjpegDecodeParamsSetROI(params[t], 0, 0, -1, -1);
  }
  int64_t checked = 0;
  std::atomic<int64_t> supported{0};
  for (auto _ : state) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (size_t i = static_cast<size_t>(t); i < kBatch; i += static_cast<size_t>(threads)) {
          const File& f = files[i];
          if (a.nvjpegJpegStreamParseHeader(h, f.bytes.data(), f.bytes.size(), streams[t]) != NVJPEG_STATUS_SUCCESS) {
            continue;
          }
          if (!support_check) continue;
          int unsupported = 1;
          a.nvjpegDecodeBatchedSupportedEx(h, streams[t], params[t], &unsupported);
          if (unsupported == 0) ++supported;
        }
      });
    }
    for (auto& th : pool) th.join();
    checked += kBatch;
  }
  state.SetItemsProcessed(checked);
  state.counters["supported"] = static_cast<double>(supported.load());
  for (int t = 0; t < threads; ++t) {
    a.nvjpegDecodeParamsDestroy(params[t]);
    a.nvjpegJpegStreamDestroy(streams[t]);
  }
  a.nvjpegDestroy(h);
}
BENCHMARK_CAPTURE(HeaderChecks, parse_header, false)->Arg(1)->Arg(4)->Arg(16)->UseRealTime()->MinTime(1);
BENCHMARK_CAPTURE(HeaderChecks, parse_and_supported, true)->Arg(1)->Arg(4)->Arg(16)->UseRealTime()->MinTime(1);

BENCHMARK_CAPTURE(DecodeBench, auto_mix, DecodePaths::kAuto, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, engines_only, DecodePaths::kHardwareOnly, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, cuda_only, DecodePaths::kCudaOnly, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, cpu_only, DecodePaths::kCpuOnly, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, random_crop_auto, DecodePaths::kAuto, true)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeBench, random_crop_engines_only, DecodePaths::kHardwareOnly, true)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodePageableInput, auto_mix_pageable, DecodePaths::kAuto, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodePageableInput, engines_only_pageable, DecodePaths::kHardwareOnly, false)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodePageableInput, random_crop_auto_pageable, DecodePaths::kAuto, true)->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeWithEnv, auto_mix_hw_pipeline, DecodePaths::kAuto, false, "CONVEYOR_JPEG_HW_PIPELINE", "1")
    ->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeWithEnv, engines_only_hw_pipeline, DecodePaths::kHardwareOnly, false,
                  "CONVEYOR_JPEG_HW_PIPELINE", "1")->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeWithEnv, auto_mix_pinned4, DecodePaths::kAuto, false, "CONVEYOR_JPEG_CUDA_PINNED", "4")
    ->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeWithEnv, auto_mix_pinned8, DecodePaths::kAuto, false, "CONVEYOR_JPEG_CUDA_PINNED", "8")
    ->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeWithEnv, random_crop_auto_pinned8, DecodePaths::kAuto, true, "CONVEYOR_JPEG_CUDA_PINNED", "8")
    ->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeWithEnv, cuda_only_pinned8, DecodePaths::kCudaOnly, false, "CONVEYOR_JPEG_CUDA_PINNED", "8")
    ->UseRealTime()->MinTime(3);
BENCHMARK_CAPTURE(DecodeShare, share, false)->DenseRange(50, 100, 10)->UseRealTime()->MinTime(2);
BENCHMARK_CAPTURE(DecodeShare, random_crop_share, true)->DenseRange(50, 100, 10)->UseRealTime()->MinTime(2);
BENCHMARK(TwoDecoders)->UseRealTime()->MinTime(3);
BENCHMARK(ParallelEngineDecoders)->Arg(1)->Arg(2)->Arg(3)->UseRealTime()->MinTime(2);

}  // namespace
}  // namespace conveyor::ops

// The thread that calls Decode runs the engines' batch itself: like the executor's thread, it keeps
// to the process's thread CPUs (thread_affinity.h). Left where the OS put it, it sat on the CPU
// taking the GPU's interrupts once the pool's workers had left it, and the engines' call took
// 13.5 ms per 230 images instead of ~6 (H100, 2026-11-26).
// CONVEYOR_JPEG_* switches in the environment (decoder_env.h) apply to every decoder made here.
int main(int argc, char** argv) {
  conveyor::ApplyThreadCpus(conveyor::ProcessThreadCpus());
  conveyor::ops::SetDecoderOptionsHook(conveyor::ops::ApplyDecoderEnv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
