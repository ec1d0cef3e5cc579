// GpuDecoder on the GPU: every path (engines, CUDA backend, CPU, automatic mix) and every output
// colour against libjpeg-turbo's decode of the same files; balancing; the engines switched off;
// errors. Windows, slots and stream order: gpu_decoder_roi_gpu_test; the engines' handles, tuner,
// trusted layouts and failed calls: engines_gpu_test. Files are encoded here with
// libjpeg-turbo (baseline and progressive, 4:4:4, 4:2:2, 4:2:0, grayscale; odd sizes including
// 1x1 and 4000x3); tolerances in decoder_run.h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/memory/stats.h"
#include "core/op/tbb_thread_pool.h"
#include "core/op/workspace.h"
#include "operators/decoders/nvjpeg/nvjpeg_allocators.h"
#include "operators/decoders/nvjpeg/nvjpeg_loader.h"
#include "tests/operators/decoders/gpu/decoder_run.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using namespace gpu_decoder_test;  // NOLINT: the shared helpers of these tests
using ::testing::HasSubstr;

TEST_P(GpuDecoderPaths, MatchesLibjpegTurbo) {
  CONVEYOR_REQUIRE_GPU();
  if (const std::string why = Begin(); !why.empty()) GTEST_SKIP() << why;
  GpuDecoder& decoder = *this->decoder;
  DecodeRun run = Run();
  const auto windows = Whole(files);
  ExpectClose(files, windows, run(files, windows), color(), "full");

  const GpuDecoderCounters c = decoder.counters();
  const int64_t n = static_cast<int64_t>(files.size());
  EXPECT_EQ(c.images_hardware + c.images_cuda + c.images_cpu, n);
  switch (paths()) {
    case DecodePaths::kCpuOnly: EXPECT_EQ(c.images_cpu, n); break;
    case DecodePaths::kCudaOnly: EXPECT_EQ(c.images_hardware, 0); EXPECT_EQ(c.images_cuda + c.fallbacks, n); break;
    case DecodePaths::kHardwareOnly:
      // Progressive files are the engines' to refuse; they go to the CPU and are counted.
      EXPECT_GT(c.images_hardware, 0);
      EXPECT_EQ(c.images_cuda, 0);
      EXPECT_EQ(c.images_cpu, c.fallbacks);
      break;
    case DecodePaths::kAuto: EXPECT_EQ(c.images_cpu, c.nvjpeg_available ? c.fallbacks : n); break;
  }
}
INSTANTIATE_TEST_SUITE_P(AllPaths, GpuDecoderPaths, EveryPathAndColor());

TEST(GpuDecoder, NonJpegGoesToCpuPath) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoder decoder(GpuDecoderOptions{});
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(2);
  const std::vector<TestJpeg> files = MakeFiles(::conveyor::testing::Rng());
  std::vector<bool> is_jpeg(files.size(), true);
  is_jpeg[1] = is_jpeg[4] = false;  // as a PNG would be
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  const auto windows = Whole(files);
  ExpectClose(files, windows, run(files, windows, is_jpeg), DecodeColor::kRgb, "mixed");
  EXPECT_EQ(decoder.counters().images_cpu - decoder.counters().fallbacks, 2);
}

// progressive = kCpu: progressive JPEGs take the CPU path (libjpeg-turbo, upload) beside the GPU
// paths' images, to libjpeg-turbo's pixels; the rest stays on the GPU.
TEST(GpuDecoder, ProgressiveRoutedToTheCpuPath) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoderOptions options;
  options.progressive = ProgressiveRoute::kCpu;
  GpuDecoder decoder(options);
  if (!decoder.counters().nvjpeg_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  const std::vector<TestJpeg> files = MakeFiles(::conveyor::testing::Rng());
  int64_t progressive = 0;
  for (const TestJpeg& f : files) progressive += ParseImageInfo(f.bytes.data(), f.bytes.size()).progressive ? 1 : 0;
  ASSERT_GT(progressive, 0);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  const auto windows = Whole(files);
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "progressive on the CPU");
  const GpuDecoderCounters c = decoder.counters();
  EXPECT_EQ(c.images_cpu - c.fallbacks, progressive);
  EXPECT_EQ(c.images_hardware + c.images_cuda + c.images_cpu, static_cast<int64_t>(files.size()));
  EXPECT_GT(c.cpu_seconds, 0);
}

// Mixed chroma and sizes in one batch, other_chroma = kEnginesOwnCall: the engines decode the 4:2:0
// images in one call per part, the 4:4:4 / gray ones and the large ones in calls of their own
// (counted), all to libjpeg-turbo's pixels, whole and windowed; with the engines' check in phase A
// and beside phase B (engines_check_beside).
class EnginesGroups : public ::testing::TestWithParam<bool> {};

TEST_P(EnginesGroups, OfTheirOwnMatchLibjpegTurbo) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoderOptions options;
  options.other_chroma = OtherChromaRoute::kEnginesOwnCall;
  options.large_pixels = 4'000'000;  // off by default: on here, so the large image gets its own call
  options.engines_check_beside = GetParam();
  GpuDecoder decoder(options);
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 60; ++i) {
    const int h = 40 + static_cast<int>(rng() % 300), w = 40 + static_cast<int>(rng() % 300);
    const int samp = i % 10 == 3 ? TJSAMP_444 : i % 10 == 7 ? TJSAMP_GRAY : TJSAMP_420;
    files.push_back(EncodeJpeg(h, w, samp, false, rng));
  }
  files.push_back(EncodeJpeg(1800, 2400, TJSAMP_420, false, rng));  // 4.3 MP: the large group
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  for (int it = 0; it < 4; ++it) {
    run.slot = it % 2;
    const auto windows = it % 2 == 0 ? Whole(files) : RandomWindows(files, rng);
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "groups, call " + std::to_string(it));
  }
  const GpuDecoderCounters c = decoder.counters();
  EXPECT_EQ(c.images_hardware + c.images_cuda + c.images_cpu, 4 * static_cast<int64_t>(files.size()));
  EXPECT_GE(c.images_engines_other, 4 * 13);  // 12 of 4:4:4 or gray and the large one, every call
}

INSTANTIATE_TEST_SUITE_P(CheckWhere, EnginesGroups, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Beside" : "PhaseA"; });

TEST(GpuDecoder, BalancesEnginesAndCudaAcrossIterations) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoder decoder(GpuDecoderOptions{});
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(8);
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 48; ++i) files.push_back(EncodeJpeg(375, 500, TJSAMP_420, false, rng));
  const auto windows = Whole(files);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  const GpuDecoderCounters process_before = ProcessGpuDecoderCounters();
  for (int it = 0; it < 12; ++it) {
    run.slot = it % 2;
    const auto got = run(files, windows);
    if (it == 11) ExpectClose(files, windows, got, DecodeColor::kRgb, "balanced");
  }
  const GpuDecoderCounters c = decoder.counters();
  std::cout << "engines " << c.images_hardware << ", CUDA " << c.images_cuda << ", share " << c.hw_share << "\n";
  EXPECT_GT(c.images_hardware, 0);
  EXPECT_GT(c.images_cuda, 0);
  EXPECT_GE(c.hw_share, 0.05 - 1e-9);
  EXPECT_LE(c.hw_share, 0.95 + 1e-9);
  // The balancer's inputs, read back a call later for the engines, are counted per decoder and in
  // the process's totals alike (`conveyor bench`'s phase B split reads the latter).
  EXPECT_GE(c.hw_batches, 10);
  EXPECT_GT(c.hw_engines, 0);  // nvJPEG 13 reports the engines (nvjpegGetHardwareDecoderInfo)
  EXPECT_GT(c.hw_cores_per_engine, 0);
  EXPECT_TRUE(c.hw_no_pipeline);  // the default: NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE (gpu_decoder.h)
  EXPECT_GT(c.hw_gpu_seconds, 0);
  EXPECT_GT(c.hw_host_seconds, 0);
  EXPECT_GT(c.cuda_seconds, 0);
  EXPECT_GT(c.cuda_host_seconds, 0);  // the workers' host Huffman and issue, thread time
  EXPECT_GT(c.cuda_issue_seconds, 0);
  EXPECT_GT(c.hw_rate, 0);
  EXPECT_GT(c.cuda_rate, 0);
  const GpuDecoderCounters p = ProcessGpuDecoderCounters();
  EXPECT_EQ(p.calls - process_before.calls, 12);
  EXPECT_EQ(p.hw_batches - process_before.hw_batches, c.hw_batches);
  EXPECT_NEAR(p.hw_gpu_seconds - process_before.hw_gpu_seconds, c.hw_gpu_seconds, 1e-9);
  EXPECT_NEAR(p.hw_host_seconds - process_before.hw_host_seconds, c.hw_host_seconds, 1e-9);
  EXPECT_NEAR(p.cuda_seconds - process_before.cuda_seconds, c.cuda_seconds, 1e-9);
  EXPECT_NEAR(p.cuda_host_seconds - process_before.cuda_host_seconds, c.cuda_host_seconds, 1e-9);
  EXPECT_NEAR(p.cuda_issue_seconds - process_before.cuda_issue_seconds, c.cuda_issue_seconds, 1e-9);
  EXPECT_EQ(p.hw_rate, c.hw_rate);
  EXPECT_EQ(p.cuda_rate, c.cuda_rate);
}

// trace_calls = 2: calls 20 and 21 print the engines' and each CUDA image's times, no others.
TEST(GpuDecoder, TracePrintsTheAskedCallsOnly) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoderOptions options;
  options.trace_calls = 2;
  GpuDecoder decoder(options);
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 24; ++i) files.push_back(EncodeJpeg(64, 80, TJSAMP_420, false, rng));
  const auto windows = Whole(files);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  ::testing::internal::CaptureStderr();
  for (int it = 0; it < 23; ++it) {
    run.slot = it % 2;
    const auto got = run(files, windows);
    if (it == 22) ExpectClose(files, windows, got, DecodeColor::kRgb, "traced");
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ::testing::ContainsRegex("decoder trace: call 20: phase A [0-9]+ us \\(route [0-9]+, engines' check [0-9]+\\); engines "));
  EXPECT_THAT(err, ::testing::ContainsRegex("decoder trace: call 21: phase A [0-9]+ us \\(route [0-9]+, engines' check [0-9]+\\); engines "));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("call 19:")));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("call 22:")));
  // Each engines' part, and each CUDA image: thread:start-end [path kpixels subsampling (p),
  // parse/wait/host/issue(transfer) and the allocator calls, if any].
  EXPECT_THAT(err, ::testing::ContainsRegex(
                       "\\[part 0: [0-9]+ images [0-9]+-[0-9]+ us: wait [0-9]+ us;( [^;]+ [0-9]+ images [0-9]+k px [0-9]+ us;)+\\]"));
  EXPECT_THAT(err, ::testing::ContainsRegex(
                       "[0-9]+:[0-9]+-[0-9]+\\[CUDA backend [0-9]+k [0-9a-z:]+( p)? [0-9]+/[0-9]+/[0-9]+/[0-9]+\\([0-9]+\\)( "
                       "a[0-9]+/[0-9]+)?( gpu-huffman)?\\]"));
}

// options.engines = false (CONVEYOR_JPEG_ENGINES=0 in the tools): no engines even where the GPU has
// them; the CUDA backend decodes their images, to the same pixels. (How the sanitizer runs check
// what the engines' output feeds.)
TEST(GpuDecoder, EnginesTurnedOff) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoderOptions options;
  options.engines = false;
  GpuDecoder decoder(options);
  const GpuDecoderCounters before = decoder.counters();
  if (!before.nvjpeg_available) GTEST_SKIP() << before.unavailable_reason;
  EXPECT_FALSE(before.hardware_available);
  EXPECT_THAT(before.unavailable_reason, HasSubstr("CONVEYOR_JPEG_ENGINES=0"));
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 12; ++i) files.push_back(EncodeJpeg(40 + i * 13, 300 - i * 17, TJSAMP_420, false, rng));
  const auto windows = Whole(files);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "engines off");
  const GpuDecoderCounters c = decoder.counters();
  EXPECT_EQ(c.images_hardware, 0);
  EXPECT_EQ(c.images_cuda, static_cast<int64_t>(files.size()));
}

// nvJPEG's memory is counted per handle: the CUDA backend's decoder allocates through its handle
// only, each allocation with the device slack. The engines' handle: whatever nvJPEG asks of it is
// counted the same way, but on the H100 (nvJPEG of CUDA 13, 2026-11-25) it asked for no device
// memory at all — the engines' memory is nvJPEG's own, outside our pools; the test prints how much
// the engines' decoder took there (device memory gone minus our pool's growth).
TEST(GpuDecoder, NvjpegMemoryCountedPerHandle) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 8; ++i) files.push_back(EncodeJpeg(64 + i * 29, 480 - i * 31, TJSAMP_420, false, rng));
  const auto windows = Whole(files);
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  const int64_t slack = static_cast<int64_t>(nvjpeg::kDeviceSlack);
  {
    GpuDecoderOptions options;
    options.paths = DecodePaths::kCudaOnly;
    GpuDecoder decoder(options);
    if (!decoder.counters().nvjpeg_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
    DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "CUDA backend");
    const GpuDecoderCounters c = decoder.counters();
    EXPECT_GT(c.cuda_memory.device_allocations, 0);
    EXPECT_GT(c.cuda_memory.device_bytes, 0);
    EXPECT_EQ(c.cuda_memory.device_slack_bytes, c.cuda_memory.device_allocations * slack);
    EXPECT_GE(c.cuda_memory.device_peak_bytes, c.cuda_memory.device_bytes + c.cuda_memory.device_slack_bytes);
    EXPECT_GT(c.cuda_memory.pinned_allocations, 0);
    EXPECT_EQ(c.engines_memory.device_allocations, 0);
  }
  size_t free_before = 0, free_after = 0, total = 0;
  CONVEYOR_CUDA_CHECK(cudaDeviceSynchronize());
  CONVEYOR_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
  const int64_t pool_before = MemoryStats::Get(MemoryKind::kDevice).upstream_bytes;
  GpuDecoderOptions options;
  options.paths = DecodePaths::kHardwareOnly;
  GpuDecoder decoder(options);
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "engines");
  CONVEYOR_CUDA_CHECK(cudaDeviceSynchronize());
  CONVEYOR_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
  const int64_t pool_growth = MemoryStats::Get(MemoryKind::kDevice).upstream_bytes - pool_before;
  const GpuDecoderCounters c = decoder.counters();
  EXPECT_GT(c.images_hardware, 0);  // baseline 4:2:0: the engines take them (a refusal goes to the CPU)
  EXPECT_EQ(c.engines_memory.device_slack_bytes, c.engines_memory.device_allocations * slack);
  EXPECT_GE(c.engines_memory.device_peak_bytes, c.engines_memory.device_bytes + c.engines_memory.device_slack_bytes);
  EXPECT_EQ(c.cuda_memory.device_allocations, 0);  // the engines-only decoder never uses the CUDA backend
  constexpr double kMiB = 1 << 20;
  std::cout << "engines' handle: " << c.engines_memory.device_allocations << " device allocations through ours ("
            << c.engines_memory.device_bytes / kMiB << " MiB + " << c.engines_memory.device_slack_bytes / kMiB
            << " MiB slack), " << c.engines_memory.pinned_allocations << " pinned ("
            << c.engines_memory.pinned_bytes / kMiB << " MiB); device memory taken by the engines' decoder: "
            << (static_cast<double>(free_before) - static_cast<double>(free_after)) / kMiB << " MiB, of which our pool "
            << pool_growth / kMiB << " MiB; driver's memory taken while its handle was made "
            << c.engines_memory.driver_bytes_at_create / kMiB << " MiB, while its states were preallocated "
            << c.engines_memory.driver_bytes_at_prealloc / kMiB << " MiB\n";
  EXPECT_GE(c.engines_memory.driver_bytes_at_create, 0);
  EXPECT_GE(c.engines_memory.driver_bytes_at_prealloc, 0);
  // The process's figures are the live decoders' sums: this one is the only one left.
  const GpuDecoderCounters process = ProcessGpuDecoderCounters();
  EXPECT_EQ(process.engines_memory.driver_bytes_at_create, c.engines_memory.driver_bytes_at_create);
  EXPECT_EQ(process.engines_memory.driver_bytes_at_prealloc, c.engines_memory.driver_bytes_at_prealloc);
  EXPECT_EQ(process.engines_memory.pinned_bytes, c.engines_memory.pinned_bytes);
  EXPECT_EQ(process.cuda_memory.device_allocations, 0);  // the CUDA-backend decoder above is gone
}

// progressive_huffman_threshold 0: every progressive JPEG on nvJPEG's GPU-Huffman decoder, the
// baseline ones on host Huffman; pixels against libjpeg-turbo, every image on the CUDA backend.
TEST(GpuDecoder, ProgressiveOnGpuHuffmanMatchesLibjpegTurbo) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 16; ++i) {
    files.push_back(EncodeJpeg(40 + static_cast<int>(rng() % 300), 40 + static_cast<int>(rng() % 300),
                               i % 3 == 0 ? TJSAMP_444 : TJSAMP_420, i % 2 == 0, rng));
  }
  GpuDecoderOptions options;
  options.paths = DecodePaths::kCudaOnly;
  options.progressive_huffman_threshold = 0;
  GpuDecoder decoder(options);
  if (!decoder.counters().nvjpeg_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  ExpectClose(files, Whole(files), run(files, Whole(files)), DecodeColor::kRgb, "whole");
  run.slot = 1;
  const auto windows = RandomWindows(files, rng);
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "windows");
  EXPECT_EQ(decoder.counters().images_cuda, 32);
  EXPECT_EQ(decoder.counters().fallbacks, 0);
}

// A JPEG the CUDA backend finds damaged (BAD_JPEG) is not the decoder's last word: the image goes
// to the CPU path, whose decode gives the verdict (here the test's libjpeg-turbo callback, which
// names the file) — the error that on_error: skip then acts on.
TEST(GpuDecoder, CorruptJpegGoesToTheCpuPathForTheVerdict) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoderOptions options;
  options.paths = DecodePaths::kCudaOnly;
  GpuDecoder decoder(options);
  if (!decoder.counters().nvjpeg_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(2);
  std::vector<TestJpeg> files = MakeFiles(::conveyor::testing::Rng());
  files.resize(3);
  files[1].name = "bad.jpg";
  files[1].bytes = {0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x02, 0x13, 0x37, 0x42};  // SOI, then a broken SOF
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  try {
    run(files, Whole(files));
    FAIL() << "expected the CPU path's error";
  } catch (const nvjpeg::NvjpegError& e) {
    FAIL() << "nvJPEG's error reached the caller: " << e.what();
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("tjDecompress2 failed on bad.jpg"));
  }
}

}  // namespace
}  // namespace conveyor::ops

