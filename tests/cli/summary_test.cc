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
  EXPECT_EQ(FormatDecoders(m), "  decoders        decode, decode_masks (cpu): libjpeg-turbo, libpng, libtiff, libwebp, ... on the CPU stage's threads\n");
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

// nvJPEG2000's images join the split where it decoded some; its absence is said on a line of its own.
TEST(Summary, GpuDecodersShowNvjpeg2000WhereItDecodedAndWhyNot) {
  RunMeasurements m;
  m.gpu_decoders = {"decode"};
  m.gpu_decode.images_cuda = 150;
  m.gpu_decode.images_jpeg2000 = 40;
  m.gpu_decode.images_cpu = 10;
  m.gpu_decode.fallbacks = 2;
  EXPECT_EQ(FormatDecoders(m),
            "  decoders        decode (gpu, nvJPEG): 200 images: hardware engines 0 (0.0%), CUDA backend 150 "
            "(75.0%), nvJPEG2000 40 (20.0%), CPU 10 (5.0%, 2 GPU paths refused)\n");
  m.gpu_decode.images_jpeg2000 = 0;
  m.gpu_decode.nvjpeg2k_unavailable_reason = "libnvjpeg2k.so.0: cannot open shared object file";
  const std::string text = FormatDecoders(m);
  EXPECT_THAT(text, HasSubstr("CUDA backend 150 (93.8%), CPU 10 (6.2%, 2 nvJPEG refused)\n"));
  EXPECT_THAT(text, HasSubstr("\n                  (JPEG 2000 on the CPU: libnvjpeg2k.so.0: cannot open shared object file)\n"));
}

TEST(Summary, PythonFunctionNodesAreNamedAsUserCodeOnTheCpuStage) {
  RunMeasurements m;
  m.pipeline = "p";
  EXPECT_EQ(FormatFunctions(m), "");
  EXPECT_THAT(FormatSummary(m, ExecutorCounters{}), ::testing::Not(HasSubstr("python_function")));
  m.function_nodes = {"augment", "mix"};
  EXPECT_EQ(FormatFunctions(m), "  functions       augment, mix (python_function): user code on the CPU stage, one "
                                "call at a time per node, not capturable\n");
  EXPECT_THAT(FormatSummary(m, ExecutorCounters{}), HasSubstr("functions       augment, mix (python_function)"));
}

TEST(Summary, SkippedSamplesListTheirFilesUpToALimit) {
  ExecutorCounters c;
  EXPECT_EQ(FormatSkipped(c), "");
  c.skipped_samples = 3;
  c.skipped_files = {{"reader", "a/bad.jpg", "truncated JPEG", 2}, {"reader", "b.png", "bad CRC", 1}};
  EXPECT_EQ(FormatSkipped(c),
            "  skipped         3 samples of 2 files (on_error: skip; the reader read others in their place)\n"
            "                  reader: a/bad.jpg: truncated JPEG (2 times)\n"
            "                  reader: b.png: bad CRC\n");
  c.refilled_iterations = 1;
  EXPECT_THAT(FormatSkipped(c), HasSubstr("b.png: bad CRC\n                  1 iteration redone: the decode, not the "
                                          "reader's check, found the damage\n"));
  c.refilled_iterations = 0;
  c.skipped_files.clear();
  for (int i = 0; i < kMaxSkippedListed + 3; ++i) c.skipped_files.push_back({"r", "f" + std::to_string(i), "x", 1});
  c.skipped_samples = kMaxSkippedListed + 3;
  const std::string text = FormatSkipped(c);
  EXPECT_THAT(text, HasSubstr("13 samples of 13 files"));
  EXPECT_THAT(text, HasSubstr("r: f9: x\n                  ... and 3 more files\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("f10")));
  RunMeasurements m;
  m.pipeline = "p";
  EXPECT_THAT(FormatSummary(m, c), HasSubstr("  skipped         13 samples"));
}

}  // namespace
}  // namespace conveyor::cli
