// Shared by the GpuDecoder GPU tests (gpu_decoder_gpu_test: paths, balancing, errors;
// gpu_decoder_roi_gpu_test: windows, slots, stream order): the test files, a decode call with
// poisoned outputs, and the comparison with libjpeg-turbo and its tolerances.
//
// Tolerance: nvJPEG's IDCT and colour conversion round differently from libjpeg-turbo's accurate
// integer IDCT (a few units); subsampled chroma is upsampled by interpolation in both, but the
// filters differ at block, window and image edges, where differences grow (gpu_cpu_compare.h
// derives the edge bound). Wrong channel order, wrong pitch, a missing window or an unwritten
// output show as differences of tens to hundreds and a mean far above these bounds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/spec.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/workspace.h"
#include "operators/decoders/gpu_decoder.h"
#include "operators/decoders/image_info.h"
#include "tests/operators/decoders/gpu/decode_test_util.h"
#include "tests/operators/decoders/gpu/gpu_cpu_compare.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor::ops::gpu_decoder_test {

using testing::Compare;
using testing::EncodeJpeg;
using testing::ReferenceDecode;
using testing::TestJpeg;

constexpr int kMaxDiffFull = 6;         // 4:4:4 and grayscale
constexpr int kMaxDiffSubsampled = 40;  // 4:2:2 / 4:2:0: chroma edges
constexpr double kMaxMeanFull = 1.0;
constexpr double kMaxMeanSubsampled = 3.0;  // H100: 2.03-2.67 on 4000x3 4:2:0 (3-row chroma edges), < 0.05 elsewhere

inline std::vector<TestJpeg> MakeFiles(std::mt19937_64& rng) {
  std::vector<TestJpeg> files;
  std::uniform_int_distribution<int> dim(24, 300);
  for (int samp : {TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_GRAY}) {
    for (bool progressive : {false, true}) {
      files.push_back(EncodeJpeg(dim(rng), dim(rng), samp, progressive, rng));
    }
  }
  files.push_back(EncodeJpeg(1, 1, TJSAMP_420, false, rng));
  files.push_back(EncodeJpeg(17, 9, TJSAMP_422, false, rng));
  files.push_back(EncodeJpeg(4000, 3, TJSAMP_420, false, rng));
  files.push_back(EncodeJpeg(3, 4000, TJSAMP_444, true, rng));
  files.push_back(EncodeJpeg(375, 500, TJSAMP_420, false, rng));
  return files;
}

inline ChromaSubsampling SubsamplingOf(const TestJpeg& j) {
  return ParseImageInfo(j.bytes.data(), j.bytes.size()).subsampling;
}

inline bool Subsampled(const TestJpeg& j) {
  const ChromaSubsampling s = SubsamplingOf(j);
  return s == ChromaSubsampling::k422 || s == ChromaSubsampling::k420;
}

// Runs the decoder over `files` (windows per file) and returns the host copies of the outputs.
struct DecodeRun {
  GpuDecoder& decoder;
  cuda::Stream& stream;
  TbbThreadPool& pool;
  DecodeColor color;
  int slot = 0;
  // > 0: the stream spins this long before the outputs are filled with 0xA5 and Decode is called,
  // so a decode path that does not wait for earlier work on the stream is overwritten by the fill.
  double spin_ms = 0;
  // The call's key (ws.iteration()); with `ahead`, GpuDecoder::DecodeAhead sees the samples first
  // (key `ahead_key`; `ahead_files`' bytes in place of `files`' when given) and the call waits
  // `ahead_ms` before it starts.
  int64_t iteration = 0;
  bool ahead = false;
  int64_t ahead_key = -1;  // the look's key; -1: `iteration`
  bool look_again = false;  // after the look at `ahead_files`, one at the call's own bytes
  double ahead_ms = 0;
  const std::vector<TestJpeg>* ahead_files = nullptr;

  std::vector<std::vector<uint8_t>> operator()(const std::vector<TestJpeg>& files,
                                               const std::vector<CropWindow>& windows,
                                               std::vector<bool> is_jpeg = {}) {
    const int n = static_cast<int>(files.size());
    const int c = DecodeChannels(color);
    OpSpec spec("decoders.image", "dec");
    Workspace ws(spec, n);
    ws.set_stream(stream.view());
    ws.set_thread_pool(&pool);
    ws.set_slot(slot);
    ws.set_iteration(iteration);
    std::vector<Buffer> outs;
    std::vector<GpuDecodeSample> samples(n);
    for (int i = 0; i < n; ++i) {
      const size_t bytes = static_cast<size_t>(windows[i].h * windows[i].w * c);
      outs.push_back(Buffer::Allocate(MemoryKind::kDevice, std::max<size_t>(bytes, 1), stream.view()));
      ImageInfo info;  // the router's facts; a broken header leaves them unknown (the decoder reports it)
      try {
        info = ParseImageInfo(files[i].bytes.data(), files[i].bytes.size());
      } catch (const Error&) {
      }
      samples[i] = GpuDecodeSample{files[i].bytes.data(), files[i].bytes.size(), is_jpeg.empty() || is_jpeg[i],
                                   files[i].height, files[i].width, windows[i],
                                   static_cast<uint8_t*>(outs[i].device_ptr()), info.subsampling, info.progressive,
                                   false, info.jpeg_common_layout};
    }
    if (ahead) {
      std::vector<GpuDecodeSample> look = samples;
      if (ahead_files != nullptr) {
        for (int i = 0; i < n; ++i) {
          const TestJpeg& f = (*ahead_files)[static_cast<size_t>(i)];
          look[i].data = f.bytes.data();
          look[i].size = f.bytes.size();
        }
      }
      for (GpuDecodeSample& smp : look) smp.out = nullptr;
      const int64_t key = ahead_key >= 0 ? ahead_key : iteration;
      decoder.DecodeAhead(key, look, nullptr, "op \"dec\" (decoders.image)");
      if (ahead_files != nullptr && look_again) {  // a second look at the call's own bytes, same key
        look = samples;
        for (GpuDecodeSample& smp : look) smp.out = nullptr;
        decoder.DecodeAhead(key, look, nullptr, "op \"dec\" (decoders.image)");
      }
      if (ahead_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ahead_ms));
    }
    if (spin_ms > 0) ::conveyor::testing::SpinGpu(spin_ms, stream.view());
    for (int i = 0; i < n; ++i) {
      CONVEYOR_CUDA_CHECK(cudaMemsetAsync(outs[i].device_ptr(), 0xA5, outs[i].size(), stream.get()));
    }
    decoder.Decode(
        samples, ws,
        [&](int i, uint8_t* dst) {
          const std::vector<uint8_t> ref = ReferenceDecode(files[i], color, windows[i]);
          std::copy(ref.begin(), ref.end(), dst);
        },
        [&](int i) { return files[i].name; }, "op \"dec\" (decoders.image)");
    std::vector<std::vector<uint8_t>> host(n);
    for (int i = 0; i < n; ++i) {
      host[i].resize(static_cast<size_t>(windows[i].h * windows[i].w * c));
      if (!host[i].empty()) {
        CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(host[i].data(), outs[i].device_ptr(), host[i].size(),
                                            cudaMemcpyDeviceToHost, stream.get()));
      }
    }
    stream.Synchronize();
    return host;
  }
};

inline std::vector<CropWindow> Whole(const std::vector<TestJpeg>& files) {
  std::vector<CropWindow> w;
  for (const TestJpeg& f : files) w.push_back(CropWindow{0, 0, f.height, f.width});
  return w;
}

// Whether pixel (y, x) of `win` lies where an ROI decode of a subsampled image may upsample chroma
// unlike a whole decode: within kRoiEdge pixels of a window edge that is not an edge of the image
// (nvJPEG may treat it as the image edge, replicating the last chroma sample, while libjpeg-turbo
// interpolates across it), or, when the window is not the whole image, of the image's last row or
// column (there nvJPEG's ROI colour conversion interpolates with a chroma sample read past its
// plane: memcheck saw those reads, and corner windows put values up to 84 off on the H100,
// 2026-11-25, within the chroma-step bound of gpu_cpu_compare.h). Whole decodes have no such pixels.
constexpr int kRoiEdge = 2;
inline bool AtRoiEdge(const TestJpeg& f, const CropWindow& win, int64_t y, int64_t x) {
  const bool whole = win.y == 0 && win.x == 0 && win.h == f.height && win.w == f.width;
  if (whole) return false;
  return (win.y > 0 && y < kRoiEdge) || (win.x > 0 && x < kRoiEdge) || y >= win.h - kRoiEdge ||
         x >= win.w - kRoiEdge;
}

inline void ExpectClose(const std::vector<TestJpeg>& files, const std::vector<CropWindow>& windows,
                 const std::vector<std::vector<uint8_t>>& got, DecodeColor color, const std::string& what) {
  const int c = DecodeChannels(color);
  for (size_t i = 0; i < files.size(); ++i) {
    const CropWindow& win = windows[i];
    const std::vector<uint8_t> ref = ReferenceDecode(files[i], color, win);
    const testing::DiffStats d = Compare(got[i], ref);
    const bool sub = Subsampled(files[i]) && color != DecodeColor::kGray;
    const int64_t py = win.w == 0 ? 0 : static_cast<int64_t>(d.max_at / c) / win.w;
    const int64_t px = win.w == 0 ? 0 : static_cast<int64_t>(d.max_at / c) % win.w;
    std::cout << what << " " << files[i].name << " window " << win.y << "," << win.x << " " << win.h << "x" << win.w
              << ": max |diff| " << d.max_abs << " at (" << py << ", " << px << ")"
              << (AtRoiEdge(files[i], win, py, px) ? " (ROI edge)" : "") << ", mean " << d.mean_abs
              << "\n";
    if (got[i].size() != ref.size()) {
      ADD_FAILURE() << what << " " << files[i].name << ": " << got[i].size() << " bytes, expected " << ref.size();
      continue;
    }
    // Per pixel: the ROI edges of subsampled images get the chroma-step bound.
    int worst_inside = 0, worst_edge = 0;
    double sum_inside = 0;
    size_t n_inside = 0;
    for (size_t k = 0; k < ref.size(); ++k) {
      const int diff = std::abs(int{got[i][k]} - int{ref[k]});
      const int64_t y = static_cast<int64_t>(k / c) / std::max<int64_t>(win.w, 1);
      const int64_t x = static_cast<int64_t>(k / c) % std::max<int64_t>(win.w, 1);
      const bool edge = sub && AtRoiEdge(files[i], win, y, x);
      int& worst = edge ? worst_edge : worst_inside;
      worst = std::max(worst, diff);
      if (!edge) {
        sum_inside += diff;
        ++n_inside;
      }
    }
    // The mean is over the pixels away from ROI edges: a window one or two pixels wide inside a
    // subsampled image is all edge (a 2129x1 window of the 4000x3 4:2:0 image averaged
    // 3.2, every pixel within the edge bound, H100 2026-11-25), and the edge has its own bound.
    if (n_inside > 0) {
      EXPECT_LT(sum_inside / static_cast<double>(n_inside), sub ? kMaxMeanSubsampled : kMaxMeanFull)
          << what << " " << files[i].name << " (mean away from ROI edges)";
    }
    EXPECT_LE(worst_inside, sub ? kMaxDiffSubsampled : kMaxDiffFull) << what << " " << files[i].name;
    // Subsampled chroma at an ROI edge: gpu_cpu_compare.h derives the bound.
    EXPECT_LE(worst_edge, ::conveyor::testing::RoiEdgeBound(SubsamplingOf(files[i]))) << what << " " << files[i].name;
  }
}

// Windows that reach the image's last row and column from an odd origin: where nvJPEG's ROI
// colour conversion reads chroma past its plane (GpuDecoder's allocator slack keeps that read
// inside our allocation; the sanitizer sweep runs these under memcheck every time, not only when a
// random window happens to touch the corner).
inline std::vector<CropWindow> CornerWindows(const std::vector<TestJpeg>& files) {
  std::vector<CropWindow> corner;
  for (const TestJpeg& f : files) {
    const int64_t y = f.height > 1 ? 1 + (f.height - 1) / 3 / 2 * 2 : 0;
    const int64_t x = f.width > 1 ? 1 + (f.width - 1) / 3 / 2 * 2 : 0;
    corner.push_back(CropWindow{y, x, f.height - y, f.width - x});
  }
  return corner;
}

inline std::vector<CropWindow> RandomWindows(const std::vector<TestJpeg>& files, std::mt19937_64& rng) {
  std::vector<CropWindow> windows;
  for (const TestJpeg& f : files) {
    std::uniform_int_distribution<int64_t> h(1, f.height), w(1, f.width);
    CropWindow win{0, 0, h(rng), w(rng)};
    win.y = std::uniform_int_distribution<int64_t>(0, f.height - win.h)(rng);
    win.x = std::uniform_int_distribution<int64_t>(0, f.width - win.w)(rng);
    windows.push_back(win);
  }
  return windows;
}

// Which path took how many images in a call, and whether the engines' buffers were preallocated.
inline void PrintPaths(const GpuDecoder& decoder, GpuDecoderCounters& last, const std::string& what) {
  const GpuDecoderCounters c = decoder.counters();
  std::cout << what << ": engines " << c.images_hardware - last.images_hardware << ", CUDA "
            << c.images_cuda - last.images_cuda << ", CPU " << c.images_cpu - last.images_cpu
            << ", engines' preallocations " << c.hw_preallocations - last.hw_preallocations << "\n";
  last = c;
}

// Every path × every output colour. The fixture's Begin() makes the decoder for the parameters
// and the test's files, or says why this machine cannot run that path (the test then skips).
class GpuDecoderPaths : public ::testing::TestWithParam<std::tuple<DecodePaths, DecodeColor>> {
 protected:
  DecodePaths paths() const { return std::get<0>(GetParam()); }
  DecodeColor color() const { return std::get<1>(GetParam()); }
  // "" when the decoder can run paths() here.
  std::string Begin() {
    GpuDecoderOptions options;
    options.paths = paths();
    options.color = color();
    stream.emplace(cuda::Stream::Create());
    decoder.emplace(options);
    const GpuDecoderCounters c = decoder->counters();
    if (paths() != DecodePaths::kCpuOnly && !c.nvjpeg_available) return "nvJPEG: " + c.unavailable_reason;
    if (paths() == DecodePaths::kHardwareOnly && !c.hardware_available) return "engines: " + c.unavailable_reason;
    files = MakeFiles(::conveyor::testing::Rng());
    return "";
  }
  DecodeRun Run(int slot = 0) { return DecodeRun{*decoder, *stream, pool, color(), slot}; }

  // Made by Begin(), after CONVEYOR_REQUIRE_GPU: nothing here touches CUDA before the GPU check.
  std::optional<cuda::Stream> stream;
  std::optional<GpuDecoder> decoder;
  TbbThreadPool pool{4};
  std::vector<TestJpeg> files;
};

inline auto EveryPathAndColor() {
  return ::testing::Combine(::testing::Values(DecodePaths::kAuto, DecodePaths::kHardwareOnly, DecodePaths::kCudaOnly,
                                              DecodePaths::kCpuOnly),
                            ::testing::Values(DecodeColor::kRgb, DecodeColor::kBgr, DecodeColor::kGray));
}

}  // namespace conveyor::ops::gpu_decoder_test
