// pipelines/video_train.yaml through the CLI on the CPU over the sample clips (video_outputs.h):
// with the crop set to the whole frame, every batch holds every clip of the epoch once, 16 frames at
// stride 2 from a start on the step, with its class's label — straight when the coin says so,
// mirrored as a whole clip otherwise. The GPU twin: video_pipeline_gpu_test.cc.
#include "tests/cli/video_outputs.h"

namespace conveyor::cli_test {
namespace {

TEST(VideoTrainPipeline, WithoutTheFlipEveryFrameIsTheExpectedOne) {
  const std::vector<Clip> clips = RunAndRead("cpu", {"flip.probability=0"});
  ExpectTheEpochsClips(clips);
  for (const Clip& c : clips) EXPECT_FALSE(IsMirrored(c));
}

TEST(VideoTrainPipeline, OneCoinPerClipMirrorsWholeClips) {
  const std::vector<Clip> clips = RunAndRead("cpu", {});
  ExpectTheEpochsClips(clips);
  const auto mirrored = std::count_if(clips.begin(), clips.end(), IsMirrored);
  EXPECT_GT(mirrored, 0);
  EXPECT_LT(mirrored, 12) << "seed 1234 draws both sides of the coin over 12 clips";
}

}  // namespace
}  // namespace conveyor::cli_test
