// JPEG 2000 on the GPU (nvJPEG2000, operators/decoders/jpeg2000_path.h) against OpenJPEG on the CPU
// (formats/jpeg2000.h, the CPU backend's decoder), on fresh photo-like files OpenJPEG wrote: JP2 and
// raw J2K, gray and RGB, tiled and not, lossless (equal, byte for byte) and lossy (within
// kJpeg2000Lossy, gpu_cpu_compare.h), to RGB / BGR / GRAY, whole and in windows, through GpuDecoder
// and through readers.file → decoders.image / decoders.image_random_crop pipelines on device gpu.
// What the path refuses (12- and 16-bit, gray+alpha, RGBA) is decoded on the CPU and counted.
// Without nvJPEG2000 each test says so and skips, except the one that checks that case.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/spec.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/workspace.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "operators/decoders/formats/jpeg2000.h"
#include "operators/decoders/gpu_decoder.h"
#include "tests/operators/decoders/gpu/gpu_cpu_compare.h"
#include "tests/util/gpu_test.h"
#include "tests/util/pipeline_outputs.h"
#include "tools/testimages/format_images.h"

namespace conveyor::ops {
namespace {

using ::conveyor::testing::kJpeg2000Lossy;
using ::testing::HasSubstr;

struct J2k {
  std::string name;
  std::vector<uint8_t> bytes;
  int64_t height = 0, width = 0;
  bool lossy = false;
};

// A fresh photo-like image of `channels` samples of `bits`, written by OpenJPEG.
J2k MakeJ2k(int h, int w, int channels, int bits, bool lossy, bool jp2, int tile = 0, int resolutions = 3) {
  const testimages::Image8 img = testimages::MakePhotoLike(h, w, channels, ::conveyor::testing::Rng()());
  const unsigned max = (1u << bits) - 1;
  std::vector<uint16_t> samples(img.pixels.size());
  for (size_t k = 0; k < samples.size(); ++k) samples[k] = static_cast<uint16_t>((img.pixels[k] * max + 127) / 255);
  testimages::Jpeg2000Options o;
  o.jp2 = jp2;
  o.lossless = !lossy;
  o.rate = 8;
  o.tile = tile;
  o.resolutions = resolutions;
  J2k f;
  f.name = std::to_string(channels) + "c_" + std::to_string(bits) + "bit_" + (lossy ? "lossy" : "lossless") +
           (tile > 0 ? "_tiles" + std::to_string(tile) : "") + "_" + std::to_string(h) + "x" + std::to_string(w) +
           (jp2 ? ".jp2" : ".j2k");
  f.bytes = testimages::EncodeJpeg2000(samples, h, w, channels, bits, o);
  f.height = h;
  f.width = w;
  f.lossy = lossy;
  return f;
}

// What the path takes: 8-bit gray and RGB of random sizes, every container, tiled and not, both
// wavelets, and a few shapes at the edge (one row of pixels, one resolution level).
std::vector<J2k> GpuFiles() {
  std::uniform_int_distribution<int> side(40, 160);  // tiles of 32-64: several per image
  auto& rng = ::conveyor::testing::Rng();
  return {
      MakeJ2k(side(rng), side(rng), 3, 8, false, true),
      MakeJ2k(side(rng), side(rng), 3, 8, false, false, 32),
      MakeJ2k(side(rng), side(rng), 1, 8, false, false),
      MakeJ2k(side(rng), side(rng), 1, 8, false, true, 48),
      MakeJ2k(side(rng), side(rng), 3, 8, true, true),
      MakeJ2k(side(rng), side(rng), 3, 8, true, false, 64),
      MakeJ2k(side(rng), side(rng), 1, 8, true, true),
      MakeJ2k(1, 97, 3, 8, false, false, 0, 1),
      MakeJ2k(301, 3, 1, 8, false, true, 0, 2),
  };
}

OutputColor OutputColorOf(DecodeColor c) {
  return c == DecodeColor::kRgb ? OutputColor::kRgb : c == DecodeColor::kBgr ? OutputColor::kBgr : OutputColor::kGray;
}

// The CPU backend's decode of `win` (OpenJPEG).
std::vector<uint8_t> CpuDecode(const J2k& f, DecodeColor color, const CropWindow& win) {
  const ImageInfo info = ParseJpeg2000Info(f.bytes.data(), f.bytes.size(), kDefaultMaxPixels);
  std::vector<uint8_t> out(static_cast<size_t>(win.h * win.w * DecodeChannels(color)));
  DecodeJpeg2000(f.bytes.data(), f.bytes.size(), info, OutputColorOf(color), win, out.data(), kDefaultMaxPixels);
  return out;
}

// One Decode call over `files` (their `windows`) into outputs poisoned with 0xA5; the host copies.
std::vector<std::vector<uint8_t>> Decode(GpuDecoder& decoder, cuda::Stream& stream, TbbThreadPool& pool,
                                         const std::vector<J2k>& files, const std::vector<CropWindow>& windows,
                                         int slot) {
  const int n = static_cast<int>(files.size());
  const DecodeColor color = decoder.options().color;
  const int c = DecodeChannels(color);
  OpSpec spec("decoders.image", "dec");
  Workspace ws(spec, n);
  ws.set_stream(stream.view());
  ws.set_thread_pool(&pool);
  ws.set_slot(slot);
  std::vector<Buffer> outs;
  std::vector<GpuDecodeSample> samples(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const size_t bytes = static_cast<size_t>(windows[i].h * windows[i].w * c);
    outs.push_back(Buffer::Allocate(MemoryKind::kDevice, std::max<size_t>(bytes, 1), stream.view()));
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(outs.back().device_ptr(), 0xA5, outs.back().size(), stream.get()));
    GpuDecodeSample& s = samples[static_cast<size_t>(i)];
    s.data = files[i].bytes.data();
    s.size = files[i].bytes.size();
    s.is_jpeg = false;
    s.is_jpeg2000 = true;
    s.height = files[i].height;
    s.width = files[i].width;
    s.roi = windows[i];
    s.out = static_cast<uint8_t*>(outs.back().device_ptr());
  }
  decoder.Decode(
      samples, ws,
      [&](int i, uint8_t* dst) {
        const std::vector<uint8_t> ref = CpuDecode(files[i], color, windows[i]);
        std::copy(ref.begin(), ref.end(), dst);
      },
      [&](int i) { return files[i].name; }, "op \"dec\" (decoders.image)");
  std::vector<std::vector<uint8_t>> host(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    host[i].resize(static_cast<size_t>(windows[i].h * windows[i].w * c));
    if (host[i].empty()) continue;
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(host[i].data(), outs[i].device_ptr(), host[i].size(), cudaMemcpyDeviceToHost,
                                        stream.get()));
  }
  stream.Synchronize();
  return host;
}

// Lossless: equal; lossy: within kJpeg2000Lossy. Prints the figures.
void ExpectMatchesCpu(const J2k& f, DecodeColor color, const CropWindow& win, const std::vector<uint8_t>& got,
                      const std::string& what) {
  const std::vector<uint8_t> want = CpuDecode(f, color, win);
  ASSERT_EQ(got.size(), want.size()) << what << " " << f.name;
  int worst = 0;
  double sum = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    const int d = std::abs(int{got[k]} - int{want[k]});
    worst = std::max(worst, d);
    sum += d;
  }
  const double mean = want.empty() ? 0 : sum / static_cast<double>(want.size());
  std::cout << what << " " << f.name << " window " << win.y << "," << win.x << " " << win.h << "x" << win.w
            << ": max |diff| " << worst << ", mean " << mean << "\n";
  if (!f.lossy) {
    EXPECT_EQ(worst, 0) << what << " " << f.name << " (lossless: byte for byte)";
  } else {
    EXPECT_LE(worst, kJpeg2000Lossy.max_abs) << what << " " << f.name;
    EXPECT_LE(mean, kJpeg2000Lossy.mean_abs) << what << " " << f.name;
  }
}

std::vector<CropWindow> WholeWindows(const std::vector<J2k>& files) {
  std::vector<CropWindow> w;
  for (const J2k& f : files) w.push_back(CropWindow{0, 0, f.height, f.width});
  return w;
}

// Random windows, and windows reaching the last row and column from an odd origin (tile and
// code-block edges cut at odd places).
std::vector<CropWindow> RandomWindows(const std::vector<J2k>& files, bool corner) {
  std::vector<CropWindow> windows;
  for (const J2k& f : files) {
    if (corner) {
      const int64_t y = f.height > 1 ? 1 + (f.height - 1) / 3 / 2 * 2 : 0;
      const int64_t x = f.width > 1 ? 1 + (f.width - 1) / 3 / 2 * 2 : 0;
      windows.push_back(CropWindow{y, x, f.height - y, f.width - x});
      continue;
    }
    auto& rng = ::conveyor::testing::Rng();
    CropWindow win{0, 0, std::uniform_int_distribution<int64_t>(1, f.height)(rng),
                   std::uniform_int_distribution<int64_t>(1, f.width)(rng)};
    win.y = std::uniform_int_distribution<int64_t>(0, f.height - win.h)(rng);
    win.x = std::uniform_int_distribution<int64_t>(0, f.width - win.w)(rng);
    windows.push_back(win);
  }
  return windows;
}

const char* ColorName(DecodeColor c) { return c == DecodeColor::kRgb ? "RGB" : c == DecodeColor::kBgr ? "BGR" : "GRAY"; }

TEST(Jpeg2000Gpu, MatchesOpenJpegInEveryColourWholeAndInWindows) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<J2k> files = GpuFiles();
  const int64_t n = static_cast<int64_t>(files.size());
  TbbThreadPool pool(4);
  for (const DecodeColor color : {DecodeColor::kRgb, DecodeColor::kBgr, DecodeColor::kGray}) {
    GpuDecoderOptions options;
    options.color = color;
    cuda::Stream stream = cuda::Stream::Create();
    GpuDecoder decoder(options);
    const std::vector<CropWindow> windows[] = {WholeWindows(files), RandomWindows(files, false),
                                               RandomWindows(files, true), RandomWindows(files, false)};
    for (int call = 0; call < 4; ++call) {
      const std::vector<std::vector<uint8_t>> got = Decode(decoder, stream, pool, files, windows[call], call % 2);
      const GpuDecoderCounters c = decoder.counters();
      if (!c.nvjpeg2k_available) GTEST_SKIP() << "nvJPEG2000 unavailable here: " << c.nvjpeg2k_unavailable_reason;
      const std::string what = std::string(ColorName(color)) + " call " + std::to_string(call);
      for (size_t i = 0; i < files.size(); ++i) ExpectMatchesCpu(files[i], color, windows[call][i], got[i], what);
    }
    const GpuDecoderCounters c = decoder.counters();
    EXPECT_EQ(c.images_jpeg2000, 4 * n) << ColorName(color) << ": every image on nvJPEG2000";
    EXPECT_EQ(c.fallbacks, 0);
    EXPECT_EQ(c.images_cpu, 0);
    EXPECT_GT(c.jpeg2000_seconds, 0);
  }
}

// 12- and 16-bit samples, gray+alpha and RGBA: refused by the path, decoded by OpenJPEG on the CPU
// (uploaded), each counted as a fallback; the 8-bit RGB file beside them stays on nvJPEG2000.
TEST(Jpeg2000Gpu, WhatThePathRefusesTheCpuDecodesAndCounts) {
  CONVEYOR_REQUIRE_GPU();
  std::uniform_int_distribution<int> side(24, 120);
  auto& rng = ::conveyor::testing::Rng();
  const std::vector<J2k> files = {
      MakeJ2k(side(rng), side(rng), 1, 12, false, false), MakeJ2k(side(rng), side(rng), 3, 16, false, true),
      MakeJ2k(side(rng), side(rng), 4, 8, false, true),   MakeJ2k(side(rng), side(rng), 2, 8, false, false),
      MakeJ2k(side(rng), side(rng), 3, 8, false, true),
  };
  TbbThreadPool pool(3);
  for (const DecodeColor color : {DecodeColor::kRgb, DecodeColor::kGray}) {
    GpuDecoderOptions options;
    options.color = color;
    cuda::Stream stream = cuda::Stream::Create();
    GpuDecoder decoder(options);
    const std::vector<CropWindow> windows = RandomWindows(files, false);
    const std::vector<std::vector<uint8_t>> got = Decode(decoder, stream, pool, files, windows, 0);
    const GpuDecoderCounters c = decoder.counters();
    if (!c.nvjpeg2k_available) GTEST_SKIP() << "nvJPEG2000 unavailable here: " << c.nvjpeg2k_unavailable_reason;
    for (size_t i = 0; i < files.size(); ++i) {
      EXPECT_EQ(got[i], CpuDecode(files[i], color, windows[i])) << ColorName(color) << " " << files[i].name;
    }
    EXPECT_EQ(c.images_jpeg2000, 1) << ColorName(color);
    EXPECT_EQ(c.fallbacks, 4) << ColorName(color);
    EXPECT_EQ(c.images_cpu, 4) << ColorName(color);
  }
}

// A missing nvJPEG2000 (here: an explicit path to nothing): said once on stderr, at the first JPEG
// 2000 image, with the reason in the counters; every image decoded by OpenJPEG and counted as CPU.
TEST(Jpeg2000Gpu, WithoutNvjpeg2000TheCpuDecodesAndItIsSaidOnce) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<J2k> files = {MakeJ2k(57, 83, 3, 8, false, true), MakeJ2k(64, 31, 1, 8, true, false)};
  GpuDecoderOptions options;
  options.nvjpeg2k_path = "/nonexistent/libnvjpeg2k.so.0";
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(2);
  GpuDecoder decoder(options);
  EXPECT_FALSE(decoder.counters().nvjpeg2k_available);
  EXPECT_EQ(decoder.counters().nvjpeg2k_unavailable_reason, "");  // nothing tried before a JPEG 2000 image
  for (int call = 0; call < 2; ++call) {
    ::testing::internal::CaptureStderr();
    const std::vector<CropWindow> windows = RandomWindows(files, false);
    const std::vector<std::vector<uint8_t>> got = Decode(decoder, stream, pool, files, windows, call);
    const std::string said = ::testing::internal::GetCapturedStderr();
    if (call == 0) {
      EXPECT_THAT(said, HasSubstr("nvJPEG2000 unavailable, JPEG 2000 decoded on the CPU and uploaded"));
      EXPECT_THAT(said, HasSubstr("/nonexistent/libnvjpeg2k.so.0"));
    } else {
      EXPECT_THAT(said, ::testing::Not(HasSubstr("nvJPEG2000")));
    }
    for (size_t i = 0; i < files.size(); ++i) EXPECT_EQ(got[i], CpuDecode(files[i], DecodeColor::kRgb, windows[i]));
  }
  const GpuDecoderCounters c = decoder.counters();
  EXPECT_FALSE(c.nvjpeg2k_available);
  EXPECT_THAT(c.nvjpeg2k_unavailable_reason, HasSubstr("/nonexistent/libnvjpeg2k.so.0"));
  EXPECT_EQ(c.images_jpeg2000, 0);
  EXPECT_EQ(c.images_cpu, 4);
  EXPECT_EQ(c.fallbacks, 0);
}

// readers.file → decoders.image and decoders.image_random_crop on device gpu against the same
// pipeline on the CPU, two epochs: GPU-able files on nvJPEG2000, refused ones on the CPU.
std::string MakeFolder(std::vector<J2k>& files) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path root =
      std::filesystem::path(base ? base : "/tmp") / ("jpeg2000_gpu_" + std::to_string(std::random_device{}()));
  std::uniform_int_distribution<int> side(40, 128);
  auto& rng = ::conveyor::testing::Rng();
  files = {MakeJ2k(side(rng), side(rng), 3, 8, false, true),  MakeJ2k(side(rng), side(rng), 1, 8, false, false),
           MakeJ2k(side(rng), side(rng), 3, 8, true, true),   MakeJ2k(side(rng), side(rng), 3, 8, false, false, 32),
           MakeJ2k(side(rng), side(rng), 1, 12, false, false), MakeJ2k(side(rng), side(rng), 4, 8, false, true)};
  for (size_t i = 0; i < files.size(); ++i) {
    const std::filesystem::path dir = root / (i % 2 ? "b" : "a");
    std::filesystem::create_directories(dir);
    testimages::WriteFile((dir / files[i].name).string(), files[i].bytes);
  }
  return root.string();
}

std::string PipelineYaml(const std::string& root, const std::string& device, const std::string& color) {
  const std::string d = "device: " + device;
  return "pipeline: {name: jpeg2000, batch_size: 3, " + d + ", num_threads: 4, prefetch_depth: 2, seed: 5}\nops:\n"
         "  - {op: readers.file, name: reader, args: {file_root: \"" + root + "\", random_shuffle: false}, "
         "outputs: [files, labels]}\n"
         "  - {op: decoders.image, name: dec, " + d + ", inputs: [files], args: {output_type: " + color +
         "}, outputs: [images]}\n"
         "  - {op: decoders.image_random_crop, name: crop, " + d + ", inputs: [files], args: {output_type: " + color +
         "}, outputs: [crops]}\n"
         "outputs: [images, crops]\n";
}

TEST(Jpeg2000Gpu, DecodersOnTheGpuEqualTheCpuPipeline) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<J2k> files;
  const std::string root = MakeFolder(files);
  for (const std::string color : {"RGB", "GRAY"}) {
    const GpuDecoderCounters before = ProcessGpuDecoderCounters();
    Pipeline cpu = Pipeline::FromYaml(PipelineYaml(root, "cpu", color));
    Pipeline gpu = Pipeline::FromYaml(PipelineYaml(root, "gpu", color));
    cpu.Build();
    gpu.Build();
    for (int k = 0; k < 4; ++k) {  // two epochs of 6 files
      PipelineOutputs a = cpu.Outputs(), b = gpu.Outputs();
      if (k == 0 && !ProcessGpuDecoderCounters().nvjpeg2k_available) {
        GTEST_SKIP() << "nvJPEG2000 unavailable here: " << ProcessGpuDecoderCounters().nvjpeg2k_unavailable_reason;
      }
      for (const char* name : {"images", "crops"}) {
        const TensorListCPU want = testing::OutputOnHost(a, a.Index(name)), got = testing::OutputOnHost(b, b.Index(name));
        ASSERT_EQ(got.shapes(), want.shapes()) << color << " " << name << " iteration " << k;
        for (int i = 0; i < want.num_samples(); ++i) {
          const std::string file = want.source(i) != nullptr ? want.source(i)->file : "";
          const std::string what = color + " " + name + " iteration " + std::to_string(k) + " " + file;
          const bool lossy = file.find("lossy") != std::string::npos;
          ::conveyor::testing::ExpectDecodedClose(got, want, i, lossy ? kJpeg2000Lossy : ::conveyor::testing::DecodeTolerance{},
                                                  what);
        }
      }
      a.Release();
      b.Release();
      cpu.Run();
      gpu.Run();
    }
    // 4 of the 6 files are 8-bit gray or RGB: 2 epochs x 2 nodes x 4 on nvJPEG2000 at least (the
    // pipeline may have decoded iterations ahead).
    const GpuDecoderCounters after = ProcessGpuDecoderCounters();
    EXPECT_GE(after.images_jpeg2000 - before.images_jpeg2000, 16) << color;
    EXPECT_GE(after.fallbacks - before.fallbacks, 8) << color;
  }
}

}  // namespace
}  // namespace conveyor::ops
