// The shipped pipelines (pipelines/*.yaml) through the CLI on the GPU with CUDA graph capture, over
// the sample dataset (shipped_pipelines.h): every file runs, captures and replays graphs, decodes
// with nvJPEG where it decodes, and gives the CPU's outputs — bit for bit where the operators are
// exact (cast, the plugin's fma), within a stated bound where decoders differ (nvJPEG vs
// libjpeg-turbo). The CPU twin: pipelines_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/tensor/half.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/shipped_pipelines.h"
#include "tests/util/gpu_test.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;

constexpr int kBatch = 8;
constexpr int kIterations = 6;

CliResult RunPipeline(const std::string& file, const std::string& device, int iterations, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", file, "--device", device, "--batch-size", std::to_string(kBatch),
                                   "--iterations", std::to_string(iterations), "--no-progress"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunConveyor(args);
}

TEST(ShippedPipelinesGpu, EachRunsOnTheGpuWithGraphCapture) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  for (const ShippedPipeline& p : ShippedPipelines(kBatch)) {
    SCOPED_TRACE(p.file);
    const CliResult r = RunPipeline(p.file, "gpu", kIterations, p.args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(" on gpu, batch 8, 6 iterations (48 samples)"));
    const auto [captures, replays] = CapturesAndReplays(r.out);
    EXPECT_GE(captures, 1) << r.out;
    EXPECT_GE(replays, kIterations) << "a captured segment every iteration\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(p.outputs.front() + " on the GPU"));
    for (const std::string& output : p.outputs) EXPECT_THAT(r.out, HasSubstr(output));
    if (p.decodes) {
      // Every image of the 6 iterations went through the GPU decoder, on whichever path.
      EXPECT_THAT(r.out, HasSubstr("decoders        decode (gpu, nvJPEG): 48 images: hardware engines "));
    }
  }
}

TEST(ShippedPipelinesGpu, ExactOperatorsMatchTheCpuBitForBit) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  const std::string dir = MakeTempDir("gpu_vs_cpu_exact");
  for (const auto& [file, output] : std::vector<std::pair<std::string, std::string>>{
           {"pipelines/numpy_features.yaml", "features"}, {"pipelines/plugin_example.yaml", "percent"}}) {
    SCOPED_TRACE(file);
    for (const char* device : {"cpu", "gpu"}) {
      const CliResult r = RunPipeline(file, device, 2, {"--save-outputs", dir + "/" + output + "_" + device});
      ASSERT_EQ(r.status, 0) << r.err;
    }
    for (const char* it : {"000000", "000001"}) {
      const std::string name = "/" + output + "_" + it + ".npy";
      const std::string cpu = ReadText(dir + "/" + output + "_cpu" + name);
      ASSERT_GT(cpu.size(), 128u) << name;
      EXPECT_EQ(ReadText(dir + "/" + output + "_gpu" + name), cpu) << name;
    }
  }
}

TEST(ShippedPipelinesGpu, EvalMatchesTheCpuWithinTheDecoderDifference) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  const std::string dir = MakeTempDir("gpu_vs_cpu_eval");
  for (const char* device : {"cpu", "gpu"}) {
    const CliResult r = RunPipeline("pipelines/image_classification_eval.yaml", device, 1,
                            {"--save-outputs", dir + "/" + device});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const std::string cpu = ReadText(dir + "/cpu/images_out_000000.npy");
  const std::string gpu = ReadText(dir + "/gpu/images_out_000000.npy");
  const size_t values = static_cast<size_t>(kBatch) * 3 * 224 * 224;
  ASSERT_GE(cpu.size(), values * 2);
  ASSERT_EQ(gpu.size(), cpu.size());
  EXPECT_EQ(ReadText(dir + "/gpu/labels_000000.npy"), ReadText(dir + "/cpu/labels_000000.npy"));
  // Same header length (same dtype and shape): the data are the last values * 2 bytes.
  const uint16_t* a = reinterpret_cast<const uint16_t*>(cpu.data() + cpu.size() - values * 2);
  const uint16_t* b = reinterpret_cast<const uint16_t*>(gpu.data() + gpu.size() - values * 2);
  double sum = 0;
  for (size_t i = 0; i < values; ++i) sum += std::fabs(HalfBitsToFloat(a[i]) - HalfBitsToFloat(b[i]));
  // nvJPEG and libjpeg-turbo differ by a few levels at most on average (decoders' GPU test:
  // mean error <= 2.5 of 255); normalized by std ~57, that is <= 0.05. A wrong crop, mirror or
  // channel order gives > 0.3.
  EXPECT_LT(sum / static_cast<double>(values), 0.15);
}

// recipe_train draws its erasing coins and rectangles on the CPU, keyed by seed, node and sample,
// so the GPU run (captured) erases the same rectangles of the same samples as the CPU run.
TEST(ShippedPipelinesGpu, RecipeTrainErasesTheCpusRectangles) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  const std::string dir = MakeTempDir("gpu_vs_cpu_recipe");
  for (const char* device : {"cpu", "gpu"}) {
    const CliResult r = RunPipeline("pipelines/recipe_train.yaml", device, 3, {"--save-outputs", dir + "/" + device});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  int erased = 0;
  for (const char* it : {"000000", "000001", "000002"}) {
    EXPECT_EQ(ReadText(dir + "/gpu/labels_" + it + ".npy"), ReadText(dir + "/cpu/labels_" + it + ".npy")) << it;
    const std::vector<ZeroRegion> cpu = ZeroRegions(dir + "/cpu/images_out_" + it + ".npy");
    EXPECT_EQ(ZeroRegions(dir + "/gpu/images_out_" + it + ".npy"), cpu) << "iteration " << it;
    for (const ZeroRegion& z : cpu) erased += z.fraction > 0;
  }
  EXPECT_GT(erased, 0) << "24 samples at p = 0.25 erase none with probability 0.1%";
}

TEST(ShippedPipelinesGpu, TrainPreviewOnTheGpu) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  const std::string png = MakeTempDir("gpu_preview") + "/preview.png";
  const CliResult p = RunConveyor({"preview", "pipelines/image_classification_train.yaml", "--device", "gpu",
                                   "--batch-size", "8", "--inputs", "images", "-o", png});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("8 samples of \"images_out\" (float16), normalization undone from "
                               "crop_mirror_normalize, captions from \"labels\", \"images\" beside them"));
  EXPECT_GT(std::filesystem::file_size(png), 10000u);
}

}  // namespace
}  // namespace conveyor::cli_test
