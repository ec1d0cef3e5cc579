// pipelines/detection_train.yaml through the CLI on the CPU over the sample data's COCO scenes
// (tools/make_sample_data: coco/images + annotations.json), checked on what it outputs: shapes,
// boxes inside the image and one label each, box_encoder's targets against the YAML's anchors
// (each matched anchor decodes back to one of the sample's boxes), the pixels under each
// rectangle's box having that category's colour (so crop, resize and the shared mirror moved
// image and boxes together), and a repeated run giving the same bytes. The GPU twin:
// detection_pipeline_gpu_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tests/cli/cli_runner.h"
#include "tests/cli/detection_outputs.h"
#include "tests/cli/shipped_pipelines.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int kBatch = 8;
constexpr int kIterations = 3;
constexpr int kAnchors = 190;

CliResult RunCpu(const std::string& dir) {
  return RunConveyor({"run", kDetectionYaml, "--device", "cpu", "--batch-size", std::to_string(kBatch),
                      "--iterations", std::to_string(kIterations), "--no-progress", "--save-outputs", dir});
}

TEST(DetectionSampleData, CocoScenesAndAnnotations) {
  const std::string coco = SampleData() + "/coco";
  int images = 0;
  for (const auto& e : fs::directory_iterator(coco + "/images")) images += e.path().extension() == ".jpg";
  EXPECT_EQ(images, 32);
  const std::string json = ReadText(coco + "/annotations.json");
  EXPECT_THAT(json, HasSubstr("\"file_name\":\"0031.jpg\""));
  EXPECT_THAT(json, HasSubstr("\"iscrowd\":0"));
  EXPECT_THAT(json, HasSubstr("\"segmentation\":[["));
  EXPECT_THAT(json, HasSubstr("{\"id\":5,\"name\":\"yellow_ellipse\",\"supercategory\":\"shape\"}"));
  // Deterministic: a second, smaller run writes the same first scenes and its own annotations.
  const std::string again = MakeTempDir("coco_again");
  ASSERT_EQ(std::system(("tools/make_sample_data/make_sample_data '" + again +
                         "' --per-class 4 --coco-images 4 --threads 1 >/dev/null").c_str()), 0);
  for (const char* f : {"images/0000.jpg", "images/0003.jpg"}) {
    EXPECT_EQ(ReadText(again + "/coco/" + f), ReadText(coco + "/" + f)) << f;
  }
  EXPECT_FALSE(fs::exists(again + "/coco/images/0004.jpg"));
}

TEST(DetectionPipeline, RunsOnTheCpuWithConsistentBoxesLabelsAndTargets) {
  SampleData();
  const std::vector<double> anchors = YamlAnchors();
  ASSERT_EQ(anchors.size(), 4u * kAnchors);
  const std::string dir = MakeTempDir("detection_cpu");
  const CliResult r = RunCpu(dir + "/a");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("epoch of reader \"reader\": 32 samples = 4 iterations"));
  EXPECT_THAT(r.out, HasSubstr("images_out: float16 8 samples of (3, 300, 300) CHW on the host"));
  EXPECT_THAT(r.out, HasSubstr("encoded: float32 8 samples of (190, 4) on the host"));
  EXPECT_THAT(r.out, HasSubstr("encoded_labels: int32 8 samples of (190,) on the host"));

  int rectangles_checked = 0, matched_anchors = 0, boxes_seen = 0;
  for (int it = 0; it < kIterations; ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    const auto images = LoadSamples(dir + "/a", "images_out", it, kBatch);
    const auto boxes = LoadSamples(dir + "/a", "boxes", it, kBatch);
    const auto labels = LoadSamples(dir + "/a", "labels", it, kBatch);
    const auto encoded = LoadSamples(dir + "/a", "encoded", it, kBatch);
    const auto encoded_labels = LoadSamples(dir + "/a", "encoded_labels", it, kBatch);
    ASSERT_EQ(images.size(), size_t{kBatch});
    ASSERT_EQ(boxes.size(), size_t{kBatch});
    ASSERT_EQ(labels.size(), size_t{kBatch});
    ASSERT_EQ(encoded.size(), size_t{kBatch});
    ASSERT_EQ(encoded_labels.size(), size_t{kBatch});
    for (int s = 0; s < kBatch; ++s) {
      SCOPED_TRACE("sample " + std::to_string(s));
      ASSERT_EQ(images[s].shape, (Shape{3, 300, 300}));
      ASSERT_EQ(boxes[s].shape.ndim(), 2);
      ASSERT_EQ(boxes[s].shape[1], 4);
      const int64_t k = boxes[s].shape[0];
      ASSERT_GE(k, 1) << "skip_empty and random_bbox_crop keep a box in every sample";
      ASSERT_LE(k, 5);
      ASSERT_EQ(labels[s].shape, (Shape{k})) << "one label per box";
      ASSERT_EQ(encoded[s].shape, (Shape{kAnchors, 4}));
      ASSERT_EQ(encoded_labels[s].shape, (Shape{kAnchors}));
      boxes_seen += static_cast<int>(k);
      const std::vector<double>& b = boxes[s].data;
      for (int64_t j = 0; j < k; ++j) {
        const double l = b[4 * j], t = b[4 * j + 1], rr = b[4 * j + 2], bb = b[4 * j + 3];
        EXPECT_GE(l, 0.0);
        EXPECT_GE(t, 0.0);
        EXPECT_LE(rr, 1.0);
        EXPECT_LE(bb, 1.0);
        EXPECT_LT(l, rr) << "kept boxes have area";
        EXPECT_LT(t, bb);
        const int label = static_cast<int>(labels[s].data[j]);
        EXPECT_GE(label, 1);
        EXPECT_LE(label, 4) << "categories 1, 2, 3, 5 remapped to 1..4";
        // Rectangles (labels 1 red, 3 blue) fill their whole box: the pixel at the box's centre
        // has the category's colour — only if crop, resize and mirror moved the pixels as the box.
        const double w = (rr - l) * 300, h = (bb - t) * 300;
        if ((label == 1 || label == 3) && w >= 6 && h >= 6) {
          const int x = static_cast<int>((l + rr) / 2 * 300), y = static_cast<int>((t + bb) / 2 * 300);
          double rgb[3];
          const double mean[3] = {123.675, 116.28, 103.53}, std[3] = {58.395, 57.12, 57.375};
          for (int c = 0; c < 3; ++c) rgb[c] = images[s].data[(c * 300 + y) * 300 + x] * std[c] + mean[c];
          if (label == 1) {
            EXPECT_GT(rgb[0], rgb[1] + 80) << "red rectangle's centre (" << x << ", " << y << ")";
            EXPECT_GT(rgb[0], rgb[2] + 80) << "red rectangle's centre (" << x << ", " << y << ")";
          } else {
            EXPECT_GT(rgb[2], rgb[0] + 80) << "blue rectangle's centre (" << x << ", " << y << ")";
            EXPECT_GT(rgb[2], rgb[1] + 60) << "blue rectangle's centre (" << x << ", " << y << ")";
          }
          ++rectangles_checked;
        }
      }
      // box_encoder: background anchors are label 0 with zero offsets (means 0); a matched anchor
      // carries one of the sample's labels, and its offsets decode to a box of that label.
      int matched = 0;
      for (int a = 0; a < kAnchors; ++a) {
        const double* e = &encoded[s].data[4 * a];
        const int label = static_cast<int>(encoded_labels[s].data[a]);
        if (label == 0) {
          for (int c = 0; c < 4; ++c) EXPECT_EQ(e[c], 0.0) << "background anchor " << a;
          continue;
        }
        ++matched;
        const double al = anchors[4 * a], at = anchors[4 * a + 1], ar = anchors[4 * a + 2], ab = anchors[4 * a + 3];
        const double aw = ar - al, ah = ab - at, acx = (al + ar) / 2, acy = (at + ab) / 2;
        const double cx = acx + e[0] * 0.1 * aw, cy = acy + e[1] * 0.1 * ah;
        const double w = aw * std::exp(e[2] * 0.2), h = ah * std::exp(e[3] * 0.2);
        bool found = false;
        for (int64_t j = 0; j < k && !found; ++j) {
          found = static_cast<int>(labels[s].data[j]) == label && std::fabs(cx - (b[4 * j] + b[4 * j + 2]) / 2) < 1e-4 &&
                  std::fabs(cy - (b[4 * j + 1] + b[4 * j + 3]) / 2) < 1e-4 &&
                  std::fabs(w - (b[4 * j + 2] - b[4 * j])) < 1e-4 && std::fabs(h - (b[4 * j + 3] - b[4 * j + 1])) < 1e-4;
        }
        EXPECT_TRUE(found) << "anchor " << a << " (label " << label << ") decodes to no box of the sample";
      }
      EXPECT_GE(matched, 1) << "every box claims its best anchor";
      matched_anchors += matched;
    }
  }
  EXPECT_GE(rectangles_checked, 8) << "enough rectangles to check the pixels against";
  EXPECT_GE(boxes_seen, kBatch * kIterations);
  EXPECT_GT(matched_anchors, boxes_seen) << "criteria 0.5 matches more anchors than the forced ones";

  // Same seed, same bytes (random_bbox_crop and the coin draw from (seed, node, iteration, sample)).
  const CliResult again = RunCpu(dir + "/b");
  ASSERT_EQ(again.status, 0) << again.err;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir + "/a")) {
    ++files;
    EXPECT_EQ(ReadText(dir + "/b/" + e.path().filename().string()), ReadText(e.path().string())) << e.path();
  }
  EXPECT_GE(files, 5 * kIterations);
}

}  // namespace
}  // namespace conveyor::cli_test
