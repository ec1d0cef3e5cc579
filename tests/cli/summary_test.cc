// The run summary's decoders line (cli/summary.h): where decoders.* nodes ran and, on the GPU, how
// the images split between nvJPEG's hardware engines, its CUDA backend and the CPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/summary.h"

namespace conveyor::cli {
namespace {

using ::testing::HasSubstr;

TEST(Summary, NoDecoderNodesNoDecodersLine) {
  RunMeasurements m;
  EXPECT_EQ(FormatDecoders(m), "");
  m.pipeline = "p";
  EXPECT_THAT(FormatSummary(m, ExecutorCounters{}), ::testing::Not(HasSubstr("decoders")));
}

TEST(Summary, CpuDecodersNameTheLibraries) {
  RunMeasurements m;
  m.cpu_decoders = {"decode", "decode_masks"};
  EXPECT_EQ(FormatDecoders(m), "  decoders        decode, decode_masks (cpu): libjpeg-turbo / libpng on the CPU stage's threads\n");
}

TEST(Summary, GpuDecodersSplitTheImagesBetweenPaths) {
  RunMeasurements m;
  m.gpu_decoders = {"decode"};
  m.gpu_decode.images_hardware = 300;
  m.gpu_decode.images_cuda = 180;
  m.gpu_decode.images_cpu = 20;
  m.gpu_decode.fallbacks = 4;
  EXPECT_EQ(FormatDecoders(m),
            "  decoders        decode (gpu, nvJPEG): 500 images: hardware engines 300 (60.0%), CUDA backend 180 "
            "(36.0%), CPU 20 (4.0%, 4 nvJPEG refused)\n");
  m.pipeline = "p";
  EXPECT_THAT(FormatSummary(m, ExecutorCounters{}), HasSubstr("hardware engines 300 (60.0%)"));
}

TEST(Summary, GpuDecodersWithoutNvjpegSayWhy) {
  RunMeasurements m;
  m.gpu_decoders = {"decode"};
  m.gpu_decode.images_cpu = 64;
  m.gpu_decode.unavailable_reason = "libnvjpeg.so.13 not found";
  const std::string text = FormatDecoders(m);
  EXPECT_THAT(text, HasSubstr("64 images: hardware engines 0 (0.0%), CUDA backend 0 (0.0%), CPU 64 (100.0%"));
  EXPECT_THAT(text, HasSubstr("\n                  (libnvjpeg.so.13 not found)\n"));
}

TEST(Summary, SkippedSamplesListTheirFilesUpToALimit) {
  RunMeasurements m;
  EXPECT_EQ(FormatSkipped(m), "");
  m.skipped_files = {"a/bad.jpg"};
  EXPECT_EQ(FormatSkipped(m), "  skipped         1 sample: a/bad.jpg\n");
  m.skipped_files.clear();
  for (int i = 0; i < kMaxSkippedListed + 3; ++i) m.skipped_files.push_back("f" + std::to_string(i) + ".jpg");
  const std::string text = FormatSkipped(m);
  EXPECT_THAT(text, HasSubstr("13 samples: f0.jpg, f1.jpg,"));
  EXPECT_THAT(text, HasSubstr("f9.jpg, ... and 3 more\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("f10.jpg")));
  m.pipeline = "p";
  EXPECT_THAT(FormatSummary(m, ExecutorCounters{}), HasSubstr("  skipped         13 samples"));
}

}  // namespace
}  // namespace conveyor::cli
