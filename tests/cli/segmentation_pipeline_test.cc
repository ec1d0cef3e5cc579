// pipelines/segmentation_train.yaml through the CLI on the CPU over the sample data's COCO scenes
// (tools/make_sample_data: coco/images + annotations.json, polygons painted into masks by
// readers.coco): per sample, the mask holds only known labels and lies on its image — every pixel
// away from a label edge shows its label's category colour, or none for background
// (segmentation_outputs.h) — after the shared crop window, resize and mirror; the same file with
// the mask's flip removed fails that check; a repeated run gives the same bytes. The GPU twin:
// segmentation_pipeline_gpu_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "cli/image_grid.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/png_testing.h"
#include "tests/cli/segmentation_outputs.h"
#include "tests/cli/shipped_pipelines.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int kBatch = 8;
constexpr int kIterations = 3;
// Output pixels skipped beside a label edge (the pipeline's output is exact from 3 on, on this data).
constexpr int kRadius = 4;

CliResult RunCpu(const std::string& yaml, const std::string& dir) {
  return RunConveyor({"run", yaml, "--device", "cpu", "--batch-size", std::to_string(kBatch), "--iterations",
                      std::to_string(kIterations), "--no-progress", "--save-outputs", dir});
}

struct RunCheck {
  int64_t object_pixels = 0, background_pixels = 0, mismatches = 0;
  int samples_with_mismatches = 0;
  std::set<int> labels;  // every mask value seen
  std::vector<std::string> first_mismatch;  // per sample with mismatches
};

RunCheck CheckRun(const std::string& dir) {
  RunCheck run;
  for (int it = 0; it < kIterations; ++it) {
    const auto images = LoadSamples(dir, "images_out", it, kBatch);
    const auto masks = LoadSamples(dir, "masks", it, kBatch);
    if (images.size() != size_t{kBatch} || masks.size() != size_t{kBatch}) {
      ADD_FAILURE() << dir << ": iteration " << it << " has " << images.size() << " images and " << masks.size()
                    << " masks";
      return run;
    }
    for (int s = 0; s < kBatch; ++s) {
      EXPECT_EQ(images[s].shape, (Shape{3, kSegmentationSide, kSegmentationSide})) << "iteration " << it << " sample " << s;
      EXPECT_EQ(masks[s].shape, (Shape{kSegmentationSide, kSegmentationSide, 1})) << "iteration " << it << " sample " << s;
      if (images[s].data.size() != 3 * masks[s].data.size()) return run;
      for (double v : masks[s].data) run.labels.insert(static_cast<int>(v));
      const MaskCheck check = CheckMaskOnImage(images[s], masks[s], kRadius);
      run.object_pixels += check.object_pixels;
      run.background_pixels += check.background_pixels;
      run.mismatches += check.mismatches;
      run.samples_with_mismatches += check.mismatches > 0;
      if (!check.first_mismatch.empty()) {
        run.first_mismatch.push_back("iteration " + std::to_string(it) + " sample " + std::to_string(s) + ": " +
                                     std::to_string(check.mismatches) + " pixels, the first " + check.first_mismatch);
      }
    }
  }
  return run;
}

TEST(SegmentationPipeline, MasksLieOnTheirImagesOnTheCpu) {
  SampleData();
  const std::string dir = MakeTempDir("segmentation_cpu");
  const CliResult r = RunCpu(kSegmentationYaml, dir + "/a");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("epoch of reader \"reader\": 32 samples = 4 iterations"));
  EXPECT_THAT(r.out, HasSubstr("images_out: float16 8 samples of (3, 256, 256) CHW on the host"));
  EXPECT_THAT(r.out, HasSubstr("masks: int32 8 samples of (256, 256, 1) HWC on the host"));
  const RunCheck run = CheckRun(dir + "/a");
  EXPECT_EQ(run.mismatches, 0);
  for (const std::string& m : run.first_mismatch) ADD_FAILURE() << m;
  // Only the known labels (nearest never blends two): background 0 and categories 1..4, at least
  // three of them in 24 samples.
  ASSERT_FALSE(run.labels.empty());
  EXPECT_GE(*run.labels.begin(), 0);
  EXPECT_LE(*run.labels.rbegin(), 4);
  EXPECT_GE(run.labels.size(), 4u);
  // Not vacuous: objects and background both cover a good part of the checked pixels.
  const int64_t checked = run.object_pixels + run.background_pixels;
  EXPECT_GT(checked, int64_t{kBatch} * kIterations * kSegmentationSide * kSegmentationSide / 2);
  EXPECT_GT(run.object_pixels, checked / 10);
  EXPECT_GT(run.background_pixels, checked / 10);

  // Same seed, same bytes (the window and the coin draw from (seed, node, iteration, sample)).
  const CliResult again = RunCpu(kSegmentationYaml, dir + "/b");
  ASSERT_EQ(again.status, 0) << again.err;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir + "/a")) {
    ++files;
    EXPECT_EQ(ReadText(dir + "/b/" + e.path().filename().string()), ReadText(e.path().string())) << e.path();
  }
  EXPECT_EQ(files, 2 * kIterations);
}

// The check catches a mask that does not follow its image: the same file with the mask's flip
// fed 0 instead of the coin leaves the mirrored samples' masks unmirrored.
TEST(SegmentationPipeline, AMaskLeftUnmirroredFailsTheCheck) {
  SampleData();
  const std::string dir = MakeTempDir("segmentation_unmirrored");
  std::string yaml = ReadText(kSegmentationYaml);
  const std::string fed = "args: {horizontal: $mirror}";
  const size_t at = yaml.find(fed);
  ASSERT_NE(at, std::string::npos) << "the mask's flip is fed by the coin";
  yaml.replace(at, fed.size(), "args: {horizontal: 0}");
  WriteText(dir + "/unmirrored.yaml", yaml);
  const CliResult r = RunCpu(dir + "/unmirrored.yaml", dir + "/out");
  ASSERT_EQ(r.status, 0) << r.err;
  const RunCheck run = CheckRun(dir + "/out");
  // About half the samples are mirrored (probability 0.5); every one of them shows it.
  EXPECT_GE(run.first_mismatch.size(), size_t{kBatch * kIterations / 4});
  EXPECT_LE(run.first_mismatch.size(), size_t{kBatch * kIterations * 3 / 4});
  EXPECT_GT(run.mismatches, 10000);
}

// `conveyor preview` of the shipped pipelines picks their overlays by name: the segmentation's mask
// outlines and the detection's boxes, drawn in the categories' colours (preview_overlays_test
// checks the pixels exactly).
TEST(SegmentationPipeline, PreviewOutlinesMasksAndBoxes) {
  SampleData();
  const std::string dir = MakeTempDir("segmentation_preview");
  for (const std::string yaml : {kSegmentationYaml, kDetectionYaml}) {
    SCOPED_TRACE(yaml);
    const std::string png = dir + "/" + fs::path(yaml).stem().string() + ".png";
    const CliResult r = RunConveyor({"preview", yaml, "--device", "cpu", "--batch-size", "4", "-o", png});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("4 samples of \"images_out\" (float16), normalization undone from crop_mirror_normalize"));
    EXPECT_THAT(r.out, HasSubstr(yaml == kSegmentationYaml
                                     ? "captions: sample index, mask outlines from \"masks\"\n"
                                     : "boxes from \"boxes\" (ltrb, normalized, colours by \"labels\")\n"));
    const cli::RgbImage grid = ReadPng(png);
    int drawn = 0;
    for (int label = 1; label <= 4; ++label) {
      uint8_t rgb[3];
      cli::ClassColour(label, rgb);
      for (int y = 0; y < grid.height; ++y) {
        for (int x = 0; x < grid.width; ++x) drawn += std::memcmp(grid.at(x, y), rgb, 3) == 0;
      }
    }
    EXPECT_GT(drawn, 4 * 50) << "outlines of the categories' colours on the 4 tiles";
  }
}

}  // namespace
}  // namespace conveyor::cli_test
