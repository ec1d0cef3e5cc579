// pipelines/segmentation_train.yaml on the GPU (nvJPEG decode; slice, resize, cast and flip
// captured as CUDA graphs; crop_mirror_normalize eager) against the CPU run: the masks come from
// the same reader, window and coin and move as bits or by nearest neighbour, so they are equal
// exactly; the images differ only by the decoders (nvJPEG vs libjpeg-turbo), bounded as in
// detection_pipeline_gpu_test; and the GPU's masks lie on the GPU's images (segmentation_outputs.h).
// Skips without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/cli/cli_runner.h"
#include "tests/cli/segmentation_outputs.h"
#include "tests/cli/shipped_pipelines.h"
#include "tests/util/gpu_test.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;

constexpr int kBatch = 8;
constexpr int kIterations = 4;
constexpr int kRadius = 4;  // as the CPU test's

TEST(SegmentationPipelineGpu, CapturedOnTheGpuAndEqualToTheCpu) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  const std::string dir = MakeTempDir("segmentation_gpu");
  for (const char* device : {"cpu", "gpu"}) {
    const CliResult r = RunConveyor({"run", kSegmentationYaml, "--device", device, "--batch-size",
                                     std::to_string(kBatch), "--iterations", std::to_string(kIterations),
                                     "--no-progress", "--save-outputs", dir + "/" + device});
    ASSERT_EQ(r.status, 0) << r.err;
    if (std::string(device) == "gpu") {
      const auto [captures, replays] = CapturesAndReplays(r.out);
      EXPECT_GE(captures, 1) << r.out;
      EXPECT_GE(replays, kIterations) << r.out;
      EXPECT_THAT(r.out, HasSubstr("images_out: float16 8 samples of (3, 256, 256) CHW on the GPU"));
      EXPECT_THAT(r.out, HasSubstr("masks: int32 8 samples of (256, 256, 1) HWC on the GPU"));
    }
  }
  int64_t object_pixels = 0;
  for (int it = 0; it < kIterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    const auto cpu_masks = LoadSamples(dir + "/cpu", "masks", it, kBatch);
    const auto gpu_masks = LoadSamples(dir + "/gpu", "masks", it, kBatch);
    const auto cpu = LoadSamples(dir + "/cpu", "images_out", it, kBatch);
    const auto gpu = LoadSamples(dir + "/gpu", "images_out", it, kBatch);
    ASSERT_EQ(cpu_masks.size(), size_t{kBatch});
    ASSERT_EQ(gpu_masks.size(), size_t{kBatch});
    ASSERT_EQ(cpu.size(), size_t{kBatch});
    ASSERT_EQ(gpu.size(), size_t{kBatch});
    double sum = 0, n = 0;
    for (int s = 0; s < kBatch; ++s) {
      SCOPED_TRACE("sample " + std::to_string(s));
      ASSERT_EQ(gpu_masks[s].shape, cpu_masks[s].shape);
      EXPECT_EQ(gpu_masks[s].data, cpu_masks[s].data) << "masks equal exactly";
      ASSERT_EQ(gpu[s].shape, cpu[s].shape);
      for (size_t i = 0; i < cpu[s].data.size(); ++i) sum += std::fabs(gpu[s].data[i] - cpu[s].data[i]);
      n += static_cast<double>(cpu[s].data.size());
      const MaskCheck check = CheckMaskOnImage(gpu[s], gpu_masks[s], kRadius);
      EXPECT_EQ(check.mismatches, 0) << check.first_mismatch;
      object_pixels += check.object_pixels;
    }
    // nvJPEG vs libjpeg-turbo: a few levels of 255 on average, <= 0.05 after / std; a wrong window
    // or mirror gives > 0.3.
    EXPECT_LT(sum / n, 0.15);
  }
  EXPECT_GT(object_pixels, 0);
}

}  // namespace
}  // namespace conveyor::cli_test
