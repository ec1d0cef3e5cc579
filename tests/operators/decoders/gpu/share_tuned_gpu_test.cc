// The engines' share tuned (GpuDecoderOptions::engines_share_tuned, parts_tuner.h): the tuner's
// probe runs calls with every 4:2:0 candidate on the engines beside calls with the automatic
// balance. Each call's choice is read before it (GpuDecoderCounters::hw_engines_only_chosen); an
// "engines only" call leaves the CUDA backend no baseline 4:2:0 image, and every call's pixels
// match libjpeg-turbo's, whichever choice decoded them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/tbb_thread_pool.h"
#include "tests/operators/decoders/gpu/decoder_run.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using namespace gpu_decoder_test;  // NOLINT: the shared helpers of these tests

TEST(EnginesShareTuned, EnginesOnlyCallsLeaveTheCudaBackendNoBaselineImage) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 24; ++i) {
    files.push_back(EncodeJpeg(64 + static_cast<int>(rng() % 337), 64 + static_cast<int>(rng() % 337), TJSAMP_420,
                               false, rng));
  }
  GpuDecoderOptions options;
  options.engines_share_tuned = true;
  // Short windows: warm-up 1 call, then one call per choice, hold 2 calls, probe again.
  options.engine_parts_schedule = {.warmup = 1, .settle = 0, .measure = 1, .rounds = 1, .hold = 2};
  GpuDecoder decoder(options);
  if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  int engines_only_calls = 0, balanced_calls = 0;
  for (int call = 0; call < 16; ++call) {
    const GpuDecoderCounters before = decoder.counters();
    const auto windows = call % 2 ? RandomWindows(files, rng) : Whole(files);
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "call " + std::to_string(call));
    const GpuDecoderCounters after = decoder.counters();
    ASSERT_EQ(after.images_hardware + after.images_cuda - before.images_hardware - before.images_cuda, 24)
        << "call " << call;
    if (before.hw_engines_only_chosen) {
      ++engines_only_calls;
      EXPECT_EQ(after.images_cuda - before.images_cuda, 0) << "call " << call << ": engines only";
    } else {
      ++balanced_calls;
    }
  }
  // 16 calls: the warm-up, two probes of 4 choices (2 of them engines only), the holds between.
  EXPECT_GE(engines_only_calls, 4);
  EXPECT_GE(balanced_calls, 5);
  EXPECT_EQ(decoder.counters().calls, 16);
}

}  // namespace
}  // namespace conveyor::ops
