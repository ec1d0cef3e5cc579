// GpuDecoder's windows on the GPU: ROI decodes (random windows, windows reaching the image's last
// row and column) against libjpeg-turbo's decode of the same window on every path and colour; a
// slot's second call with other windows, both slots; work enqueued on the stream before a call
// (the outputs' fill must not overwrite decoded images). Helpers and tolerances: decoder_run.h.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "core/cuda/stream.h"
#include "core/op/tbb_thread_pool.h"
#include "tests/operators/decoders/gpu/decoder_run.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using namespace gpu_decoder_test;  // NOLINT: the shared helpers of these tests

// Random windows, then corner windows: the second call on the same slot, with other windows (and
// so, for the engines, other images and sizes) than the first.
TEST_P(GpuDecoderPaths, RoiEqualsFullDecodeCropped) {
  CONVEYOR_REQUIRE_GPU();
  if (const std::string why = Begin(); !why.empty()) GTEST_SKIP() << why;
  GpuDecoderCounters last;
  DecodeRun run = Run();
  const std::vector<CropWindow> windows = RandomWindows(files, ::conveyor::testing::Rng());
  ExpectClose(files, windows, run(files, windows), color(), "roi");
  PrintPaths(*decoder, last, "roi");
  const std::vector<CropWindow> corner = CornerWindows(files);
  ExpectClose(files, corner, run(files, corner), color(), "roi corner");
  PrintPaths(*decoder, last, "roi corner");
}

// The corner windows first on a fresh decoder, then random windows on the other slot, then the
// whole images on slot 0: each slot's state sees a batch unlike its last.
TEST_P(GpuDecoderPaths, CornerWindowsFreshAndOnBothSlots) {
  CONVEYOR_REQUIRE_GPU();
  if (const std::string why = Begin(); !why.empty()) GTEST_SKIP() << why;
  GpuDecoderCounters last;
  DecodeRun slot0 = Run(0), slot1 = Run(1);
  const std::vector<CropWindow> corner = CornerWindows(files);
  ExpectClose(files, corner, slot0(files, corner), color(), "fresh corner");
  PrintPaths(*decoder, last, "fresh corner");
  const std::vector<CropWindow> windows = RandomWindows(files, ::conveyor::testing::Rng());
  ExpectClose(files, windows, slot1(files, windows), color(), "slot 1 roi");
  PrintPaths(*decoder, last, "slot 1 roi");
  const std::vector<CropWindow> whole = Whole(files);
  ExpectClose(files, whole, slot0(files, whole), color(), "slot 0 whole");
  PrintPaths(*decoder, last, "slot 0 whole");
}

INSTANTIATE_TEST_SUITE_P(AllPaths, GpuDecoderPaths, EveryPathAndColor());

// Work enqueued on the stream before Decode (here a 200 ms spin, then a 0xA5 fill of the outputs)
// comes first on every path: an image written before the fill ran would come back as 0xA5. The
// engines get the batch's baseline JPEGs (every subsampling, small and odd sizes among them).
TEST(GpuDecoder, EnginesWaitForEarlierWorkOnTheStream) {
  CONVEYOR_REQUIRE_GPU();
  for (DecodePaths paths : {DecodePaths::kHardwareOnly, DecodePaths::kAuto, DecodePaths::kCudaOnly}) {
    GpuDecoderOptions options;
    options.paths = paths;
    GpuDecoder decoder(options);
    const GpuDecoderCounters before = decoder.counters();
    if (!before.nvjpeg_available) GTEST_SKIP() << before.unavailable_reason;
    if (paths == DecodePaths::kHardwareOnly && !before.hardware_available) continue;
    cuda::Stream stream = cuda::Stream::Create();
    TbbThreadPool pool(4);
    const std::vector<TestJpeg> files = MakeFiles(::conveyor::testing::Rng());
    DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
    run.spin_ms = 200;
    const std::string what = "after a spin, paths " + std::to_string(static_cast<int>(paths));
    ExpectClose(files, Whole(files), run(files, Whole(files)), DecodeColor::kRgb, what + ", whole");
    const std::vector<CropWindow> corner = CornerWindows(files);
    ExpectClose(files, corner, run(files, corner), DecodeColor::kRgb, what + ", windows");
    const GpuDecoderCounters after = decoder.counters();
    if (paths == DecodePaths::kHardwareOnly) {
      EXPECT_GT(after.images_hardware, 0);
      // The spin is waited for on the host, before the engines' call.
      EXPECT_GT(after.hw_ready_wait_seconds, 0.1);
    }
  }
}

// engines_wait = false (CONVEYOR_JPEG_ENGINES_WAIT=0 in the tools) takes the wait away (the engines' wait time stays ~0). Whether the
// engines then order themselves after the earlier work is nvJPEG's business: printed, not
// asserted — the figure that tells whether the wait is needed on this driver.
TEST(GpuDecoder, EnginesWaitTurnedOff) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoderOptions options;
  options.paths = DecodePaths::kHardwareOnly;
  options.engines_wait = false;
  GpuDecoder decoder(options);
  const GpuDecoderCounters before = decoder.counters();
  if (!before.hardware_available) GTEST_SKIP() << before.unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  const std::vector<TestJpeg> files = MakeFiles(::conveyor::testing::Rng());
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  run.spin_ms = 200;
  const std::vector<CropWindow> whole = Whole(files);
  const std::vector<std::vector<uint8_t>> got = run(files, whole);
  int overwritten = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::vector<uint8_t> ref = ReferenceDecode(files[i], DecodeColor::kRgb, whole[i]);
    if (Compare(got[i], ref).mean_abs > 10) ++overwritten;
  }
  std::cout << "without the wait: " << overwritten << " of " << files.size()
            << " images differ from libjpeg-turbo by a mean over 10 (engines " << decoder.counters().images_hardware
            << " images)\n";
  EXPECT_GT(decoder.counters().images_hardware, 0);
  EXPECT_LT(decoder.counters().hw_ready_wait_seconds, 0.05);
}

}  // namespace
}  // namespace conveyor::ops
