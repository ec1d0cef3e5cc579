// GpuDecoder's look-ahead (GpuDecoder::DecodeAhead, ahead_path.h): a call's costliest CUDA-backend
// images decoded before the call on the decoder's own threads, then copied in. On a real GPU with
// real JPEGs from libjpeg-turbo (fresh random sizes, windows and layouts): the pixels must match
// libjpeg-turbo's as every other path's do, and match the call's own CUDA-backend decode byte for
// byte (but at the ROI edges of subsampled images, where nvJPEG reads past its chroma plane); a look at other bytes or another call is never used; the counters account for every image
// picked; large balanced 4:2:0 photos are picked from ahead_balanced_pixels on; a decoder destroyed
// with work still ahead ends cleanly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/tbb_thread_pool.h"
#include "operators/decoders/decode_route.h"
#include "tests/operators/decoders/gpu/decoder_run.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using namespace gpu_decoder_test;  // NOLINT: the shared helpers of these tests

// Progressive and non-4:2:0 files (the CUDA backend's alone), with baseline 4:2:0 ones between
// (the engines' or the balance's).
std::vector<TestJpeg> MixedFiles(std::mt19937_64& rng, int n) {
  const int layouts[] = {TJSAMP_420, TJSAMP_422, TJSAMP_444, TJSAMP_GRAY};
  std::vector<TestJpeg> files;
  for (int i = 0; i < n; ++i) {
    files.push_back(EncodeJpeg(64 + static_cast<int>(rng() % 700), 64 + static_cast<int>(rng() % 700),
                               layouts[rng() % 4], rng() % 3 == 0, rng));
  }
  return files;
}

GpuDecoderOptions AheadOptions() {
  GpuDecoderOptions options;
  options.ahead_cost = 1;  // every image the CUDA backend takes alone
  options.ahead_images = 64;
  options.ahead_threads = 2;
  options.ahead_buffers = 4;  // fewer than the picks: some jobs find no buffer and their call takes them
  return options;
}

// The images DecodeAhead picks from `files` for a decoder with these counters' engines.
int64_t Picks(const std::vector<TestJpeg>& files, const GpuDecoderOptions& options, const GpuDecoderCounters& c) {
  RouterConfig config;
  config.nvjpeg = c.nvjpeg_available;
  config.engines = c.hardware_available;
  config.paths = options.paths;
  config.large_pixels = options.large_pixels;
  std::vector<RouteFacts> facts;
  for (const TestJpeg& f : files) {
    const ImageInfo info = ParseImageInfo(f.bytes.data(), f.bytes.size());
    RouteFacts r;
    r.jpeg = true;
    r.progressive = info.progressive;
    r.subsampling = info.subsampling;
    r.pixels = f.height * f.width;
    facts.push_back(r);
  }
  return static_cast<int64_t>(
      PickAhead(DecodeRouter(config), facts, options.ahead_cost, options.ahead_images, options.ahead_balanced_pixels)
          .size());
}

TEST(DecodeAhead, ImagesDecodedAheadMatchLibjpegTurboAndEveryPickIsAccounted) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  const std::vector<TestJpeg> files = MixedFiles(rng, 24);
  const GpuDecoderOptions options = AheadOptions();
  GpuDecoder decoder(options);
  ASSERT_TRUE(decoder.counters().nvjpeg_available) << decoder.counters().unavailable_reason;
  ASSERT_TRUE(decoder.ahead_enabled());
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  run.ahead = true;
  run.spin_ms = 5;  // the outputs' fill waits on the stream: the copies in must come after it
  constexpr int kCalls = 6;
  for (int call = 0; call < kCalls; ++call) {
    run.iteration = call;
    run.ahead_ms = call % 2 ? 0 : 100;  // with and without a head start
    const auto windows = call % 3 == 0 ? Whole(files) : RandomWindows(files, rng);
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "call " + std::to_string(call));
  }
  const GpuDecoderCounters c = decoder.counters();
  const int64_t picks = Picks(files, options, c);
  ASSERT_GT(picks, 8) << "the mix should hold many progressive and non-4:2:0 files";
  EXPECT_EQ(c.images_ahead + c.ahead_taken_back, kCalls * picks) << "every picked image copied in or taken back";
  EXPECT_GT(c.images_ahead, 0) << "with a 100 ms head start some images must have been decoded ahead";
  EXPECT_EQ(c.images_hardware + c.images_cuda + c.images_cpu, kCalls * static_cast<int64_t>(files.size()));
  EXPECT_LE(c.images_ahead, c.images_cuda);
}

// ahead_balanced_pixels: baseline 4:2:0 photos the balance would split, from that size on, are
// picked too (engines present), and come out as libjpeg-turbo decodes them.
TEST(DecodeAhead, LargeBalancedPhotosArePickedFromTheirSizeOn) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files = MixedFiles(rng, 12);
  for (int i = 0; i < 4; ++i) {  // 2-3.5 MP baseline 4:2:0 between them
    files.insert(files.begin() + 3 * i, EncodeJpeg(1200 + static_cast<int>(rng() % 400),
                                                   1700 + static_cast<int>(rng() % 500), TJSAMP_420, false, rng));
  }
  GpuDecoderOptions options = AheadOptions();
  options.ahead_cost = 1'000'000'000;  // nothing the CUDA backend takes alone is that costly
  options.ahead_balanced_pixels = 2'000'000;
  GpuDecoder decoder(options);
  ASSERT_TRUE(decoder.ahead_enabled());
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  run.ahead = true;
  run.ahead_ms = 100;
  constexpr int kCalls = 4;
  for (int call = 0; call < kCalls; ++call) {
    run.iteration = call;
    const auto windows = call == 0 ? Whole(files) : RandomWindows(files, rng);
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "call " + std::to_string(call));
  }
  const GpuDecoderCounters c = decoder.counters();
  const int64_t picks = Picks(files, options, c);
  if (c.hardware_available) {
    EXPECT_EQ(picks, 4) << "the four large 4:2:0 photos, nothing else";
  } else {
    EXPECT_EQ(picks, 0) << "no engines: no balance, and nothing the CUDA backend takes alone is costly enough";
  }
  EXPECT_EQ(c.images_ahead + c.ahead_taken_back, kCalls * picks);
  if (picks > 0) EXPECT_GT(c.images_ahead, 0) << "with a 100 ms head start";
  EXPECT_EQ(c.images_hardware + c.images_cuda + c.images_cpu, kCalls * static_cast<int64_t>(files.size()));
}

TEST(DecodeAhead, TheSameBytesAsTheCallsOwnCudaBackendDecode) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  const std::vector<TestJpeg> files = MixedFiles(rng, 16);
  GpuDecoderOptions plain;
  plain.paths = DecodePaths::kCudaOnly;  // every image on the CUDA backend, so every one is picked
  GpuDecoderOptions ahead = AheadOptions();
  ahead.paths = DecodePaths::kCudaOnly;
  ahead.ahead_buffers = 16;
  GpuDecoder with(ahead), without(plain);
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run_with{with, stream, pool, DecodeColor::kRgb};
  run_with.ahead = true;
  run_with.ahead_ms = 100;
  DecodeRun run_without{without, stream, pool, DecodeColor::kRgb};
  for (int call = 0; call < 3; ++call) {
    const auto windows = RandomWindows(files, rng);
    run_with.iteration = call;
    const auto got = run_with(files, windows);
    const auto want = run_without(files, windows);
    for (size_t i = 0; i < files.size(); ++i) {
      ASSERT_EQ(got[i].size(), want[i].size());
      // Byte for byte but where nvJPEG's ROI decode of subsampled chroma reads past its plane
      // (decoder_run.h, AtRoiEdge): there two decodes of one window may differ.
      const bool sub = Subsampled(files[i]);
      int64_t differ = 0, edge_differ = 0;
      for (size_t k = 0; k < got[i].size(); ++k) {
        if (got[i][k] == want[i][k]) continue;
        const int64_t y = static_cast<int64_t>(k / 3) / windows[i].w, x = static_cast<int64_t>(k / 3) % windows[i].w;
        ++(sub && AtRoiEdge(files[i], windows[i], y, x) ? edge_differ : differ);
      }
      EXPECT_EQ(differ, 0) << "call " << call << " " << files[i].name << " (" << edge_differ << " at ROI edges)";
    }
  }
  EXPECT_GT(with.counters().images_ahead, 0);
}

TEST(DecodeAhead, ALookAtOtherBytesOrAnotherCallIsNeverUsed) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  const std::vector<TestJpeg> files = MixedFiles(rng, 16);
  const std::vector<TestJpeg> others = MixedFiles(rng, 16);
  GpuDecoderOptions options = AheadOptions();
  options.paths = DecodePaths::kCudaOnly;
  options.ahead_buffers = 16;
  GpuDecoder decoder(options);
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  run.ahead = true;
  run.ahead_ms = 100;
  // Other files at the same indices (with the call's sizes and windows): not taken.
  run.ahead_files = &others;
  run.iteration = 1;
  auto windows = RandomWindows(files, rng);
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "other bytes");
  EXPECT_EQ(decoder.counters().images_ahead, 0);
  // The call's files, looked at for call 2 while call 3 runs: not taken.
  run.ahead_files = nullptr;
  run.ahead_key = 2;
  run.iteration = 3;
  windows = RandomWindows(files, rng);
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "key 2 looked, key 3 decoded");
  EXPECT_EQ(decoder.counters().images_ahead, 0);
  // Other bytes looked at for call 4, then the call's own: the second look replaces the first.
  run.ahead_key = -1;
  run.ahead_files = &others;
  run.look_again = true;
  run.iteration = 4;
  windows = Whole(files);
  ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "the second look");
  EXPECT_GT(decoder.counters().images_ahead, 0) << "the call's own look must be used";
  const GpuDecoderCounters c = decoder.counters();
  EXPECT_EQ(c.images_cuda + c.images_cpu, 3 * static_cast<int64_t>(files.size()));
}

TEST(DecodeAhead, ADecoderDestroyedWithWorkStillAheadEndsCleanly) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> files;
  for (int i = 0; i < 6; ++i) files.push_back(EncodeJpeg(1500, 2000, TJSAMP_444, true, rng));
  std::vector<GpuDecodeSample> look;
  for (const TestJpeg& f : files) {
    GpuDecodeSample s;
    s.data = f.bytes.data();
    s.size = f.bytes.size();
    s.height = f.height;
    s.width = f.width;
    s.roi = CropWindow{0, 0, f.height, f.width};
    s.subsampling = ChromaSubsampling::k444;
    s.progressive = true;
    look.push_back(s);
  }
  for (int round = 0; round < 3; ++round) {
    GpuDecoder decoder(AheadOptions());
    decoder.DecodeAhead(0, look, nullptr, "look");
    decoder.DecodeAhead(1, look, nullptr, "look");
  }  // destroyed while its threads decode: queued jobs dropped, running ones finished
  SUCCEED();
}

TEST(DecodeAhead, OnByDefaultAndOffAtZeroCost) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoder on(GpuDecoderOptions{});
  EXPECT_TRUE(on.ahead_enabled());
  GpuDecoderOptions zero;
  zero.ahead_cost = 0;
  GpuDecoder off(zero);
  EXPECT_FALSE(off.ahead_enabled());
}

}  // namespace
}  // namespace conveyor::ops
