// The shipped example pipelines run through the CLI on the CPU over generated data (PNG images of
// varying sizes in class folders, .npy arrays), with the data folder given by --set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "cli/image_grid.h"
#include "tests/cli/cli_runner.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;

// 3 classes x 3 images, sizes between 40 and 120 pixels, smooth gradients plus noise.
std::string MakeImageFolder(const std::string& name) {
  const std::string dir = MakeTempDir(name);
  std::mt19937 rng(5);
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 3; ++i) {
      cli::RgbImage image(40 + static_cast<int>(rng() % 80), 40 + static_cast<int>(rng() % 80));
      for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) {
          uint8_t* p = image.at(x, y);
          p[0] = static_cast<uint8_t>(x * 255 / image.width);
          p[1] = static_cast<uint8_t>(y * 255 / image.height);
          p[2] = static_cast<uint8_t>((c * 80 + rng() % 40) & 0xff);
        }
      }
      std::filesystem::create_directories(dir + "/class" + std::to_string(c));
      cli::WritePng(dir + "/class" + std::to_string(c) + "/img" + std::to_string(i) + ".png", image);
    }
  }
  return dir;
}

TEST(ShippedPipelines, TrainRunsAndPreviewsOnTheCpu) {
  const std::string data = MakeImageFolder("train_data");
  const CliResult r = RunConveyor({"run", "pipelines/image_classification_train.yaml", "--device", "cpu",
                                   "--batch-size", "4", "--set", "reader.file_root=" + data, "--epochs", "2",
                                   "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("9 samples = 3 iterations"));
  EXPECT_THAT(r.out, HasSubstr("summary: image_classification_train on cpu, batch 4, 6 iterations"));
  EXPECT_THAT(r.out, HasSubstr("images_out: float16 4 samples of (3, 224, 224) CHW on the host"));
  EXPECT_THAT(r.out, HasSubstr("labels: int32 4 samples of (1,)"));
  const std::string png = MakeTempDir("train_preview") + "/grid.png";
  const CliResult p = RunConveyor({"preview", "pipelines/image_classification_train.yaml", "--device", "cpu",
                                   "--batch-size", "4", "--set", "reader.file_root=" + data, "-o", png});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("4 samples of \"images_out\" (float16), normalization undone from "
                               "crop_mirror_normalize, captions from \"labels\""));
  EXPECT_GT(std::filesystem::file_size(png), 1000u);
}

TEST(ShippedPipelines, EvalRunsOnTheCpu) {
  const std::string data = MakeImageFolder("eval_data");
  const CliResult r = RunConveyor({"run", "pipelines/image_classification_eval.yaml", "--device", "cpu",
                                   "--batch-size", "3", "--set", "reader.file_root=" + data, "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("batch 3, 3 iterations"));
  EXPECT_THAT(r.out, HasSubstr("images_out: float16 3 samples of (3, 224, 224) CHW"));
}

TEST(ShippedPipelines, NumpyFeaturesRunOnTheCpu) {
  const std::string data = MakeTempDir("npy_data");
  for (int i = 0; i < 6; ++i) {
    WriteNpy(data + "/f" + std::to_string(i) + ".npy", DType::kUInt8, Shape{16}, RandomBytes(16, 300 + i));
  }
  const std::string out = data + "/saved";
  const CliResult r = RunConveyor({"run", "pipelines/numpy_features.yaml", "--device", "cpu", "--batch-size", "6",
                                   "--set", "reader.file_root=" + data, "--save-outputs", out, "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("features: float32 6 samples of (16,)"));
  // float32 copies of the uint8 arrays (shuffled): 6 x 16 x 4 bytes plus the header.
  EXPECT_GT(std::filesystem::file_size(out + "/features_000000.npy"), 6u * 16 * 4);
}

}  // namespace
}  // namespace conveyor::cli_test
