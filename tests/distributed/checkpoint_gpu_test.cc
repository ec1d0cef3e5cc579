// Checkpoint / resume on the GPU: the checkpoint test's pipeline with the decoder (nvJPEG),
// random_resized_crop and flip on the GPU, eager and with graph capture, prefetch 3: a run resumed
// after k iterations continues the uninterrupted one bit for bit (mid-epoch and at an epoch
// boundary), and a resume may switch capture on or off (it does not decide the batches).
// The decoder's engines/CUDA split is fixed (hw_decoder_load): the automatic split follows measured
// rates, so which backend decodes an image — and the last bits of its pixels — depends on timing
// (docs/distributed.md, "What it reproduces"). Both fixed splits are checked.
#include <gtest/gtest.h>

#include "tests/distributed/checkpoint_fixture.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {
namespace {

constexpr int kIterations = 7;

TEST(CheckpointGpu, ResumedRunEqualsTheUninterruptedOne) {
  CONVEYOR_REQUIRE_GPU();
  TrainOptions o;
  o.root = MakeJpegTree(3, 7);  // 21 files, 3 shards of 7, batches of 4: 2 per epoch (padded)
  o.device = "gpu";
  for (bool capture : {false, true}) {
    o.capture = capture;
    // Engines where they take the image (capture off), the CUDA backend only (capture on).
    o.decode_args = capture ? "{hw_decoder_load: 0.0}" : "{hw_decoder_load: 1.0}";
    const std::string yaml = TrainYaml(o);
    const std::vector<IterationBytes> whole = RunFor(yaml, kIterations);
    for (int i = 1; i < kIterations; ++i) ASSERT_NE(whole[i], whole[i - 1]) << "iteration " << i;
    for (int k : {2, 3, 5}) {
      SCOPED_TRACE(std::string("graph_capture ") + (capture ? "on" : "off") + ", checkpoint after " +
                   std::to_string(k));
      std::string checkpoint;
      std::vector<IterationBytes> got = RunFor(yaml, k, "", &checkpoint);
      TrainOptions other = o;
      other.capture = !capture;  // capture is not part of the fingerprint
      const std::vector<IterationBytes> rest = RunFor(k == 3 ? TrainYaml(other) : yaml, kIterations - k, checkpoint);
      got.insert(got.end(), rest.begin(), rest.end());
      EXPECT_TRUE(got == whole);
    }
  }
}

// The CPU pipeline and the GPU one are different graphs: a checkpoint of one is refused by the
// other, naming the nodes whose device changed.
TEST(CheckpointGpu, CpuCheckpointRefusedByTheGpuPipeline) {
  CONVEYOR_REQUIRE_GPU();
  TrainOptions o;
  o.root = MakeJpegTree(3, 7);
  std::string checkpoint;
  RunFor(TrainYaml(o), 1, "", &checkpoint);
  o.device = "gpu";
  Pipeline p = Pipeline::FromYaml(TrainYaml(o));
  p.ResumeFrom(checkpoint);
  try {
    p.Build();
    ADD_FAILURE() << "expected a refusal";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("node \"decode\" changed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace conveyor::testing
