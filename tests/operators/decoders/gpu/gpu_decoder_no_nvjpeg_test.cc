// Without a usable nvJPEG (here: CONVEYOR_NVJPEG_PATH names a missing file, set by the BUILD
// rule), the decoder says so once on stderr and in its counters, and decodes on the CPU. The
// first part needs no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <utility>

#include "core/cuda/check.h"
#include "core/error.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/tbb_thread_pool.h"
#include "operators/decoders/decoder_env.h"
#include "operators/decoders/gpu_decoder.h"
#include "tests/operators/decoders/gpu/decode_test_util.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;

// Bazel's `env` does not follow the binary into the GPU bundle: point the loader at a missing
// library before anything loads it (static initialisation runs before any test).
const bool kNoNvjpeg = [] { return setenv("CONVEYOR_NVJPEG_PATH", "/nonexistent/libnvjpeg.so.13", 1) == 0; }();

TEST(GpuDecoderWithoutNvjpeg, SaysSoOnceAndCounts) {
  ::testing::internal::CaptureStderr();
  GpuDecoder first(GpuDecoderOptions{});
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, HasSubstr("nvJPEG unavailable, decoding on the CPU and uploading"));
  EXPECT_THAT(said, HasSubstr("/nonexistent/libnvjpeg.so.13"));
  const GpuDecoderCounters c = first.counters();
  EXPECT_FALSE(c.nvjpeg_available);
  EXPECT_FALSE(c.hardware_available);
  EXPECT_THAT(c.unavailable_reason, HasSubstr("/nonexistent/libnvjpeg.so.13"));
  EXPECT_FALSE(first.ahead_enabled()) << "no CUDA backend: nothing to decode ahead";
}

// The tools' measuring switches (decoder_env.h): a CONVEYOR_JPEG_ENGINES, _ENGINES_WAIT or
// _HW_PIPELINE value other than 0 or 1 is refused with what was expected and what came.
TEST(DecoderEnv, AnythingButZeroOrOneIsRefused) {
  const std::pair<const char*, const char*> settings[] = {
      {"CONVEYOR_JPEG_ENGINES", "expected 0 (hardware JPEG engines off) or 1 (on)"},
      {"CONVEYOR_JPEG_ENGINES_WAIT", "expected 0 (engines do not wait for earlier stream work) or 1 (they wait)"},
      {"CONVEYOR_JPEG_HW_PIPELINE",
       "expected 0 (NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE on the engines' handles) or 1 (nvJPEG's default)"},
      {"CONVEYOR_JPEG_PREALLOC_GROW",
       "expected 0 (preallocate the engines' pool once) or 1 (again for each larger batch or image)"},
      {"CONVEYOR_JPEG_PREALLOC_ALL",
       "expected 0 (only the 4:2:0 engines' call preallocates) or 1 (every engines' call does)"},
      {"CONVEYOR_JPEG_PREALLOC_AREA",
       "expected 0 (preallocate for the largest width by the largest height) or 1 (for a square of the largest "
       "image's pixels)"},
      {"CONVEYOR_JPEG_PREALLOC_TYPICAL",
       "expected 0 (preallocate for the call's largest image) or 1 (for its median image by pixels)"},
      {"CONVEYOR_JPEG_MEMORY_POOLS",
       "expected 0 (nvJPEG's default allocations on the engines' handles) or 1 (NVJPEG_FLAGS_ENABLE_MEMORY_POOLS on them)"},
      {"CONVEYOR_JPEG_CHECK_BESIDE",
       "expected 0 (the engines' check in phase A) or 1 (on the engines' side of phase B)"},
      {"CONVEYOR_JPEG_COSTLIEST_FIRST",
       "expected 0 (CPU/CUDA images in TBB chunks, list order) or 1 (one queue, costliest first)"},
      {"CONVEYOR_JPEG_ENGINES_SORTED",
       "expected 0 (each engines' call in the balance's order) or 1 (each engines' call sorted by size, largest "
       "first)"},
      {"CONVEYOR_JPEG_ENGINES_INTERPOLATION",
       "expected 0 (the engines convert to RGB themselves) or 1 (NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION on "
       "their handles)"},
      {"CONVEYOR_JPEG_SHARE_TUNED",
       "expected 0 (the automatic balance always) or 1 (the balance timed against every 4:2:0 image on the engines, "
       "the faster kept)"},
      {"CONVEYOR_JPEG_ENGINE_PARTS_TUNED",
       "expected 0 (always engine_threads handles) or 1 (each call's handles timed against one, the faster kept)"},
  };
  for (const auto& [name, expected] : settings) {
    for (const char* bad : {"no", "", "2", "off"}) {
      ASSERT_EQ(setenv(name, bad, 1), 0);
      try {
        GpuDecoderOptions options;
        ApplyDecoderEnv(options);
        ADD_FAILURE() << "accepted " << name << "=\"" << bad << "\"";
      } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr(std::string(name) + ": " + expected + ", got \"" + bad + "\""));
      }
    }
    unsetenv(name);
  }
}

// The two engines' switches set their options, and unset leave the defaults.
TEST(DecoderEnv, EnginesSortedAndInterpolationSwitches) {
  GpuDecoderOptions defaults;
  ApplyDecoderEnv(defaults);
  EXPECT_TRUE(defaults.engines_sorted);
  EXPECT_TRUE(defaults.engines_interpolated_upsampling);
  ASSERT_EQ(setenv("CONVEYOR_JPEG_ENGINES_SORTED", "0", 1), 0);
  ASSERT_EQ(setenv("CONVEYOR_JPEG_ENGINES_INTERPOLATION", "0", 1), 0);
  GpuDecoderOptions off;
  ApplyDecoderEnv(off);
  EXPECT_FALSE(off.engines_sorted);
  EXPECT_FALSE(off.engines_interpolated_upsampling);
  EXPECT_TRUE(off.interpolated_upsampling);  // the CUDA backend's flag is not this switch's
  unsetenv("CONVEYOR_JPEG_ENGINES_SORTED");
  unsetenv("CONVEYOR_JPEG_ENGINES_INTERPOLATION");
}

// The parts tuner is on unless switched off.
TEST(DecoderEnv, EnginePartsTunedSwitch) {
  GpuDecoderOptions defaults;
  ApplyDecoderEnv(defaults);
  EXPECT_TRUE(defaults.engine_parts_tuned);
  ASSERT_EQ(setenv("CONVEYOR_JPEG_ENGINE_PARTS_TUNED", "0", 1), 0);
  GpuDecoderOptions off;
  ApplyDecoderEnv(off);
  EXPECT_FALSE(off.engine_parts_tuned);
  unsetenv("CONVEYOR_JPEG_ENGINE_PARTS_TUNED");
}

// The numeric and named switches take a value in their range or list; anything else is refused
// naming the switch, what it takes and what arrived.
TEST(DecoderEnv, ValuesOutOfRangeAreRefused) {
  struct Switch {
    const char* name;
    const char* expected;
    std::vector<const char*> bad;
  };
  const std::vector<Switch> switches = {
      {"CONVEYOR_JPEG_CUDA_PINNED", "expected a whole number from 2 to 16", {"1", "17", "", "two", "4x", "-3"}},
      {"CONVEYOR_JPEG_PINNED_HIGH_WATER_MB", "expected a whole number from 0 to 4096", {"-1", "4097", "", "8M"}},
      {"CONVEYOR_JPEG_TRACE", "expected a whole number from 0 to 1000", {"-1", "1001", "", "all", "5s"}},
      {"CONVEYOR_JPEG_ENGINE_THREADS", "expected a whole number from 1 to 4", {"0", "5", "", "two", "2x"}},
      {"CONVEYOR_JPEG_LARGE_KPIXELS", "expected a whole number from 1 to 1000000", {"0", "", "big", "1e3"}},
      {"CONVEYOR_JPEG_ENGINES_ONLY_KPIXELS", "expected a whole number from 0 to 1000000", {"-1", "", "4MP"}},
      {"CONVEYOR_JPEG_OTHER_ENGINES_KPIXELS", "expected a whole number from 0 to 1000000", {"-1", "", "9M"}},
      {"CONVEYOR_JPEG_CUDA_SHARED_KPIXELS", "expected a whole number from 0 to 1000000", {"-1", "", "4MP"}},
      {"CONVEYOR_JPEG_CUDA_SHARED_STATES", "expected a whole number from 1 to 16", {"0", "17", "", "two"}},
      {"CONVEYOR_JPEG_AHEAD_KPIXELS", "expected a whole number from 0 to 1000000", {"-1", "", "3MP"}},
      {"CONVEYOR_JPEG_AHEAD_BALANCED_KPIXELS", "expected a whole number from 0 to 1000000", {"-5", "2000000", "big"}},
      {"CONVEYOR_JPEG_AHEAD_IMAGES", "expected a whole number from 1 to 64", {"0", "65", "", "four"}},
      {"CONVEYOR_JPEG_AHEAD_THREADS", "expected a whole number from 1 to 16", {"0", "17", ""}},
      {"CONVEYOR_JPEG_AHEAD_BUFFERS", "expected a whole number from 1 to 64", {"0", "65", "x"}},
      {"CONVEYOR_JPEG_PROGRESSIVE", "expected cpu or cuda", {"", "gpu", "CPU", "engines"}},
      {"CONVEYOR_JPEG_PROGRESSIVE_CPU_KPIXELS", "expected a whole number from 0 to 1000000", {"-1", "", "small"}},
      {"CONVEYOR_JPEG_ENGINES_IMAGE_KPIXELS", "expected a whole number from 0 to 100000", {"-1", "100001", "x"}},
      {"CONVEYOR_JPEG_ENGINES_CALL_KPIXELS", "expected a whole number from 0 to 1000000", {"-1", "", "1M"}},
      {"CONVEYOR_JPEG_OTHER_CHROMA", "expected engines_own_call, cuda or cpu", {"", "engines", "gpu"}},
      {"CONVEYOR_JPEG_HW_LOAD", "expected -1 (automatic) or a share from 0 to 1", {"", "1.5", "-0.5", "half"}},
      {"CONVEYOR_JPEG_PROGRESSIVE_HYBRID_KPIXELS", "expected a whole number from 0 to 1000000", {"-1", "", "1k"}},
      {"CONVEYOR_JPEG_ENGINES_CHECK", "expected always, common (trusted without the check) or never",
       {"", "0", "1", "Always"}},
  };
  for (const Switch& sw : switches) {
    for (const char* bad : sw.bad) {
      ASSERT_EQ(setenv(sw.name, bad, 1), 0);
      try {
        GpuDecoderOptions options;
        ApplyDecoderEnv(options);
        ADD_FAILURE() << "accepted " << sw.name << "=\"" << bad << "\"";
      } catch (const Error& e) {
        EXPECT_THAT(e.what(), HasSubstr(std::string(sw.name) + ": " + sw.expected + ", got \"" + bad + "\""));
      }
    }
    unsetenv(sw.name);
  }
}

// An unset kilopixel switch leaves the option exactly as it was: the operator's pixel arguments
// (shared_state_threshold: 1, hybrid_huffman_threshold: 1500) are not rounded to whole kilopixels
// in the CLI and the tests, where this hook runs on every decoder (it once made them 0 and 1000).
TEST(DecoderEnv, UnsetKilopixelSwitchesKeepPixelValues) {
  GpuDecoderOptions options;
  options.cuda_shared_pixels = 1;
  options.hybrid_huffman_threshold = 1500;
  options.progressive_cpu_pixels = 999;
  options.engines_only_pixels = 2'000'001;
  ApplyDecoderEnv(options);
  EXPECT_EQ(options.cuda_shared_pixels, 1);
  EXPECT_EQ(options.hybrid_huffman_threshold, 1500);
  EXPECT_EQ(options.progressive_cpu_pixels, 999);
  EXPECT_EQ(options.engines_only_pixels, 2'000'001);
}

// Good values land in the options; unset switches leave them alone.
TEST(DecoderEnv, ValuesReachTheOptions) {
  GpuDecoderOptions options;
  options.engine_threads = 3;
  setenv("CONVEYOR_JPEG_ENGINES", "0", 1);
  setenv("CONVEYOR_JPEG_PROGRESSIVE", "cuda", 1);
  setenv("CONVEYOR_JPEG_OTHER_CHROMA", "engines_own_call", 1);
  setenv("CONVEYOR_JPEG_HW_LOAD", "0.75", 1);
  setenv("CONVEYOR_JPEG_CUDA_PINNED", "4", 1);
  setenv("CONVEYOR_JPEG_CUDA_STATES", "6", 1);
  setenv("CONVEYOR_JPEG_PINNED_HIGH_WATER_MB", "64", 1);
  setenv("CONVEYOR_JPEG_TRACE_FROM", "90", 1);
  setenv("CONVEYOR_JPEG_HYBRID_KPIXELS", "2500", 1);
  setenv("CONVEYOR_JPEG_LARGE_KPIXELS", "1500", 1);
  setenv("CONVEYOR_JPEG_ENGINES_ONLY_KPIXELS", "4000", 1);
  EXPECT_EQ(options.other_engines_pixels, 0);  // the default: off
  setenv("CONVEYOR_JPEG_OTHER_ENGINES_KPIXELS", "4000", 1);
  EXPECT_EQ(options.cuda_shared_pixels, 0);  // the defaults
  EXPECT_EQ(options.cuda_shared_states, 2);
  setenv("CONVEYOR_JPEG_CUDA_SHARED_KPIXELS", "2000", 1);
  EXPECT_EQ(options.ahead_cost, 3'000'000);  // the defaults
  EXPECT_EQ(options.ahead_images, 4);
  EXPECT_EQ(options.ahead_balanced_pixels, 0);
  setenv("CONVEYOR_JPEG_AHEAD_KPIXELS", "0", 1);
  setenv("CONVEYOR_JPEG_AHEAD_BALANCED_KPIXELS", "6000", 1);
  setenv("CONVEYOR_JPEG_AHEAD_IMAGES", "7", 1);
  setenv("CONVEYOR_JPEG_AHEAD_THREADS", "3", 1);
  setenv("CONVEYOR_JPEG_AHEAD_BUFFERS", "5", 1);
  setenv("CONVEYOR_JPEG_CUDA_SHARED_STATES", "3", 1);
  setenv("CONVEYOR_JPEG_PROGRESSIVE_CPU_KPIXELS", "250", 1);
  setenv("CONVEYOR_JPEG_COSTLIEST_FIRST", "0", 1);
  setenv("CONVEYOR_JPEG_ENGINES_IMAGE_KPIXELS", "120", 1);
  setenv("CONVEYOR_JPEG_ENGINES_CALL_KPIXELS", "3000", 1);
  EXPECT_EQ(options.engines_check, EnginesCheck::kTrustCommon);  // the default
  EXPECT_EQ(options.progressive_huffman_threshold, -1);
  setenv("CONVEYOR_JPEG_PROGRESSIVE_HYBRID_KPIXELS", "300", 1);
  setenv("CONVEYOR_JPEG_ENGINES_CHECK", "always", 1);
  ApplyDecoderEnv(options);
  EXPECT_EQ(options.engines_check, EnginesCheck::kAlways);
  setenv("CONVEYOR_JPEG_ENGINES_CHECK", "never", 1);
  ApplyDecoderEnv(options);
  unsetenv("CONVEYOR_JPEG_ENGINES_CHECK");
  unsetenv("CONVEYOR_JPEG_PROGRESSIVE_HYBRID_KPIXELS");
  EXPECT_EQ(options.engines_check, EnginesCheck::kNever);
  EXPECT_EQ(options.progressive_huffman_threshold, 300'000);
  unsetenv("CONVEYOR_JPEG_ENGINES_IMAGE_KPIXELS");
  unsetenv("CONVEYOR_JPEG_ENGINES_CALL_KPIXELS");
  EXPECT_EQ(options.engines_image_cost_px, 120'000);
  EXPECT_EQ(options.engines_call_cost_px, 3'000'000);
  unsetenv("CONVEYOR_JPEG_PROGRESSIVE_CPU_KPIXELS");
  unsetenv("CONVEYOR_JPEG_COSTLIEST_FIRST");
  EXPECT_EQ(options.progressive_cpu_pixels, 250'000);
  EXPECT_FALSE(options.host_costliest_first);
  unsetenv("CONVEYOR_JPEG_LARGE_KPIXELS");
  unsetenv("CONVEYOR_JPEG_ENGINES_ONLY_KPIXELS");
  unsetenv("CONVEYOR_JPEG_OTHER_ENGINES_KPIXELS");
  EXPECT_EQ(options.other_engines_pixels, 4'000'000);
  unsetenv("CONVEYOR_JPEG_CUDA_SHARED_KPIXELS");
  for (const char* name : {"CONVEYOR_JPEG_AHEAD_KPIXELS", "CONVEYOR_JPEG_AHEAD_IMAGES", "CONVEYOR_JPEG_AHEAD_THREADS",
                           "CONVEYOR_JPEG_AHEAD_BUFFERS", "CONVEYOR_JPEG_AHEAD_BALANCED_KPIXELS"}) {
    unsetenv(name);
  }
  EXPECT_EQ(options.ahead_cost, 0);
  EXPECT_EQ(options.ahead_balanced_pixels, 6'000'000);
  EXPECT_EQ(options.ahead_images, 7);
  EXPECT_EQ(options.ahead_threads, 3);
  EXPECT_EQ(options.ahead_buffers, 5);
  unsetenv("CONVEYOR_JPEG_CUDA_SHARED_STATES");
  EXPECT_EQ(options.cuda_shared_pixels, 2'000'000);
  EXPECT_EQ(options.cuda_shared_states, 3);
  EXPECT_EQ(options.large_pixels, 1'500'000);
  EXPECT_EQ(options.engines_only_pixels, 4'000'000);
  for (const char* name : {"CONVEYOR_JPEG_ENGINES", "CONVEYOR_JPEG_PROGRESSIVE", "CONVEYOR_JPEG_OTHER_CHROMA",
                           "CONVEYOR_JPEG_HW_LOAD", "CONVEYOR_JPEG_CUDA_PINNED", "CONVEYOR_JPEG_CUDA_STATES",
                           "CONVEYOR_JPEG_PINNED_HIGH_WATER_MB", "CONVEYOR_JPEG_TRACE_FROM",
                           "CONVEYOR_JPEG_HYBRID_KPIXELS"}) {
    unsetenv(name);
  }
  EXPECT_FALSE(options.engines);
  EXPECT_EQ(options.progressive, ProgressiveRoute::kCuda);
  EXPECT_EQ(options.other_chroma, OtherChromaRoute::kEnginesOwnCall);
  EXPECT_DOUBLE_EQ(options.hw_load, 0.75);
  EXPECT_EQ(options.cuda_pinned_buffers, 4);
  EXPECT_EQ(options.cuda_states, 6);
  EXPECT_EQ(options.cuda_pinned_high_water_mb, 64);
  EXPECT_EQ(options.trace_from, 90);
  EXPECT_EQ(options.hybrid_huffman_threshold, 2'500'000);
  EXPECT_EQ(options.engine_threads, 3);
  EXPECT_TRUE(options.engines_wait);
}

// A tool's hook sees every decoder's options before the decoder uses them.
TEST(GpuDecoderWithoutNvjpeg, TheToolsHookAdjustsEveryDecoder) {
  SetDecoderOptionsHook([](GpuDecoderOptions& o) { o.engine_threads = 4; });
  GpuDecoder decoder(GpuDecoderOptions{});
  SetDecoderOptionsHook(nullptr);
  EXPECT_EQ(decoder.options().engine_threads, 4);
  GpuDecoder plain(GpuDecoderOptions{});
  EXPECT_EQ(plain.options().engine_threads, 2);
}

TEST(GpuDecoderWithoutNvjpeg, DecodesOnTheCpuAndUploads) {
  CONVEYOR_REQUIRE_GPU();
  GpuDecoder decoder(GpuDecoderOptions{});
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<testing::TestJpeg> files = {testing::EncodeJpeg(31, 45, TJSAMP_420, false, rng),
                                          testing::EncodeJpeg(8, 300, TJSAMP_444, true, rng)};
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(2);
  OpSpec spec("decoders.image", "dec");
  Workspace ws(spec, 2);
  ws.set_stream(stream.view());
  ws.set_thread_pool(&pool);
  std::vector<Buffer> outs;
  std::vector<GpuDecodeSample> samples;
  for (const auto& f : files) {
    outs.push_back(Buffer::Allocate(MemoryKind::kDevice, f.height * f.width * 3, stream.view()));
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(outs.back().device_ptr(), 0xA5, f.height * f.width * 3, stream.get()));
    samples.push_back({f.bytes.data(), f.bytes.size(), true, f.height, f.width, CropWindow{0, 0, f.height, f.width},
                       static_cast<uint8_t*>(outs.back().device_ptr())});
  }
  decoder.Decode(
      samples, ws,
      [&](int i, uint8_t* dst) {
        const auto ref = testing::ReferenceDecode(files[i], DecodeColor::kRgb, samples[i].roi);
        std::copy(ref.begin(), ref.end(), dst);
      },
      [&](int i) { return files[i].name; }, "op \"dec\" (decoders.image)");
  for (size_t i = 0; i < files.size(); ++i) {
    std::vector<uint8_t> got(files[i].height * files[i].width * 3);
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(got.data(), outs[i].device_ptr(), got.size(), cudaMemcpyDeviceToHost, stream.get()));
    stream.Synchronize();
    EXPECT_EQ(got, testing::ReferenceDecode(files[i], DecodeColor::kRgb, samples[i].roi)) << files[i].name;
  }
  EXPECT_EQ(decoder.counters().images_cpu, 2);
  EXPECT_EQ(decoder.counters().images_cuda + decoder.counters().images_hardware, 0);
}

}  // namespace
}  // namespace conveyor::ops
