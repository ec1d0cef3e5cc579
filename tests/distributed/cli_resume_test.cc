// `conveyor run --checkpoint FILE [--checkpoint-every N]` and `--resume FILE`: a run of 2
// iterations then a resumed run of 4 save the same .npy batches as one run of 6; a checkpoint
// written every 2 iterations holds the latest; a missing or foreign checkpoint file is refused
// with its name or what differs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/session.h"
#include "core/error.h"
#include "tests/distributed/checkpoint_fixture.h"

namespace conveyor::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string BatchFile(const std::string& dir, const std::string& output, int iteration) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "_%06d.npy", iteration);
  const fs::path whole = fs::path(dir) / (output + buf);
  if (fs::exists(whole)) return ReadAll(whole);
  std::string all;  // non-uniform batches: one file per sample
  for (int s = 0;; ++s) {
    std::snprintf(buf, sizeof buf, "_%06d_%04d.npy", iteration, s);
    const fs::path sample = fs::path(dir) / (output + buf);
    if (!fs::exists(sample)) break;
    all += ReadAll(sample);
  }
  return all;
}

int RunCli(const cli::PipelineCommand& cmd, int iterations, const std::string& save, const std::string& checkpoint = "",
        int every = 0) {
  cli::RunOptions o;
  o.iterations = iterations;
  o.save_dir = save;
  o.progress = cli::ProgressMode::kNone;
  o.checkpoint_file = checkpoint;
  o.checkpoint_every = every;
  std::ostringstream out;
  return cli::RunCommand(cmd, o, out);
}

TEST(CliResume, CheckpointThenResumeSavesTheSameBatches) {
  TrainOptions o;
  o.root = MakeJpegTree(3, 5);
  const fs::path dir = fs::path(o.root) / "run";
  fs::create_directories(dir);
  const std::string yaml = (dir / "train.yaml").string();
  std::ofstream(yaml) << TrainYaml(o);
  cli::PipelineCommand cmd;
  cmd.path = yaml;
  ASSERT_EQ(RunCli(cmd, 6, (dir / "whole").string()), 0);
  const std::string ckpt = (dir / "state.ckpt").string();
  ASSERT_EQ(RunCli(cmd, 2, (dir / "first").string(), ckpt), 0);
  EXPECT_THAT(ReadAll(ckpt), HasSubstr("\niteration 2\n"));
  cli::PipelineCommand resumed = cmd;
  resumed.resume = ckpt;
  ASSERT_EQ(RunCli(resumed, 4, (dir / "rest").string(), ckpt, 3), 0);
  EXPECT_THAT(ReadAll(ckpt), HasSubstr("\niteration 6\n")) << "the end's checkpoint replaces every-3's";
  EXPECT_FALSE(fs::exists(ckpt + ".tmp"));
  for (const char* output : {"images", "labels", "u"}) {
    for (int i = 0; i < 6; ++i) {
      const std::string want = BatchFile((dir / "whole").string(), output, i);
      ASSERT_FALSE(want.empty()) << output << " " << i;
      const std::string got = i < 2 ? BatchFile((dir / "first").string(), output, i)
                                    : BatchFile((dir / "rest").string(), output, i - 2);
      EXPECT_TRUE(got == want) << output << " iteration " << i;
    }
  }
  // --checkpoint-every without reaching the end: the latest multiple.
  ASSERT_EQ(RunCli(cmd, 5, "", ckpt, 2), 0);
  EXPECT_THAT(ReadAll(ckpt), HasSubstr("\niteration 5\n"));

  resumed.resume = (dir / "missing.ckpt").string();
  EXPECT_THAT([&] { RunCli(resumed, 1, ""); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("missing.ckpt: cannot open the checkpoint file (--resume)")));
  o.seed = 8;
  std::ofstream(yaml) << TrainYaml(o);
  resumed.resume = ckpt;
  EXPECT_THAT([&] { RunCli(resumed, 1, ""); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("seed 7 in the checkpoint, 8 here")));
}

}  // namespace
}  // namespace conveyor::testing
