// pipelines/detection_train.yaml on the GPU (nvJPEG decode, slice, resize and normalize on the
// device, graph capture on) against the CPU run: the box outputs come from the same CPU operators
// with the same draws, so they are equal bit for bit; the images differ only by the decoders
// (nvJPEG vs libjpeg-turbo), bounded as in pipelines_gpu_test. Skips without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "tests/cli/cli_runner.h"
#include "tests/cli/detection_outputs.h"
#include "tests/cli/shipped_pipelines.h"
#include "tests/util/gpu_test.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;

constexpr int kBatch = 8;
constexpr int kIterations = 4;

TEST(DetectionPipelineGpu, CapturedOnTheGpuAndEqualToTheCpu) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  const std::string dir = MakeTempDir("detection_gpu");
  for (const char* device : {"cpu", "gpu"}) {
    const CliResult r = RunConveyor({"run", kDetectionYaml, "--device", device, "--batch-size", std::to_string(kBatch),
                                     "--iterations", std::to_string(kIterations), "--no-progress", "--save-outputs",
                                     dir + "/" + device});
    ASSERT_EQ(r.status, 0) << r.err;
    if (std::string(device) == "gpu") {
      const auto [captures, replays] = CapturesAndReplays(r.out);
      EXPECT_GE(captures, 1) << r.out;
      EXPECT_GE(replays, kIterations) << r.out;
      EXPECT_THAT(r.out, HasSubstr("images_out: float16 8 samples of (3, 300, 300) CHW on the GPU"));
      EXPECT_THAT(r.out, HasSubstr("decoders        decode (gpu, nvJPEG): 32 images"));
    }
  }
  for (int it = 0; it < kIterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    for (const char* name : {"boxes", "labels", "encoded", "encoded_labels"}) {
      const auto cpu = LoadSamples(dir + "/cpu", name, it, kBatch);
      const auto gpu = LoadSamples(dir + "/gpu", name, it, kBatch);
      ASSERT_EQ(cpu.size(), gpu.size()) << name;
      for (size_t s = 0; s < cpu.size(); ++s) {
        EXPECT_EQ(gpu[s].shape, cpu[s].shape) << name << " sample " << s;
        EXPECT_EQ(gpu[s].data, cpu[s].data) << name << " sample " << s;
      }
    }
    const auto cpu = LoadSamples(dir + "/cpu", "images_out", it, kBatch);
    const auto gpu = LoadSamples(dir + "/gpu", "images_out", it, kBatch);
    ASSERT_EQ(cpu.size(), gpu.size());
    double sum = 0, n = 0;
    for (size_t s = 0; s < cpu.size(); ++s) {
      ASSERT_EQ(gpu[s].data.size(), cpu[s].data.size());
      for (size_t i = 0; i < cpu[s].data.size(); ++i) sum += std::fabs(gpu[s].data[i] - cpu[s].data[i]);
      n += static_cast<double>(cpu[s].data.size());
    }
    // nvJPEG vs libjpeg-turbo: a few levels of 255 on average, <= 0.05 after / std; a wrong window
    // or mirror gives > 0.3.
    EXPECT_LT(sum / n, 0.15);
  }
}

}  // namespace
}  // namespace conveyor::cli_test
