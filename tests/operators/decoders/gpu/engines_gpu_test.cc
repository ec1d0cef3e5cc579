// GpuDecoder's hardware engines on the GPU: their images over 1-3 nvJPEG handles, the parts tuner
// alternating handle counts, the common layouts trusted without nvJPEG's support check, a failed
// engines' call sent down the chain, and large 4:2:0 images kept off the balance; every call's
// pixels against libjpeg-turbo's decode of the same files (tolerances in decoder_run.h). The
// decoder's paths and colours: gpu_decoder_gpu_test; preallocation: engines_prealloc_gpu_test; the
// share tuned: share_tuned_gpu_test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/op/tbb_thread_pool.h"
#include "tests/operators/decoders/gpu/decoder_run.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using namespace gpu_decoder_test;  // NOLINT: the shared helpers of these tests
using ::testing::HasSubstr;

// engine_threads: the engines' images in 1, 2 or 3 parts, each on its own nvJPEG
// hardware handle and thread (parts after the first on their own streams), decode to libjpeg-turbo's
// pixels — whole images and random windows, 4:2:0 and 4:4:4, with the stream busy before the call
// (a part that did not wait for earlier work would be overwritten by the test's 0xA5 fill).
TEST(GpuDecoder, EnginesPartsOnTheirOwnHandlesMatchLibjpegTurbo) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 80; ++i) {
    const int h = 40 + static_cast<int>(rng() % 220), w = 40 + static_cast<int>(rng() % 220);
    files.push_back(EncodeJpeg(h, w, i % 3 == 0 ? TJSAMP_444 : TJSAMP_420, false, rng));
  }
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  for (int threads : {1, 2, 3}) {
    GpuDecoderOptions options;
    options.paths = DecodePaths::kHardwareOnly;
    options.engine_threads = threads;
    GpuDecoder decoder(options);
    if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
    EXPECT_EQ(decoder.counters().hw_parts, threads);
    DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
    for (int it = 0; it < 4; ++it) {
      run.slot = it % 2;
      run.spin_ms = it == 2 ? 2.0 : 0.0;
      const auto windows = it % 2 == 0 ? Whole(files) : RandomWindows(files, rng);
      ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb,
                  "engines in " + std::to_string(threads) + " parts, call " + std::to_string(it));
    }
    const GpuDecoderCounters c = decoder.counters();
    EXPECT_EQ(c.images_hardware + c.images_cpu, 4 * 80);  // an image the engines refuse goes to the CPU path
    EXPECT_GT(c.images_hardware, 2 * 80);
    // Each nvJPEG call is timed and read back at its slot's next call (calls 3 and 4 read 1 and 2):
    // one per part for the 4:2:0 images (a part may get none when the 4:4:4 call's pixels fill its
    // share), one on the last part for the 4:4:4 ones.
    EXPECT_GE(c.hw_batches, 2 * threads);
    EXPECT_LE(c.hw_batches, 2 * (threads + 1));
    EXPECT_GT(c.images_engines_other, 0);
  }
}

// The parts tuner on a one-call schedule: calls alternate two handles and one, each choice with its
// own balance, and every call's pixels match libjpeg-turbo (random windows, mixed sizes, the CUDA
// backend beside the engines).
TEST(GpuDecoder, EnginePartsTunerAlternatesHandlesAndPixelsStayRight) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 96; ++i) {
    const int h = 40 + static_cast<int>(rng() % 300), w = 40 + static_cast<int>(rng() % 300);
    files.push_back(EncodeJpeg(h, w, i % 8 == 0 ? TJSAMP_444 : TJSAMP_420, i % 16 == 5, rng));
  }
  GpuDecoderOptions options;
  options.engine_threads = 2;
  options.engine_parts_schedule = {.warmup = 1, .settle = 0, .measure = 1, .rounds = 1, .hold = 1};
  GpuDecoder decoder(options);
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  std::set<int> handles;
  for (int it = 0; it < 12; ++it) {
    handles.insert(decoder.counters().hw_parts_chosen);  // what this call may use
    run.slot = it % 2;
    const auto windows = it % 3 == 0 ? Whole(files) : RandomWindows(files, rng);
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "tuned call " + std::to_string(it));
  }
  EXPECT_EQ(handles, (std::set<int>{1, 2}));
  const GpuDecoderCounters c = decoder.counters();
  EXPECT_EQ(c.hw_parts, 2);
  EXPECT_GT(c.images_hardware, 0);
  EXPECT_GT(c.images_cuda, 0);
}

// The engines' images of a common layout skip nvJPEG's support check (EnginesCheck::kTrustCommon,
// the default); tiny ones (a side under 16) are still checked; kAlways checks every one. Pixels
// against libjpeg-turbo either way.
TEST(GpuDecoder, EnginesTrustCommonLayoutsWithoutTheCheck) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 64; ++i) {
    const bool tiny = i % 16 == 3;
    const int h = tiny ? 8 + static_cast<int>(rng() % 7) : 40 + static_cast<int>(rng() % 300);
    const int w = 40 + static_cast<int>(rng() % 300);
    files.push_back(EncodeJpeg(h, w, i % 8 == 0 ? TJSAMP_444 : TJSAMP_420, false, rng));
  }
  for (EnginesCheck mode : {EnginesCheck::kTrustCommon, EnginesCheck::kAlways}) {
    GpuDecoderOptions options;
    options.engines_check = mode;
    options.hw_load = 1;  // every 4:2:0 image on the engines
    GpuDecoder decoder(options);
    if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
    cuda::Stream stream = cuda::Stream::Create();
    TbbThreadPool pool(4);
    DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
    for (int it = 0; it < 2; ++it) {
      run.slot = it;
      const auto windows = it == 0 ? Whole(files) : RandomWindows(files, rng);
      ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "call " + std::to_string(it));
    }
    const GpuDecoderCounters c = decoder.counters();
    EXPECT_EQ(c.hw_failed_calls, 0);
    EXPECT_GT(c.images_hardware, 0);
    if (mode == EnginesCheck::kAlways) {
      EXPECT_EQ(c.hw_unchecked, 0);
    } else {
      EXPECT_EQ(c.hw_unchecked, 2 * (64 - 8 - 4));  // 4:2:0 (not every 8th, 4:4:4), none of the 4 tiny ones
    }
  }
}

// An engines' call that fails (here: nothing checked, progressive files among the baseline ones,
// which the engines cannot decode) is not an error: its images go down the chain (the CPU path,
// the engines being the only GPU path), and from then on every image gets nvJPEG's check.
TEST(GpuDecoder, FailedEnginesCallGoesDownTheChain) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 24; ++i) {
    files.push_back(EncodeJpeg(40 + static_cast<int>(rng() % 200), 40 + static_cast<int>(rng() % 200), TJSAMP_420,
                               i % 6 == 1, rng));
  }
  GpuDecoderOptions options;
  options.engines_check = EnginesCheck::kNever;
  options.paths = DecodePaths::kHardwareOnly;
  GpuDecoder decoder(options);
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  ExpectClose(files, Whole(files), run(files, Whole(files)), DecodeColor::kRgb, "failed call");
  GpuDecoderCounters c = decoder.counters();
  EXPECT_EQ(c.hw_failed_calls, 1);
  EXPECT_EQ(c.hw_unchecked, 24);
  EXPECT_EQ(c.images_hardware, 0);
  EXPECT_EQ(c.images_cpu, 24);
  run.slot = 1;
  const auto windows = RandomWindows(files, rng);
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "checked call");
  c = decoder.counters();
  EXPECT_EQ(c.hw_failed_calls, 1);
  EXPECT_EQ(c.hw_unchecked, 24);    // the second call checked every image
  EXPECT_EQ(c.images_hardware, 20);  // the baseline ones; the 4 progressive ones went to the CPU
}

// engines_only_pixels: 4:2:0 images above it stay on the engines however the balance leans (here a
// fixed share of 0.05 that sends almost every candidate to the CUDA backend); pixels against
// libjpeg-turbo, whole and windowed.
TEST(GpuDecoder, FourTwoZeroAboveTheEnginesOnlySizeStaysOnTheEngines) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  int large = 0;
  for (int i = 0; i < 30; ++i) {
    const bool big = i % 3 == 0;
    const int h = big ? 300 + static_cast<int>(rng() % 200) : 40 + static_cast<int>(rng() % 200);
    const int w = big ? 400 + static_cast<int>(rng() % 200) : 40 + static_cast<int>(rng() % 200);
    large += big ? 1 : 0;
    files.push_back(EncodeJpeg(h, w, TJSAMP_420, false, rng));
  }
  GpuDecoderOptions options;
  options.hw_load = 0.05;
  options.engines_only_pixels = 100'000;  // every big one (>= 120,000 pixels), none of the small
  GpuDecoder decoder(options);
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  for (int call = 0; call < 4; ++call) {
    const GpuDecoderCounters before = decoder.counters();
    const auto windows = call % 2 ? RandomWindows(files, rng) : Whole(files);
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "call " + std::to_string(call));
    const GpuDecoderCounters after = decoder.counters();
    EXPECT_GE(after.images_hardware - before.images_hardware, large) << "call " << call;
    EXPECT_LE(after.images_cuda - before.images_cuda, 30 - large) << "call " << call;
    EXPECT_GT(after.images_cuda - before.images_cuda, 0) << "call " << call << ": the share sent none of the small";
  }
}

}  // namespace
}  // namespace conveyor::ops
