// pipelines/detection_train.yaml on the GPU (nvJPEG decode, slice, resize, normalize and box_encoder
// on the device, graph capture on) against the CPU run: boxes and labels come from the same CPU
// operators with the same draws, so they are equal bit for bit; box_encoder's targets are computed
// on the GPU from those same boxes, equal to the CPU's bit for bit but for the offsets' w and h
// columns, which may be 1 float ulp apart (log: CUDA's and glibc's may round a double's last bit
// differently; box_encoder_gpu.h); the images differ only by the decoders (nvJPEG vs
// libjpeg-turbo), bounded as in pipelines_gpu_test. Skips without a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "tests/cli/cli_runner.h"
#include "tests/cli/detection_outputs.h"
#include "tests/cli/shipped_pipelines.h"
#include "tests/util/gpu_test.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;

constexpr int kBatch = 8;
constexpr int kIterations = 4;

// Ulps between two float32 values read back as doubles (exact), 0 when equal.
int64_t FloatUlps(double a, double b) {
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  if (fa == fb) return 0;
  int32_t ia, ib;
  std::memcpy(&ia, &fa, 4);
  std::memcpy(&ib, &fb, 4);
  if ((ia < 0) != (ib < 0) || std::isnan(fa) || std::isnan(fb)) return INT64_MAX;
  return ia > ib ? int64_t{ia} - ib : int64_t{ib} - ia;
}

TEST(DetectionPipelineGpu, CapturedOnTheGpuAndEqualToTheCpu) {
  CONVEYOR_REQUIRE_GPU();
  SampleData();
  const std::string dir = MakeTempDir("detection_gpu");
  for (const char* device : {"cpu", "gpu"}) {
    const CliResult r = RunConveyor({"run", kDetectionYaml, "--device", device, "--batch-size", std::to_string(kBatch),
                                     "--iterations", std::to_string(kIterations), "--no-progress", "--save-outputs",
                                     dir + "/" + device});
    ASSERT_EQ(r.status, 0) << r.err;
    if (std::string(device) == "gpu") {
      const auto [captures, replays] = CapturesAndReplays(r.out);
      EXPECT_GE(captures, 1) << r.out;
      EXPECT_GE(replays, kIterations) << r.out;
      EXPECT_THAT(r.out, HasSubstr("images_out: float16 8 samples of (3, 300, 300) CHW on the GPU"));
      EXPECT_THAT(r.out, HasSubstr("decoders        decode (gpu, nvJPEG): 32 images"));
      EXPECT_THAT(r.out, HasSubstr("encoded: float32 8 samples of (190, 4) on the GPU"));
      EXPECT_THAT(r.out, HasSubstr("encoded_labels: int32 8 samples of (190,) on the GPU"));
    }
  }
  int64_t log_ulps = 0;
  for (int it = 0; it < kIterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    const auto cpu_encoded = LoadSamples(dir + "/cpu", "encoded", it, kBatch);
    const auto gpu_encoded = LoadSamples(dir + "/gpu", "encoded", it, kBatch);
    ASSERT_EQ(cpu_encoded.size(), gpu_encoded.size());
    for (size_t s = 0; s < cpu_encoded.size(); ++s) {
      ASSERT_EQ(gpu_encoded[s].shape, cpu_encoded[s].shape) << "sample " << s;
      for (size_t i = 0; i < cpu_encoded[s].data.size(); ++i) {
        const int64_t ulps = FloatUlps(gpu_encoded[s].data[i], cpu_encoded[s].data[i]);
        log_ulps += ulps == 1 && i % 4 >= 2;
        EXPECT_LE(ulps, i % 4 >= 2 ? 1 : 0) << "encoded sample " << s << " anchor " << i / 4 << " column " << i % 4;
      }
    }
    for (const char* name : {"boxes", "labels", "encoded_labels"}) {
      const auto cpu = LoadSamples(dir + "/cpu", name, it, kBatch);
      const auto gpu = LoadSamples(dir + "/gpu", name, it, kBatch);
      ASSERT_EQ(cpu.size(), gpu.size()) << name;
      for (size_t s = 0; s < cpu.size(); ++s) {
        EXPECT_EQ(gpu[s].shape, cpu[s].shape) << name << " sample " << s;
        EXPECT_EQ(gpu[s].data, cpu[s].data) << name << " sample " << s;
      }
    }
    const auto cpu = LoadSamples(dir + "/cpu", "images_out", it, kBatch);
    const auto gpu = LoadSamples(dir + "/gpu", "images_out", it, kBatch);
    ASSERT_EQ(cpu.size(), gpu.size());
    double sum = 0, n = 0;
    for (size_t s = 0; s < cpu.size(); ++s) {
      ASSERT_EQ(gpu[s].data.size(), cpu[s].data.size());
      for (size_t i = 0; i < cpu[s].data.size(); ++i) sum += std::fabs(gpu[s].data[i] - cpu[s].data[i]);
      n += static_cast<double>(cpu[s].data.size());
    }
    // nvJPEG vs libjpeg-turbo: a few levels of 255 on average, <= 0.05 after / std; a wrong window
    // or mirror gives > 0.3.
    EXPECT_LT(sum / n, 0.15);
  }
  std::cout << "encoded: " << log_ulps << " offsets 1 float ulp from the CPU's (log columns)\n";
}

}  // namespace
}  // namespace conveyor::cli_test
