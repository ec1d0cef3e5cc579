// tools/soak/conveyor_soak, the soak tool of issue 15, run as users run it (the real binary, a real
// YAML file): a short soak of a CPU pipeline passes with its interval lines and summary; usage
// errors exit 2 with the reason; a pipeline that fails on a damaged file exits 1 naming the file and
// node; on a GPU, a
// GPU pipeline consumed on the consumer's stream passes with flat device memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_runner.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {
namespace {

using cli_test::CliResult;
using cli_test::ReadText;
using cli_test::WriteText;

CliResult RunSoak(const std::vector<std::string>& args) {
  return cli_test::RunProgram("tools/soak/conveyor_soak", args);
}

// The driver's figure (cudaMemGetInfo) is the whole device's: other GPU processes beside this test
// (a sanitizer sweep runs several at once) move it. These tests check the tool's own figures;
// the driver limit is the real soak's (tools/soak/run_soak.sh), alone on its GPU.
const std::vector<std::string> kDriverLimitOff = {"--max-driver-growth-mib", "1000000"};

// Under compute-sanitizer (run.sh sets CONVEYOR_UNDER_SANITIZER) the tool's process carries the
// sanitizer's own bookkeeping, which grows its resident memory (+80 MiB in 3 s under initcheck on
// the H100): the host limit is for runs without it.
// Seconds-long runs on a shared machine (CI's two cores) are not for judging images/s stability:
// --min-rate-ratio 0, except in the test of that check.
std::vector<std::string> LimitsOff() {
  std::vector<std::string> off = kDriverLimitOff;
  off.insert(off.end(), {"--min-rate-ratio", "0"});
  if (std::getenv("CONVEYOR_UNDER_SANITIZER") != nullptr) {
    off.insert(off.end(), {"--max-host-growth-mib", "1000000"});
  }
  return off;
}

std::vector<std::string> With(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string TempDir() {
  static const std::string dir = cli_test::MakeTempDir("soak_test");
  return dir;
}

std::string WriteYaml(const std::string& name, const std::string& text) {
  const std::string path = TempDir() + "/" + name;
  WriteText(path, text);
  return path;
}

int CountLines(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.rfind(prefix, 0) == 0;
  return n;
}

TEST(Soak, ShortCpuSoakPassesWithIntervalLinesAndSummary) {
  const int seed = static_cast<int>(std::random_device{}() % 100000);
  const std::string yaml = WriteYaml(
      "cpu.yaml", "pipeline: {name: soak_cpu, batch_size: 8, device: cpu, num_threads: 2, prefetch_depth: 2, seed: " +
                      std::to_string(seed) +
                      "}\n"
                      "ops:\n"
                      "  - {op: random.uniform, name: u, args: {range: [0.0, 1.0], shape: [32, 32, 3]}, outputs: [u]}\n"
                      "  - {op: cast, name: c, inputs: [u], args: {dtype: float16}, outputs: [h]}\n"
                      "outputs: [u, h]\n");
  const std::string json = TempDir() + "/soak.json";
  const CliResult r = RunSoak(With(
      {yaml, "--seconds", "2", "--interval", "0.5", "--warmup", "3", "--output", "h", "--json", json}, LimitsOff()));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("output \"h\""), std::string::npos) << r.out;
  // The baseline line plus one per interval (the last one may end early at the deadline).
  EXPECT_GE(CountLines(r.out, "    "), 4) << r.out;
  EXPECT_NE(r.out.find("soak summary: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 0 errors;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": pass"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA graphs 0 captures (+0 after warm-up), 0 replays"), std::string::npos) << r.out;
  const std::string js = ReadText(json);
  EXPECT_EQ(js.rfind("{\"verdict\": \"pass\", \"intervals\": [{\"t\": 0.0", 0), 0u) << js;
}

// The stability check: with --min-rate-ratio 1 any two intervals of different speed fail the run,
// naming the slowest and fastest intervals (three intervals of a CPU pipeline never run at exactly
// the same rate).
TEST(Soak, UnstableImagesPerSecondFailsTheRun) {
  const std::string yaml =
      WriteYaml("rate.yaml",
                "pipeline: {name: soak_rate, batch_size: 4, device: cpu, num_threads: 1, prefetch_depth: 1}\n"
                "ops:\n"
                "  - {op: random.uniform, name: u, args: {range: [0.0, 1.0], shape: [16, 16, 3]}, outputs: [u]}\n"
                "outputs: [u]\n");
  const CliResult r = RunSoak({yaml, "--seconds", "1.5", "--interval", "0.5", "--warmup", "2", "--min-rate-ratio", "1",
                               "--max-driver-growth-mib", "1000000", "--max-host-growth-mib", "1000000"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(": fail"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("images/s not stable: slowest interval "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" < 1.00 x fastest "), std::string::npos) << r.out;
}

TEST(Soak, UsageErrorsExitTwoWithTheReason) {
  CliResult r = RunSoak({});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("conveyor_soak: no pipeline file given"), std::string::npos) << r.err;
  r = RunSoak({"x.yaml", "--seconds", "-3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--seconds takes a positive number"), std::string::npos) << r.err;
  r = RunSoak({"x.yaml", "--min-rate-ratio", "1.5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--min-rate-ratio takes a number in [0, 1]"), std::string::npos) << r.err;
  r = RunSoak({"x.yaml", "--frobnicate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unexpected argument \"--frobnicate\""), std::string::npos) << r.err;
}

TEST(Soak, MissingFileAndFailingPipelineExitOneWithTheMessage) {
  CliResult r = RunSoak({"/nonexistent/pipeline.yaml", "--seconds", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/pipeline.yaml"), std::string::npos) << r.err;
  // A decoder meeting a damaged file in the first iterations: the error names the file and node.
  const std::string dir = TempDir() + "/files/class_a";
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 4; ++i) {
    std::string bytes = "\xff\xd8";  // a JPEG start marker, then noise
    for (int b = 0; b < 200; ++b) bytes += static_cast<char>(rng());
    WriteText(dir + "/damaged" + std::to_string(i) + ".jpg", bytes);
  }
  const std::string yaml =
      WriteYaml("files.yaml",
                "pipeline: {name: soak_files, batch_size: 2, device: cpu, num_threads: 1, prefetch_depth: 1}\n"
                "ops:\n"
                "  - {op: readers.file, name: reader, args: {file_root: '" +
                    TempDir() +
                    "/files'}, outputs: [jpegs, labels]}\n"
                    "  - {op: decoders.image, name: decode, inputs: [jpegs], outputs: [images]}\n"
                    "outputs: [images]\n");
  r = RunSoak({yaml, "--seconds", "2", "--warmup", "4"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"decode\""), std::string::npos) << r.err;
}

TEST(SoakGpu, GpuPipelineConsumedOnItsStreamKeepsDeviceMemoryFlat) {
  CONVEYOR_REQUIRE_GPU();
  const std::string yaml = WriteYaml(
      "gpu.yaml",
      "pipeline: {name: soak_gpu, batch_size: 16, device: gpu, num_threads: 2, prefetch_depth: 2, seed: 9, "
      "graph_capture: true}\n"
      "ops:\n"
      "  - {op: random.uniform, name: u, device: gpu, args: {range: [0.0, 255.0], shape: [64, 64, 3]}, outputs: [u]}\n"
      "  - {op: cast, name: c, device: gpu, inputs: [u], args: {dtype: float16}, outputs: [h]}\n"
      "outputs: [h]\n");
  const CliResult r = RunSoak(
      With({yaml, "--seconds", "3", "--interval", "1", "--warmup", "10", "--max-device-growth-mib", "0"}, LimitsOff()));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Conveyor device +0.0 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(+0 after warm-up)"), std::string::npos) << r.out;  // no re-capture
  EXPECT_NE(r.out.find(": pass"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace conveyor::testing
