// `conveyor run` and `conveyor bench` on CPU pipelines over generated .npy data: progress lines,
// epochs, the summary, --set overrides and their errors, --save-outputs read back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <thread>
#include <vector>

#include "operators/readers/npy_format.h"
#include "tests/cli/cli_runner.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kFiles = 5;

// kFiles uint8 HWC arrays a0..a4 under dir/data (heights 4 + i when `ragged`, else 4), and a
// pipeline reading them in order, batch 2.
struct Dataset {
  std::string dir, yaml;
  std::vector<std::vector<uint8_t>> arrays;
  std::vector<Shape> shapes;
};

Dataset MakeDataset(const std::string& name, bool ragged, const std::string& extra_ops = "") {
  Dataset d;
  d.dir = MakeTempDir(name);
  for (int i = 0; i < kFiles; ++i) {
    const Shape shape{ragged ? 4 + i : 4, 6, 3};
    d.shapes.push_back(shape);
    d.arrays.push_back(RandomBytes(static_cast<size_t>(shape.num_elements()), 100 + i));
    WriteNpy(d.dir + "/data/a" + std::to_string(i) + ".npy", DType::kUInt8, shape, d.arrays.back());
  }
  d.yaml = d.dir + "/numpy.yaml";
  WriteText(d.yaml, R"(pipeline:
  name: numpy_run
  batch_size: 2
  device: cpu
  num_threads: 2
ops:
  - op: readers.numpy
    name: reader
    args: {file_root: data}
    outputs: [arrays]
)" + extra_ops + "outputs: [arrays]\n");
  return d;
}

// The data of a saved .npy file, checking its header's dtype and shape.
std::vector<uint8_t> ReadNpy(const std::string& path, DType dtype, const Shape& shape) {
  const std::string bytes = ReadText(path);
  EXPECT_FALSE(bytes.empty()) << path;
  if (bytes.empty()) return {};
  const ops::NpyHeader h = ops::ParseNpyHeader(bytes.data(), bytes.size(), path);
  EXPECT_EQ(h.dtype, dtype) << path;
  EXPECT_EQ(h.shape, shape) << path;
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(static_cast<int64_t>(bytes.size()), h.data_offset + h.data_bytes()) << path;
  return std::vector<uint8_t>(bytes.begin() + h.data_offset, bytes.end());
}

TEST(CliRun, EpochsProgressAndSummary) {
  const Dataset d = MakeDataset("run_epochs", true);
  const CliResult r = RunConveyor({"run", d.yaml, "--epochs", "2", "--progress-interval", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("running numpy_run (" + d.yaml + ") on cpu: batch 2, 6 iterations"));
  EXPECT_THAT(r.out, HasSubstr("epoch of reader \"reader\": 5 samples = 3 iterations"));
  // Not a terminal: one plain line per iteration at interval 0, epochs counted from the reader.
  EXPECT_THAT(r.out, HasSubstr("progress: iteration 1/6, epoch 1,"));
  EXPECT_THAT(r.out, HasSubstr("progress: iteration 3/6, epoch 1,"));
  EXPECT_THAT(r.out, HasSubstr("progress: iteration 4/6, epoch 2,"));
  EXPECT_THAT(r.out, HasSubstr("progress: iteration 6/6, epoch 2,"));
  EXPECT_THAT(r.out, HasSubstr("epoch ETA"));
  EXPECT_THAT(r.out, HasSubstr("summary: numpy_run on cpu, batch 2, 6 iterations"));
  EXPECT_THAT(r.out, HasSubstr("samples/s"));
  EXPECT_THAT(r.out, HasSubstr("MB/s of outputs"));
  EXPECT_THAT(r.out, HasSubstr("stage time      CPU stage"));
  EXPECT_THAT(r.out, HasSubstr("CUDA graphs     0 captures, 0 replays (graph_capture off)"));
  EXPECT_THAT(r.out, HasSubstr("peak memory     host "));
  EXPECT_THAT(r.out, HasSubstr("arrays: uint8 2 samples, non-uniform, first (4, 6, 3) on the host"));
  EXPECT_EQ(r.out.find("\r"), std::string::npos);  // no terminal redraws in a pipe
}

TEST(CliRun, NoProgressPrintsOnlyTheSummary) {
  const Dataset d = MakeDataset("run_quiet", false);
  const CliResult r = RunConveyor({"run", d.yaml, "--iterations", "4", "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("progress:"), std::string::npos);
  EXPECT_THAT(r.out, HasSubstr("4 iterations (8 samples)"));
}

TEST(CliRun, SaveOutputsUniformBatchesAsOneArray) {
  const Dataset d = MakeDataset("save_uniform", false);
  const std::string out = d.dir + "/saved";
  const CliResult r = RunConveyor({"run", d.yaml, "--iterations", "2", "--save-outputs", out, "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (int it = 0; it < 2; ++it) {
    char name[64];
    std::snprintf(name, sizeof(name), "/arrays_%06d.npy", it);
    const std::vector<uint8_t> got = ReadNpy(out + name, DType::kUInt8, Shape{2, 4, 6, 3});
    std::vector<uint8_t> want = d.arrays[2 * it];
    want.insert(want.end(), d.arrays[2 * it + 1].begin(), d.arrays[2 * it + 1].end());
    EXPECT_EQ(got, want) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(out + "/arrays_000002.npy"));
}

TEST(CliRun, SaveOutputsRaggedBatchesOneFilePerSample) {
  const Dataset d = MakeDataset("save_ragged", true);
  const std::string out = d.dir + "/saved";
  const CliResult r = RunConveyor({"run", d.yaml, "--iterations", "2", "--save-outputs", out, "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (int it = 0; it < 2; ++it) {
    for (int s = 0; s < 2; ++s) {
      char name[64];
      std::snprintf(name, sizeof(name), "/arrays_%06d_%04d.npy", it, s);
      EXPECT_EQ(ReadNpy(out + name, DType::kUInt8, d.shapes[2 * it + s]), d.arrays[2 * it + s]) << name;
    }
  }
}

TEST(CliRun, SaveOutputsIntoAFileIsAnError) {
  const Dataset d = MakeDataset("save_file", false);
  WriteText(d.dir + "/taken", "x");
  const CliResult r = RunConveyor({"run", d.yaml, "--save-outputs", d.dir + "/taken"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--save-outputs: cannot create the folder \"" + d.dir + "/taken\""));
}

TEST(CliRun, SetAndBatchSizeOverrideThePipeline) {
  const Dataset d = MakeDataset("set_ok", false);
  const std::string out = d.dir + "/saved";
  // Batch 5 is the whole dataset; shuffled, its samples are a permutation of the files.
  const CliResult r = RunConveyor({"run", d.yaml, "--batch-size", "5", "--set", "reader.random_shuffle=true",
                                   "--set", "pipeline.seed=7", "--set", "pipeline.cpu_stage_thread=true",
                                   "--save-outputs", out, "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("batch 5, 1 iterations"));
  const std::vector<uint8_t> got = ReadNpy(out + "/arrays_000000.npy", DType::kUInt8, Shape{5, 4, 6, 3});
  const size_t n = d.arrays[0].size();
  std::vector<int> seen(kFiles, 0);
  for (int s = 0; s < kFiles && got.size() == n * kFiles; ++s) {
    const std::vector<uint8_t> sample(got.begin() + s * n, got.begin() + (s + 1) * n);
    for (int f = 0; f < kFiles; ++f) seen[f] += sample == d.arrays[f];
  }
  EXPECT_EQ(seen, std::vector<int>(kFiles, 1));
}

// --set on an argument fed per sample (`horizontal: $c`) replaces the feed with the constant: a coin
// that never flips, overridden to flip every sample; without the override nothing is flipped.
TEST(CliRun, SetReplacesAPerSampleFeed) {
  const Dataset d = MakeDataset("set_feed", false);
  WriteText(d.yaml, R"(pipeline: {name: feed, batch_size: 5, device: cpu, num_threads: 2}
ops:
  - op: readers.numpy
    name: reader
    args: {file_root: data}
    outputs: [arrays]
  - op: random.coin_flip
    name: coin
    args: {probability: 0.0}
    outputs: [c]
  - op: flip
    name: fl
    inputs: [arrays]
    args: {horizontal: $c}
    outputs: [flipped]
outputs: [flipped]
)");
  for (const bool set : {false, true}) {
    const std::string out = d.dir + (set ? "/set" : "/plain");
    std::vector<std::string> args = {"run", d.yaml, "--iterations", "1", "--save-outputs", out, "--no-progress"};
    if (set) args.insert(args.end(), {"--set", "fl.horizontal=1"});
    const CliResult r = RunConveyor(args);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<uint8_t> got = ReadNpy(out + "/flipped_000000.npy", DType::kUInt8, Shape{5, 4, 6, 3});
    ASSERT_EQ(got.size(), d.arrays[0].size() * kFiles);
    for (int f = 0; f < kFiles; ++f) {
      std::vector<uint8_t> want = d.arrays[static_cast<size_t>(f)];
      if (set) {  // HWC 4x6x3, columns reversed
        for (int y = 0; y < 4; ++y) {
          for (int x = 0; x < 6; ++x) {
            for (int c = 0; c < 3; ++c) want[(y * 6 + x) * 3 + c] = d.arrays[f][(y * 6 + (5 - x)) * 3 + c];
          }
        }
      }
      const std::vector<uint8_t> sample(got.begin() + f * want.size(), got.begin() + (f + 1) * want.size());
      EXPECT_EQ(sample, want) << (set ? "--set" : "plain") << ", sample " << f;
    }
  }
}

TEST(CliRun, SetErrorsNameTheKeyAndWhatWasExpected) {
  const Dataset d = MakeDataset("set_bad", false);
  auto err = [&](const std::string& set) {
    const CliResult r = RunConveyor({"run", d.yaml, "--set", set});
    EXPECT_EQ(r.status, 1) << set;
    return r.err;
  };
  EXPECT_THAT(err("reader.random_shufle=true"),
              HasSubstr("--set reader.random_shufle=true: op \"readers.numpy\" (reader) has no argument "
                        "\"random_shufle\"; did you mean \"random_shuffle\"?"));
  EXPECT_THAT(err("reader.num_shards=0"), HasSubstr("--set reader.num_shards=0: op \"readers.numpy\" (reader): "
                                                   "argument \"num_shards\": expected a value"));
  EXPECT_THAT(err("reader.random_shuffle=maybe"), HasSubstr("expected bool, got \"maybe\""));
  EXPECT_THAT(err("reader.shard_id=1.5"), HasSubstr("expected int, got \"1.5\""));
  EXPECT_THAT(err("redaer.shard_id=1"), HasSubstr("no node named \"redaer\"; did you mean \"reader\"?"));
  EXPECT_THAT(err("pipeline.batch_sise=4"), HasSubstr("unknown pipeline key \"batch_sise\"; did you mean \"batch_size\"?"));
  EXPECT_THAT(err("pipeline.batch_size=0"), HasSubstr("pipeline.batch_size must be an integer >= 1, got 0"));
  EXPECT_THAT(err("pipeline.cpu_stage_thread=yes"),
              HasSubstr("--set pipeline.cpu_stage_thread=yes: expected true, false or auto, got \"yes\""));
  EXPECT_THAT(err("batch_size"), HasSubstr("--set batch_size: expected KEY=VALUE with KEY pipeline.FIELD or NODE.ARGUMENT"));
}

TEST(CliRun, PluginPipeline) {
  const std::string plugin = std::filesystem::absolute("tests/cli/libcli_invert.so").string();
  const Dataset d = MakeDataset("plugin_run", false, R"(  - op: cli_example.invert
    name: invert
    inputs: [arrays]
    outputs: [inverted]
)");
  // The dataset's file lists `arrays` as the output; point it at the plugin's.
  std::string yaml = ReadText(d.yaml);
  yaml.replace(yaml.rfind("outputs: [arrays]"), std::string("outputs: [arrays]").size(), "outputs: [inverted]");
  yaml.replace(yaml.find("ops:"), 4, "plugins: [" + plugin + "]\nops:");
  WriteText(d.yaml, yaml);
  const std::string out = d.dir + "/saved";
  const CliResult r = RunConveyor({"run", d.yaml, "--iterations", "1", "--save-outputs", out, "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err << yaml;
  const std::vector<uint8_t> got = ReadNpy(out + "/inverted_000000.npy", DType::kUInt8, Shape{2, 4, 6, 3});
  ASSERT_EQ(got.size(), 2 * d.arrays[0].size());
  for (size_t i = 0; i < got.size(); ++i) {
    const uint8_t in = d.arrays[i / d.arrays[0].size()][i % d.arrays[0].size()];
    ASSERT_EQ(got[i], 255 - in) << i;
  }
}

TEST(CliRun, EpochsNeedAReader) {
  const std::string dir = MakeTempDir("no_reader");
  WriteText(dir + "/p.yaml", R"(pipeline: {name: noreader, batch_size: 2, device: cpu}
ops:
  - {op: random.uniform, name: noise, args: {shape: [3]}, outputs: [noise]}
outputs: [noise]
)");
  const CliResult r = RunConveyor({"run", dir + "/p.yaml", "--epochs", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("--epochs needs a reader node (readers.*) to define an epoch; use --iterations"));
  // Without a reader and without --iterations: 100 iterations.
  const CliResult ok = RunConveyor({"run", dir + "/p.yaml", "--no-progress"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("100 iterations (200 samples)"));
}

TEST(CliRun, BadFilesAreUserErrors) {
  const std::string dir = MakeTempDir("run_bad");
  WriteText(dir + "/p.yaml", "pipeline: {name: x}\nops:\n  - {op: random.unifrom, outputs: [a]}\noutputs: [a]\n");
  const CliResult r = RunConveyor({"run", dir + "/p.yaml"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr(dir + "/p.yaml:3:"));
  EXPECT_THAT(r.err, HasSubstr("did you mean \"random.uniform\"?"));
  const CliResult missing = RunConveyor({"run", dir + "/none.yaml"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_THAT(missing.err, HasSubstr("conveyor run: error: " + dir + "/none.yaml: cannot open the pipeline file"));
}

TEST(CliRun, FailingPipelineIsOneLineNotACrash) {
  const Dataset d = MakeDataset("run_fail", false);
  WriteText(d.dir + "/data/broken.npy", "not an array");
  const CliResult r = RunConveyor({"run", d.yaml, "--iterations", "3"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("conveyor run: error:"));
  EXPECT_THAT(r.err, HasSubstr("broken.npy"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("terminate")));
}

// The CLI registers no user functions: a python_function node fails the run at its `function`
// argument, naming the function and where it has to be registered.
TEST(CliRun, PythonFunctionNodesNeedAFunctionTheCliCannotRegister) {
  const Dataset d = MakeDataset("run_function", false,
                                "  - {op: python_function, name: augment, inputs: [arrays], args: {function: "
                                "my_augment}, outputs: [augmented]}\n");
  const CliResult r = RunConveyor({"run", d.yaml, "--iterations", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr(d.yaml + ":11:"));
  EXPECT_THAT(r.err, HasSubstr("op \"python_function\" (augment): function \"my_augment\" is not registered"));
  EXPECT_THAT(r.err, HasSubstr("`conveyor run` cannot call user code"));
}

// CONVEYOR_CUDA_SCHEDULE, the bench's measuring switch for how host threads wait for the GPU: a
// known value runs (without a GPU there is nothing to set), anything else is refused by name.
TEST(CliBench, CudaScheduleSwitch) {
  const Dataset d = MakeDataset("bench_schedule", false);
  ASSERT_EQ(setenv("CONVEYOR_CUDA_SCHEDULE", "blocking", 1), 0);
  const CliResult ok = RunConveyor({"bench", d.yaml, "--iterations", "2", "--warmup", "0", "--repeats", "1"});
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("| samples/s | "));
  ASSERT_EQ(setenv("CONVEYOR_CUDA_SCHEDULE", "sometimes", 1), 0);
  const CliResult bad = RunConveyor({"bench", d.yaml, "--iterations", "2", "--warmup", "0", "--repeats", "1"});
  unsetenv("CONVEYOR_CUDA_SCHEDULE");
  EXPECT_EQ(bad.status, 1);
  EXPECT_THAT(bad.err, HasSubstr("CONVEYOR_CUDA_SCHEDULE: expected auto, spin, yield or blocking (how host threads "
                                 "wait for the GPU), got \"sometimes\""));
}

TEST(CliBench, TableAndJson) {
  const Dataset d = MakeDataset("bench", false);
  const CliResult table = RunConveyor({"bench", d.yaml, "--iterations", "4", "--warmup", "1", "--repeats", "3"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("bench: numpy_run on cpu, batch 2, 1 warm-up + 3 x 4 timed iterations"));
  EXPECT_THAT(table.out, HasSubstr("| samples/s | "));
  EXPECT_THAT(table.out, HasSubstr("| CPU stage | "));
  EXPECT_THAT(table.out, Not(HasSubstr("the driver's figure")));  // no GPU stage: the driver is not asked
  const CliResult json = RunConveyor({"bench", d.yaml, "--iterations", "4", "--warmup", "0", "--repeats", "2", "--json"});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"pipeline\": \"numpy_run\""));
  EXPECT_THAT(json.out, HasSubstr("\"repeats\": 2"));
  EXPECT_THAT(json.out, HasSubstr("\"samples_per_s\": {\"min\": "));
  EXPECT_THAT(json.out, HasSubstr("\"ms_per_iteration\": {\"cpu_stage\": "));
  // min <= median <= max, and the repeats list has two positive rates.
  double mn = 0, med = 0, mx = 0, r0 = 0, r1 = 0;
  const size_t at = json.out.find("\"samples_per_s\"");
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(std::sscanf(json.out.c_str() + at,
                        "\"samples_per_s\": {\"min\": %lf, \"median\": %lf, \"max\": %lf, \"repeats\": [%lf, %lf]}",
                        &mn, &med, &mx, &r0, &r1),
            5)
      << json.out;
  EXPECT_GT(mn, 0);
  EXPECT_LE(mn, med);
  EXPECT_LE(med, mx);
  EXPECT_DOUBLE_EQ(std::min(r0, r1), mn);
  // CPU cores busy over the timed part: the pipeline's work ran on this process's threads, never on
  // more cores than the machine has.
  double cores = -1;
  const size_t busy = json.out.find("\"cpu_cores_busy\"");
  ASSERT_NE(busy, std::string::npos) << json.out;
  ASSERT_EQ(std::sscanf(json.out.c_str() + busy, "\"cpu_cores_busy\": %lf", &cores), 1) << json.out;
  EXPECT_GT(cores, 0) << json.out;
  EXPECT_LE(cores, static_cast<double>(std::thread::hardware_concurrency()) + 0.5) << json.out;
  EXPECT_THAT(table.out, HasSubstr("CPU cores busy over the timed part (process CPU time / wall): "));
  // One wall time per timed iteration (2 x 4), each positive, summing to about the repeats' time;
  // no decoder in this pipeline, so no decoder_call_ms.
  const size_t per = json.out.find("\"iteration_ms\": [");
  ASSERT_NE(per, std::string::npos) << json.out;
  std::vector<double> gaps(9, -1);
  const int got = std::sscanf(json.out.c_str() + per, "\"iteration_ms\": [%lf, %lf, %lf, %lf, %lf, %lf, %lf, %lf]",
                              &gaps[0], &gaps[1], &gaps[2], &gaps[3], &gaps[4], &gaps[5], &gaps[6], &gaps[7]);
  EXPECT_EQ(got, 8) << json.out;
  for (int i = 0; i < got; ++i) EXPECT_GE(gaps[i], 0) << i;
  // Each repeat is 8 samples (4 iterations of batch 2): the gaps add up to both repeats' time.
  const double sum = std::accumulate(gaps.begin(), gaps.begin() + got, 0.0);
  EXPECT_LE(sum, 1.05 * 2e3 * 8.0 / mn + 5) << json.out;
  EXPECT_GE(sum, 0.95 * 2e3 * 8.0 / mx) << json.out;
  EXPECT_THAT(json.out, Not(HasSubstr("\"decoder_call_ms\"")));
  // Our pools' memory closes the object; a CPU pipeline takes no GPU memory.
  double dev_peak = -1, dev_driver = -1, pin_peak = -1, pin_driver = -1;
  double open = -1, peak = -1, nv_cuda = -1, nv_hw = -1, hw_create = -1, hw_prealloc = -1;
  const size_t mem = json.out.find("\"memory_mib\"");
  ASSERT_NE(mem, std::string::npos) << json.out;
  ASSERT_EQ(std::sscanf(json.out.c_str() + mem,
                        "\"memory_mib\": {\"device_peak_in_use\": %lf, \"device_from_driver\": %lf, "
                        "\"pinned_peak_in_use\": %lf, \"pinned_from_driver\": %lf, \"driver_in_use_after_open\": %lf, "
                        "\"driver_in_use_peak\": %lf, \"nvjpeg_cuda_device_peak\": %lf, "
                        "\"nvjpeg_engines_device_peak\": %lf, \"nvjpeg_engines_at_create\": %lf, "
                        "\"nvjpeg_engines_at_prealloc\": %lf}}",
                        &dev_peak, &dev_driver, &pin_peak, &pin_driver, &open, &peak, &nv_cuda, &nv_hw, &hw_create,
                        &hw_prealloc),
            10)
      << json.out;
  EXPECT_EQ(dev_peak, 0);
  EXPECT_EQ(dev_driver, 0);
  EXPECT_GE(pin_driver, pin_peak);
  // No GPU stage: the driver is never asked, and no nvJPEG decoder exists.
  for (double v : {open, peak, nv_cuda, nv_hw, hw_create, hw_prealloc}) EXPECT_EQ(v, 0) << json.out;
  EXPECT_EQ(json.out[json.out.find_last_not_of('\n')], '}') << json.out;
}

}  // namespace
}  // namespace conveyor::cli_test
