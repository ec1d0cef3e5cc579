// tools/soak/conveyor_soak, the soak tool of issue 15, run as users run it (the real binary, a real
// YAML file): a short soak of a CPU pipeline passes with its interval lines and summary; usage
// errors exit 2 with the reason; a pipeline that fails on a damaged file exits 1 naming the file and
// node; on a GPU, a
// GPU pipeline consumed on the consumer's stream passes with flat device memory.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "tests/util/gpu_test.h"

namespace conveyor::testing {
namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string TempDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string d = std::string(t ? t : "/tmp") + "/soak_test." + std::to_string(::getpid());
  std::filesystem::create_directories(d);
  return d;
}

Result RunSoak(const std::string& args) {
  const std::string err = TempDir() + "/stderr.txt";
  const std::string command = "tools/soak/conveyor_soak " + args + " 2>'" + err + "'";
  Result r;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  return r;
}

std::string WriteYaml(const std::string& name, const std::string& text) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path) << text;
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
  const Result r = RunSoak("'" + yaml + "' --seconds 2 --interval 0.5 --warmup 3 --output h --json '" + json + "'");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("output \"h\""), std::string::npos) << r.out;
  // The baseline line plus one per interval (the last one may end early at the deadline).
  EXPECT_GE(CountLines(r.out, "    "), 4) << r.out;
  EXPECT_NE(r.out.find("soak summary: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 0 errors;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": pass"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA graphs 0 captures (+0 after warm-up), 0 replays"), std::string::npos) << r.out;
  std::ifstream j(json);
  std::stringstream js;
  js << j.rdbuf();
  EXPECT_EQ(js.str().rfind("{\"verdict\": \"pass\", \"intervals\": [{\"t\": 0.0", 0), 0u) << js.str();
}

TEST(Soak, UsageErrorsExitTwoWithTheReason) {
  Result r = RunSoak("");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("conveyor_soak: no pipeline file given"), std::string::npos) << r.err;
  r = RunSoak("x.yaml --seconds -3");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--seconds takes a positive number"), std::string::npos) << r.err;
  r = RunSoak("x.yaml --frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unexpected argument \"--frobnicate\""), std::string::npos) << r.err;
}

TEST(Soak, MissingFileAndFailingPipelineExitOneWithTheMessage) {
  Result r = RunSoak("/nonexistent/pipeline.yaml --seconds 1");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/pipeline.yaml"), std::string::npos) << r.err;
  // A decoder meeting a damaged file in the first iterations: the error names the file and node.
  const std::string dir = TempDir() + "/files/class_a";
  std::filesystem::create_directories(dir);
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 4; ++i) {
    std::ofstream f(dir + "/damaged" + std::to_string(i) + ".jpg", std::ios::binary);
    f << "\xff\xd8";  // a JPEG start marker, then noise
    for (int b = 0; b < 200; ++b) f.put(static_cast<char>(rng()));
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
  r = RunSoak("'" + yaml + "' --seconds 2 --warmup 4");
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
  const Result r = RunSoak("'" + yaml + "' --seconds 3 --interval 1 --warmup 10 --max-device-growth-mib 0");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Conveyor device +0.0 MiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(+0 after warm-up)"), std::string::npos) << r.out;  // no re-capture
  EXPECT_NE(r.out.find(": pass"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace conveyor::testing
