// pipelines/video_train.yaml through the CLI on the GPU (NVDEC decoding through the plugin, the
// crop and normalization captured as CUDA graphs) over the sample clips (video_outputs.h): the same
// frames, labels and per-clip mirroring as on the CPU (video_pipeline_test.cc).
#include "tests/cli/video_outputs.h"
#include "tests/util/gpu_test.h"

namespace conveyor::cli_test {
namespace {

TEST(VideoTrainPipelineGpu, EveryFrameIsTheExpectedOneAndTheCoinsAreTheCpus) {
  CONVEYOR_REQUIRE_GPU();
  std::string summary;
  const std::vector<Clip> gpu = RunAndRead("gpu", {}, &summary);
  ExpectTheEpochsClips(gpu);
  EXPECT_THAT(summary, ::testing::HasSubstr("clips_out: float16 12 samples of (16, 3, 112, 112) FCHW on the GPU"));
  const auto [captures, replays] = CapturesAndReplays(summary);
  EXPECT_GE(captures, 1) << summary;
  const std::vector<Clip> cpu = RunAndRead("cpu", {});
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t s = 0; s < gpu.size(); ++s) {
    EXPECT_EQ(IsMirrored(gpu[s]), IsMirrored(cpu[s])) << "sample " << s << ": counter-based coins, same on both";
    EXPECT_EQ(Numbers(gpu[s]), Numbers(cpu[s])) << "sample " << s;
    EXPECT_EQ(gpu[s].label, cpu[s].label) << "sample " << s;
  }
}

}  // namespace
}  // namespace conveyor::cli_test
