// random_bbox_crop on fresh random boxes: the windows obey scaling, aspect_ratio and the overlap
// thresholds (IoU and overlap computed here, per box), the kept boxes and labels equal the
// reference of crop_reference.h, options are picked uniformly, degenerate input is clipped or
// dropped by the documented rule, and every search ends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operators/detection/crop_reference.h"

namespace conveyor::testing {
namespace {

OpSpec Crop() {
  return OpSpec("random_bbox_crop", "crop")
      .AddInput("boxes")
      .AddInput("labels")
      .AddOutput("anchor")
      .AddOutput("shape")
      .AddOutput("bboxes")
      .AddOutput("labels_out");
}

struct Batch {
  std::vector<std::vector<float>> boxes;  // ltrb
  TensorListCPU box_list, labels;
  std::vector<int32_t> Labels(int s) const { return Values<int32_t>(labels, s); }
};

Batch RandomBatch(int samples, size_t max_boxes, float min_size = 0.02f) {
  Batch b;
  for (int s = 0; s < samples; ++s) {
    b.boxes.push_back(RandomLtrb(RandomVector<size_t>(1, 1, max_boxes)[0], min_size));
  }
  b.box_list = BoxBatch(b.boxes);
  b.labels = RandomLabels(b.box_list);
  return b;
}

void ExpectWindowInImage(const Window& w, int s) {
  EXPECT_GE(w.x, 0) << s;
  EXPECT_GE(w.y, 0) << s;
  EXPECT_LE(w.x + w.w, 1 + 1e-6) << s;
  EXPECT_LE(w.y + w.h, 1 + 1e-6) << s;
}

TEST(RandomBboxCrop, SsdSettingsKeepReferenceBoxesAndMeetAThreshold) {
  const std::vector<double> thresholds = {0.1, 0.3, 0.5, 0.7, 0.9};
  const OpSpec spec = Crop()
                          .SetArg("thresholds", thresholds)
                          .SetArg("scaling", std::vector<double>{0.3, 1.0})
                          .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0})
                          .SetArg("num_attempts", 50)
                          .SetArg("total_num_attempts", 1000000);
  int cropped = 0;
  for (int64_t it = 0; it < 8; ++it) {
    const Batch b = RandomBatch(64, 12);
    const std::vector<TensorListCPU> out = RunBoxOp({spec, {b.box_list, b.labels}, {}, it});
    for (int s = 0; s < 64; ++s) {
      const Window w = WindowOf(out, s);
      ExpectWindowInImage(w, s);
      ASSERT_NO_FATAL_FAILURE(ExpectKeptBoxes(b.boxes[s], b.Labels(s), out, s));
      if (w.whole()) continue;
      ++cropped;
      EXPECT_GE(w.w, 0.3 - 1e-6);
      EXPECT_GE(w.h, 0.3 - 1e-6);
      EXPECT_GE(w.w / w.h, 0.5 - 1e-5);
      EXPECT_LE(w.w / w.h, 2.0 + 1e-5);
      double worst = 1;
      for (size_t i = 0; i < b.boxes[s].size() / 4; ++i) worst = std::min(worst, WindowIoU(w, &b.boxes[s][4 * i]));
      EXPECT_GE(worst, thresholds[0] - 1e-5) << "sample " << s << ": a box's IoU is below every threshold";
      EXPECT_GT(out[3].shape(s)[0], 0) << "a crop keeps at least one box";
    }
  }
  EXPECT_GT(cropped, 30) << "almost every window was the whole image";
}

TEST(RandomBboxCrop, OneThresholdWithoutNoCropHoldsForEveryBox) {
  // One box per sample: a window with IoU >= 0.5 always exists.
  const OpSpec iou = Crop()
                         .SetArg("thresholds", std::vector<double>{0.5})
                         .SetArg("allow_no_crop", false)
                         .SetArg("scaling", std::vector<double>{0.1, 1.0})
                         .SetArg("aspect_ratio", std::vector<double>{0.25, 4.0})
                         .SetArg("num_attempts", 10)
                         .SetArg("total_num_attempts", 1000000);
  const Batch one = RandomBatch(64, 1, 0.2f);
  std::vector<TensorListCPU> out = RunBoxOp({iou, {one.box_list, one.labels}});
  for (int s = 0; s < 64; ++s) {
    EXPECT_GE(WindowIoU(WindowOf(out, s), one.boxes[s].data()), 0.5 - 1e-5) << s;
    ASSERT_NO_FATAL_FAILURE(ExpectKeptBoxes(one.boxes[s], one.Labels(s), out, s));
  }
  // overlap 1.0: every box lies wholly inside the window, so every box is kept unclipped.
  const OpSpec inside = Crop()
                            .SetArg("thresholds", std::vector<double>{1.0})
                            .SetArg("threshold_type", std::string("overlap"))
                            .SetArg("allow_no_crop", false)
                            .SetArg("scaling", std::vector<double>{0.5, 1.0})
                            .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0})
                            .SetArg("num_attempts", 10)
                            .SetArg("total_num_attempts", 1000000);
  Batch small;
  for (int s = 0; s < 32; ++s) {
    std::vector<float> v = RandomLtrb(2, 0.02f);
    for (float& x : v) x = 0.3f + 0.3f * x;  // two boxes inside [0.3, 0.6]
    small.boxes.push_back(v);
  }
  small.box_list = BoxBatch(small.boxes);
  small.labels = RandomLabels(small.box_list);
  out = RunBoxOp({inside, {small.box_list, small.labels}});
  for (int s = 0; s < 32; ++s) {
    const Window w = WindowOf(out, s);
    EXPECT_FALSE(w.whole());
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_GE(InterArea(w, &small.boxes[s][4 * i]) / BoxArea(&small.boxes[s][4 * i]), 1 - 1e-5) << s;
    }
    EXPECT_EQ(out[2].shape(s), (Shape{2, 4}));
    ASSERT_NO_FATAL_FAILURE(ExpectKeptBoxes(small.boxes[s], small.Labels(s), out, s));
  }
}

TEST(RandomBboxCrop, AnyBoxAboveThresholdWhenNotAll) {
  const OpSpec spec = Crop()
                          .SetArg("thresholds", std::vector<double>{0.5})
                          .SetArg("allow_no_crop", false)
                          .SetArg("all_boxes_above_threshold", false)
                          .SetArg("scaling", std::vector<double>{0.1, 1.0})
                          .SetArg("aspect_ratio", std::vector<double>{0.25, 4.0})
                          .SetArg("num_attempts", 10)
                          .SetArg("total_num_attempts", 1000000);
  const Batch b = RandomBatch(32, 8, 0.2f);
  const std::vector<TensorListCPU> out = RunBoxOp({spec, {b.box_list, b.labels}});
  for (int s = 0; s < 32; ++s) {
    double best = 0;
    for (size_t i = 0; i < b.boxes[s].size() / 4; ++i)
      best = std::max(best, WindowIoU(WindowOf(out, s), &b.boxes[s][4 * i]));
    EXPECT_GE(best, 0.5 - 1e-5) << s;
    ASSERT_NO_FATAL_FAILURE(ExpectKeptBoxes(b.boxes[s], b.Labels(s), out, s));
  }
}

TEST(RandomBboxCrop, PruneThresholdKeepsBoxesByAreaInside) {
  const OpSpec spec = Crop()
                          .SetArg("bbox_prune_threshold", 0.6)
                          .SetArg("scaling", std::vector<double>{0.3, 0.7})
                          .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0})
                          .SetArg("allow_no_crop", false);
  const Batch b = RandomBatch(48, 10);
  const std::vector<TensorListCPU> out = RunBoxOp({spec, {b.box_list, b.labels}});
  for (int s = 0; s < 48; ++s) ASSERT_NO_FATAL_FAILURE(ExpectKeptBoxes(b.boxes[s], b.Labels(s), out, s, 0.6));
}

TEST(RandomBboxCrop, NoCropIsPickedAsOftenAsEachThreshold) {
  // Two options (threshold 0 and no crop); a window drawn with scaling < 1 is never the whole image.
  const OpSpec spec = Crop()
                          .SetArg("scaling", std::vector<double>{0.3, 0.9})
                          .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0})
                          .SetArg("num_attempts", 20);
  int whole = 0, total = 0;
  for (int64_t it = 0; it < 8; ++it) {
    const Batch b = RandomBatch(250, 3, 0.3f);
    const std::vector<TensorListCPU> out = RunBoxOp({spec, {b.box_list, b.labels}, {}, it});
    for (int s = 0; s < 250; ++s, ++total) whole += WindowOf(out, s).whole() ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(whole) / total, 0.5, 0.05) << whole << " of " << total;
}

TEST(RandomBboxCrop, FixedAspectRatioGivesThatRatioWithTheLongerSideInScaling) {
  const OpSpec spec = Crop()
                          .SetArg("aspect_ratio", std::vector<double>{1.5, 1.5})
                          .SetArg("scaling", std::vector<double>{0.2, 0.8})
                          .SetArg("allow_no_crop", false);
  const Batch b = RandomBatch(64, 4);
  const std::vector<TensorListCPU> out = RunBoxOp({spec, {b.box_list, b.labels}});
  for (int s = 0; s < 64; ++s) {
    const Window w = WindowOf(out, s);
    ExpectWindowInImage(w, s);
    EXPECT_NEAR(w.w / w.h, 1.5, 1e-5) << s;
    EXPECT_GE(w.w, 0.2 - 1e-6);
    EXPECT_LE(w.w, 0.8 + 1e-6);
  }
}

TEST(RandomBboxCrop, DegenerateBoxesAreDroppedOutOfRangeBoxesClipped) {
  // Defaults: scaling and aspect_ratio [1, 1], so the window is the whole image and only the rule
  // decides: the NaN box and the zero-area box go, the out-of-range box is clipped, the rest stay.
  const float nan = std::nanf("");
  const TensorListCPU boxes = BoxBatch({{nan,  0.1f, 0.5f, 0.5f, 0.2f, 0.2f, 0.2f, 0.6f, -0.5f, -0.2f,
                                         0.5f, 2.0f, 0.7f, 0.7f, 0.6f, 0.9f, 0.1f, 0.2f, 0.3f,  0.4f}});
  const TensorListCPU labels = LabelBatch({{1, 2, 3, 4, 5}});
  const std::vector<TensorListCPU> out = RunBoxOp({Crop(), {boxes, labels}});
  EXPECT_TRUE(WindowOf(out, 0).whole());
  EXPECT_EQ(Values<int32_t>(out[3], 0), (std::vector<int32_t>{3, 5}));
  const std::vector<float> want = {0, 0, 0.5f, 1, 0.1f, 0.2f, 0.3f, 0.4f};
  const std::vector<float> got = Values<float>(out[2], 0);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(RandomBboxCrop, SamplesWithoutBoxesGetAWindowAndNoBoxes) {
  const OpSpec spec = Crop()
                          .SetArg("thresholds", std::vector<double>{0.9})
                          .SetArg("allow_no_crop", false)
                          .SetArg("scaling", std::vector<double>{0.3, 0.6})
                          .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0});
  const std::vector<TensorListCPU> out = RunBoxOp({spec, {BoxBatch({{}, RandomLtrb(2)}), LabelBatch({{}, {4, 5}})}});
  EXPECT_EQ(out[2].shape(0), (Shape{0, 4}));
  EXPECT_EQ(out[3].shape(0), (Shape{0}));
  const Window w = WindowOf(out, 0);
  ExpectWindowInImage(w, 0);
  EXPECT_LE(w.w, 0.6 + 1e-6);
  EXPECT_GE(w.w, 0.3 - 1e-6);
}

TEST(RandomBboxCrop, ImpossibleThresholdsEndWithinTheBudget) {
  // IoU 1 with a 0.05 box and windows of at least 0.2: never met. The search stops after
  // total_num_attempts (or 1000 by default) with the best window drawn, which keeps the box.
  for (int64_t budget : {int64_t{50}, int64_t{-1}}) {
    const OpSpec spec = Crop()
                            .SetArg("thresholds", std::vector<double>{1.0})
                            .SetArg("allow_no_crop", false)
                            .SetArg("scaling", std::vector<double>{0.2, 0.5})
                            .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0})
                            .SetArg("total_num_attempts", budget);
    const TensorListCPU boxes = BoxBatch({{0.4f, 0.4f, 0.45f, 0.45f}, {0.4f, 0.4f, 0.45f, 0.45f}});
    const std::vector<TensorListCPU> out = RunBoxOp({spec, {boxes, LabelBatch({{9}, {9}})}});
    for (int s = 0; s < 2; ++s) {
      const Window w = WindowOf(out, s);
      ExpectWindowInImage(w, s);
      EXPECT_FALSE(w.whole()) << "some window drawn kept the box: the best is taken, not the whole image";
      EXPECT_EQ(Values<int32_t>(out[3], s), (std::vector<int32_t>{9}));
      ASSERT_NO_FATAL_FAILURE(ExpectKeptBoxes({0.4f, 0.4f, 0.45f, 0.45f}, {9}, out, s));
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
