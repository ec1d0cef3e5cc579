// Checkpoint / resume on the CPU: N iterations with a checkpoint after k, the pipeline destroyed and
// a fresh one resumed for N-k more, equal bit for bit to one uninterrupted run — with shuffling,
// sharding, random augmentation, checkpoints mid-epoch and at epoch boundaries, prefetch 1 and 3 —
// and checkpoints of another pipeline refused with what differs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/error.h"
#include "core/pipeline/checkpoint.h"
#include "tests/distributed/checkpoint_fixture.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

// 21 files, 3 shards of 7, batches of 4: with pad_last_batch an epoch is 2 batches (8 samples,
// the last repeated), so k = 2, 4 are epoch boundaries and 1, 3, 5 are mid-epoch; without it the
// stream runs across epochs and every k cuts somewhere else in the permutation.
constexpr int kIterations = 7;

class CheckpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { root_ = new std::string(MakeJpegTree(3, 7)); }
  static void TearDownTestSuite() { delete root_; }
  TrainOptions Options() const {
    TrainOptions o;
    o.root = *root_;
    return o;
  }
  static std::string* root_;
};
std::string* CheckpointTest::root_ = nullptr;

std::vector<IterationBytes> Concat(std::vector<IterationBytes> a, const std::vector<IterationBytes>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(CheckpointTest, ResumedRunEqualsTheUninterruptedOne) {
  for (bool pad : {true, false}) {
    for (int prefetch : {1, 3}) {
      TrainOptions o = Options();
      o.pad = pad;
      o.prefetch = prefetch;
      const std::string yaml = TrainYaml(o);
      const std::vector<IterationBytes> whole = RunFor(yaml, kIterations);
      // The stream really changes: no two iterations alike (a resume that replayed iteration 0
      // would be caught), epochs differ from one another.
      for (int i = 1; i < kIterations; ++i) ASSERT_NE(whole[i], whole[i - 1]) << "iteration " << i;
      for (int k = 0; k < kIterations; ++k) {
        SCOPED_TRACE("pad_last_batch " + std::to_string(pad) + ", prefetch " + std::to_string(prefetch) +
                     ", checkpoint after " + std::to_string(k));
        std::string checkpoint;
        const std::vector<IterationBytes> first = RunFor(yaml, k, "", &checkpoint);
        EXPECT_THAT(checkpoint, HasSubstr("\niteration " + std::to_string(k) + "\n"));
        const std::vector<IterationBytes> rest = RunFor(yaml, kIterations - k, checkpoint);
        EXPECT_TRUE(Concat(first, rest) == whole);
      }
    }
  }
}

TEST_F(CheckpointTest, ResumeOfAResumeAndAnotherPrefetchDepth) {
  TrainOptions o = Options();
  const std::vector<IterationBytes> whole = RunFor(TrainYaml(o), 9);
  std::string c1, c2;
  std::vector<IterationBytes> got = RunFor(TrainYaml(o), 3, "", &c1);
  o.prefetch = 1;  // prefetch depth, threads and device_id do not decide the batches
  got = Concat(got, RunFor(TrainYaml(o), 3, c1, &c2));
  o.prefetch = 4;
  got = Concat(got, RunFor(TrainYaml(o), 3, c2));
  EXPECT_TRUE(got == whole);
}

// The checkpoint is of the first iteration not yet handed out, not of what the stage has
// prefetched: with 3 iterations done ahead, it still says iteration 0 and the reader at the start.
TEST_F(CheckpointTest, PrefetchedIterationsAreNotInTheCheckpoint) {
  const std::string yaml = TrainYaml(Options());
  const std::vector<IterationBytes> whole = RunFor(yaml, 4);
  Pipeline p = Pipeline::FromYaml(yaml);
  p.Build();
  for (int i = 0; i < 2000 && p.counters().iterations < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(p.counters().iterations, 3) << "the stage did not prefetch";
  const std::string at0 = p.Checkpoint();
  EXPECT_THAT(at0, HasSubstr("\niteration 0\n"));
  EXPECT_THAT(at0, HasSubstr("state reader dataset_size=21 shard_id=1 num_shards=3 epoch=0 position=0\n"));
  EXPECT_EQ(Take(p), whole[0]);
  EXPECT_THAT(p.Checkpoint(), HasSubstr("epoch=0 position=4\n"));
  EXPECT_TRUE(RunFor(yaml, 4, at0) == whole);
}

// Checkpoint() takes the executor's lock for a copy of a few strings; the stage thread never holds
// it while operators run. So it returns at once while an iteration is in a slow operator.
TEST_F(CheckpointTest, CheckpointDoesNotWaitForTheStage) {
  const std::string yaml =
      "pipeline: {name: slow, batch_size: 2, device: cpu, prefetch_depth: 2, seed: 3}\n"
      "ops:\n  - {op: readers.file, name: reader, outputs: [jpegs, labels], args: {file_root: \"" + *root_ +
      "\", random_shuffle: true}}\n"
      "  - {op: testing.pattern, name: slow, outputs: [p], args: {sleep_ms: 400}}\n"
      "outputs: [labels, p]\n";
  const std::vector<IterationBytes> whole = RunFor(yaml, 3);
  Pipeline p = Pipeline::FromYaml(yaml);
  p.Build();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the stage is in iteration 0's sleep
  const auto start = std::chrono::steady_clock::now();
  const std::string at0 = p.Checkpoint();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 200.0) << "Checkpoint() waited for the stage";
  EXPECT_EQ(p.counters().iterations, 0) << "iteration 0 should still be running";
  EXPECT_THAT(at0, HasSubstr("\niteration 0\n"));
  EXPECT_THAT(at0, HasSubstr("epoch=0 position=0\n"));
  EXPECT_EQ(Take(p), whole[0]);
  const std::string at1 = p.Checkpoint();  // iteration 1 is running (or about to)
  EXPECT_THAT(at1, HasSubstr("\niteration 1\n"));
  EXPECT_THAT(at1, HasSubstr("epoch=0 position=2\n"));
  const std::vector<IterationBytes> rest = RunFor(yaml, 2, at1);
  EXPECT_TRUE(rest[0] == whole[1] && rest[1] == whole[2]);
}

TEST_F(CheckpointTest, FormatIsVersionedAndSmall) {
  std::string checkpoint;
  RunFor(TrainYaml(Options()), 2, "", &checkpoint);
  EXPECT_EQ(checkpoint.rfind("conveyor-checkpoint 1\n", 0), 0u) << checkpoint;
  EXPECT_LT(checkpoint.size(), 1024u) << checkpoint;
  const Checkpoint parsed = Checkpoint::Parse(checkpoint);
  EXPECT_EQ(parsed.iteration, 2);
  EXPECT_EQ(parsed.seed, 7u);
  EXPECT_EQ(parsed.Serialize(), checkpoint);
  ASSERT_EQ(parsed.states.size(), 1u);
  EXPECT_EQ(parsed.states[0].first, "reader");
  EXPECT_EQ(parsed.states[0].second, "dataset_size=21 shard_id=1 num_shards=3 epoch=1 position=0");
}

// With on_error: skip the reader replaces damaged files by the next ones of its stream; the checks
// are deterministic, so a resumed run skips the same files at the same places.
TEST_F(CheckpointTest, ResumeWithSkippedFiles) {
  TrainOptions o = Options();
  o.root = MakeJpegTree(3, 7);
  for (const char* name : {"/class0/img2.jpg", "/class1/img5.jpg", "/class2/img0.jpg"}) {
    testimages::WriteFile(o.root + name, testimages::Truncate(testimages::MakePhotoJpeg(3, 40, 30), 0.4));
  }
  o.decode_args = "{on_error: skip}";
  o.pad = false;
  const std::string yaml = TrainYaml(o);
  const std::vector<IterationBytes> whole = RunFor(yaml, kIterations);
  for (int k : {1, 3, 4}) {
    std::string checkpoint;
    std::vector<IterationBytes> got = RunFor(yaml, k, "", &checkpoint);
    const std::vector<IterationBytes> rest = RunFor(yaml, kIterations - k, checkpoint);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_TRUE(got == whole) << "checkpoint after " << k;
  }
}

void ExpectRefused(const std::string& yaml, const std::string& checkpoint, const std::string& message) {
  Pipeline p = Pipeline::FromYaml(yaml);
  p.ResumeFrom(checkpoint);
  EXPECT_THAT([&] { p.Build(); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
}

TEST_F(CheckpointTest, CheckpointOfAnotherPipelineIsRefused) {
  std::string checkpoint;
  RunFor(TrainYaml(Options()), 3, "", &checkpoint);
  TrainOptions o = Options();
  o.seed = 8;
  ExpectRefused(TrainYaml(o), checkpoint,
                "pipeline \"train\": the checkpoint is of another pipeline: seed 7 in the checkpoint, 8 here");
  o = Options();
  o.shard = 2;
  ExpectRefused(TrainYaml(o), checkpoint,
                "op \"readers.file\" (reader): the checkpoint is of another pipeline: it read shard_id 1 of "
                "num_shards 3, this node reads shard_id 2 of num_shards 3");
  o = Options();
  o.shards = 4;
  o.shard = 1;
  ExpectRefused(TrainYaml(o), checkpoint, "this node reads shard_id 1 of num_shards 4");
  o = Options();
  o.root = MakeJpegTree(3, 8);
  ExpectRefused(TrainYaml(o), checkpoint, "the checkpoint is of another pipeline: node \"reader\" changed");
  o = Options();
  o.crop_size = "[16, 16]";
  ExpectRefused(TrainYaml(o), checkpoint, "the checkpoint is of another pipeline: node \"rrc\" changed");
  o = Options();
  o.batch = 5;
  ExpectRefused(TrainYaml(o), checkpoint, "batch_size 4 in the checkpoint, 5 here");
  std::string other = TrainYaml(Options());
  other.replace(other.find("outputs: [images, labels, u]"), 28, "outputs: [images, labels]");
  ExpectRefused(other, checkpoint, "the graph differs (pipeline name or device, node order or outputs)");
}

// The same files under the same root, one more of them: the node's arguments are equal, the
// reader's dataset size is not.
TEST_F(CheckpointTest, DatasetOfAnotherSizeIsRefused) {
  TrainOptions o = Options();
  o.root = MakeJpegTree(3, 7);
  std::string checkpoint;
  RunFor(TrainYaml(o), 1, "", &checkpoint);
  testimages::WriteFile(o.root + "/class0/extra.jpg", testimages::MakePhotoJpeg(1, 30, 30));
  ExpectRefused(TrainYaml(o), checkpoint,
                "op \"readers.file\" (reader): the checkpoint is of another pipeline: its dataset had 21 samples, "
                "this one has 22");
}

TEST_F(CheckpointTest, MalformedCheckpointsAndMisuse) {
  Pipeline p = Pipeline::FromYaml(TrainYaml(Options()));
  const auto refused = [&](const std::string& text, const std::string& message) {
    EXPECT_THAT([&] { p.ResumeFrom(text); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message))) << text;
  };
  refused("", "checkpoint: empty");
  refused("{\"epoch\": 1}", "checkpoint line 1: expected \"conveyor-checkpoint VERSION\" (not a checkpoint?)");
  refused("conveyor-checkpoint 2\n", "checkpoint line 1: this build reads checkpoint format version 1, got "
                                     "\"conveyor-checkpoint 2\"");
  refused("conveyor-checkpoint 1\niteration -3\n", "checkpoint line 2: expected \"iteration N\", N >= 0");
  refused("conveyor-checkpoint 1\niteration 3\nwhat 4\n", "checkpoint line 3: unknown key \"what\"");
  refused("conveyor-checkpoint 1\nseed 3\n", "checkpoint: incomplete");
  EXPECT_THAT([&] { p.Checkpoint(); }, ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("Checkpoint() before Build()")));
  p.Build();
  EXPECT_THAT([&] { p.ResumeFrom("conveyor-checkpoint 1\n"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("ResumeFrom() after Build()")));
  // A reader state that does not parse.
  std::string checkpoint = p.Checkpoint();
  checkpoint.replace(checkpoint.find("epoch=0"), 7, "epoch=x");
  ExpectRefused(TrainYaml(Options()), checkpoint, "reader state: expected \"epoch=E position=P\", got \"epoch=x");
}

}  // namespace
}  // namespace conveyor::testing
