// random_bbox_crop: determinism (the same seed, node, iteration and sample give the same window
// whatever the threads; another iteration, seed or node gives others), box layouts, label ranks and
// dtypes, the empty batch, and every error message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "operators/detection/random_bbox_crop.h"
#include "tests/operators/detection/crop_reference.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Crop(const std::string& name = "crop") {
  return OpSpec("random_bbox_crop", name)
      .AddInput("boxes")
      .AddInput("labels")
      .AddOutput("anchor")
      .AddOutput("shape")
      .AddOutput("bboxes")
      .AddOutput("labels_out")
      .SetArg("thresholds", std::vector<double>{0.1, 0.3, 0.5, 0.7, 0.9})
      .SetArg("scaling", std::vector<double>{0.3, 1.0})
      .SetArg("aspect_ratio", std::vector<double>{0.5, 2.0})
      .SetArg("num_attempts", 20);
}

std::vector<TensorListCPU> Inputs(int samples) {
  std::vector<std::vector<float>> boxes;
  for (int s = 0; s < samples; ++s) boxes.push_back(RandomLtrb(static_cast<size_t>(1 + s % 5)));
  TensorListCPU list = BoxBatch(boxes);
  TensorListCPU labels = RandomLabels(list);
  return {list, labels};
}

// Sample s of `list` as a batch of one.
TensorListCPU SampleOf(const TensorListCPU& list, int s) {
  TensorListCPU one;
  one.Resize({list.shape(s)}, list.dtype());
  const size_t bytes = static_cast<size_t>(list.shape(s).num_elements()) * DTypeSize(list.dtype());
  if (bytes) std::memcpy(one.raw_sample(0), list.raw_sample(s), bytes);
  return one;
}

std::string SameOutputs(const std::vector<TensorListCPU>& a, const std::vector<TensorListCPU>& b) {
  for (size_t o = 0; o < a.size(); ++o) {
    const std::string d = SameBytes(a[o], b[o]);
    if (!d.empty()) return "output " + std::to_string(o) + ": " + d;
  }
  return "";
}

TEST(RandomBboxCropDeterminism, SameKeySameWindowsOtherKeyOtherWindows) {
  const std::vector<TensorListCPU> in = Inputs(24);
  const std::vector<TensorListCPU> base = RunBoxOp({Crop(), in, {}, 5, 77, 1});
  EXPECT_EQ(SameOutputs(RunBoxOp({Crop(), in, {}, 5, 77, 1}), base), "");
  EXPECT_EQ(SameOutputs(RunBoxOp({Crop(), in, {}, 5, 77, 4}), base), "") << "threads changed the draws";
  EXPECT_NE(SameBytes(RunBoxOp({Crop(), in, {}, 6, 77, 1})[0], base[0]), "")
      << "the next iteration repeated the windows";
  EXPECT_NE(SameBytes(RunBoxOp({Crop(), in, {}, 5, 78, 1})[0], base[0]), "") << "another seed repeated the windows";
  EXPECT_NE(SameBytes(RunBoxOp({Crop("crop2"), in, {}, 5, 77, 1})[0], base[0]), "") << "another node repeated them";
}

TEST(RandomBboxCropDeterminism, SampleDrawsDependOnTheSampleNotTheBatch) {
  // A sample's window is a function of its own key: the first 8 samples of a batch of 24 crop as a
  // batch of those 8 does.
  const std::vector<TensorListCPU> in = Inputs(24);
  std::vector<std::vector<float>> first_boxes;
  std::vector<std::vector<int32_t>> first_labels;
  for (int s = 0; s < 8; ++s) {
    first_boxes.push_back(Values<float>(in[0], s));
    first_labels.push_back(Values<int32_t>(in[1], s));
  }
  const std::vector<TensorListCPU> all = RunBoxOp({Crop(), in, {}, 3});
  const std::vector<TensorListCPU> part = RunBoxOp({Crop(), {BoxBatch(first_boxes), LabelBatch(first_labels)}, {}, 3});
  for (int s = 0; s < 8; ++s) {
    for (size_t o = 0; o < 4; ++o) EXPECT_EQ(SameBytes(SampleOf(all[o], s), SampleOf(part[o], s)), "") << s << " " << o;
  }
}

TEST(RandomBboxCropLayouts, XywhAndPermutedLayoutsCropTheSameBoxes) {
  const std::vector<TensorListCPU> in = Inputs(16);
  const std::vector<TensorListCPU> ltrb = RunBoxOp({Crop(), in});
  std::vector<std::vector<float>> xywh, yxYX;
  for (int s = 0; s < 16; ++s) {
    const std::vector<float> v = Values<float>(in[0], s);
    xywh.push_back(LtrbToXywh(v));
    std::vector<float> p = v;
    for (size_t i = 0; i < p.size(); i += 4) {
      std::swap(p[i], p[i + 1]);
      std::swap(p[i + 2], p[i + 3]);
    }
    yxYX.push_back(p);
  }
  for (const OpSpec& spec : {Crop().SetArg("ltrb", false), Crop().SetArg("bbox_layout", std::string("xyWH"))}) {
    const std::vector<TensorListCPU> out = RunBoxOp({spec, {BoxBatch(xywh), in[1]}});
    EXPECT_EQ(SameBytes(out[0], ltrb[0]), "");
    EXPECT_EQ(SameBytes(out[3], ltrb[3]), "");
    for (int s = 0; s < 16; ++s) {
      const std::vector<float> got = Values<float>(out[2], s), want = LtrbToXywh(Values<float>(ltrb[2], s));
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6);
    }
  }
  const std::vector<TensorListCPU> out =
      RunBoxOp({Crop().SetArg("bbox_layout", std::string("yxYX")), {BoxBatch(yxYX), in[1]}});
  EXPECT_EQ(SameBytes(out[0], ltrb[0]), "");
  for (int s = 0; s < 16; ++s) {
    const std::vector<float> got = Values<float>(out[2], s), want = Values<float>(ltrb[2], s);
    for (size_t i = 0; i < got.size(); i += 4) {
      EXPECT_FLOAT_EQ(got[i], want[i + 1]);
      EXPECT_FLOAT_EQ(got[i + 3], want[i + 2]);
    }
  }
}

TEST(RandomBboxCropLayouts, LabelsKeepTheirRankAndDtype) {
  const TensorListCPU boxes = BoxBatch({RandomLtrb(3), {}});
  const TensorListCPU labels = MakeBatch<int64_t>({{3, 1}, {0, 1}}, {{int64_t{1} << 35, 2, 3}, {}});
  const std::vector<TensorListCPU> out = RunBoxOp({Crop(), {boxes, labels}});
  EXPECT_EQ(out[3].dtype(), DType::kInt64);
  EXPECT_EQ(out[3].shape(0), (Shape{out[2].shape(0)[0], 1}));
  EXPECT_EQ(out[3].shape(1), (Shape{0, 1}));
  for (int64_t label : Values<int64_t>(out[3], 0)) EXPECT_TRUE(label == (int64_t{1} << 35) || label == 2 || label == 3);
}

TEST(RandomBboxCropLayouts, EmptyBatch) {
  const std::vector<TensorListCPU> out = RunBoxOp({Crop(), {BoxBatch({}), LabelBatch({})}});
  for (const TensorListCPU& o : out) EXPECT_EQ(o.num_samples(), 0);
}

TEST(RandomBboxCropErrors, ArgumentsSayWhatWasExpected) {
  const std::vector<TensorListCPU> in = Inputs(2);
  EXPECT_THAT(RunError({Crop().SetArg("ltrb", true).SetArg("bbox_layout", std::string("xyXY")), in}),
              HasSubstr("op \"random_bbox_crop\" (crop): arguments \"ltrb\" and \"bbox_layout\" cannot both be set; "
                        "bbox_layout replaces ltrb"));
  EXPECT_THAT(RunError({Crop().SetArg("bbox_layout", std::string("xyXW")), in}),
              HasSubstr("op \"random_bbox_crop\" (crop): bbox_layout must be a permutation of xyXY or xyWH, got "
                        "\"xyXW\""));
  EXPECT_THAT(RunError({Crop().SetArg("aspect_ratio", std::vector<double>{0, 1}), in}),
              HasSubstr("argument \"aspect_ratio\": expected [min, max] with 0 < min <= max, got [0, 1]"));
  EXPECT_THAT(RunError({Crop().SetArg("aspect_ratio", std::vector<double>{1, 2, 3}), in}),
              HasSubstr("argument \"aspect_ratio\": expected [min, max] with 0 < min <= max, got [1, 2, 3]"));
  EXPECT_THAT(RunError({Crop().SetArg("scaling", std::vector<double>{0.5, 0.2}), in}),
              HasSubstr("argument \"scaling\": expected [min, max] with 0 <= min <= max <= 1, got [0.5, 0.2]"));
  EXPECT_THAT(RunError({Crop().SetArg("thresholds", std::vector<double>{}), in}),
              HasSubstr("argument \"thresholds\": expected at least one value, got []"));
}

TEST(RandomBboxCropErrors, ParameterChecksTheSchemaCannotExpress) {
  // Values the schema's ranges already refuse in YAML; the function guards callers from C++.
  const auto make = [](std::vector<double> thresholds, int64_t attempts, std::string type, double prune) {
    return ErrorOf([&] {
      ops::MakeBboxCropParams(thresholds, true, {1, 1}, {1, 1}, attempts, -1, type, true, prune, "here");
    });
  };
  EXPECT_THAT(make({0.5, 1.5}, 1, "iou", -1), HasSubstr("here: argument \"thresholds\": expected values in [0, 1], got "
                                                        "[0.5, 1.5]"));
  EXPECT_THAT(make({0.5}, 0, "iou", -1), HasSubstr("here: argument \"num_attempts\": expected a value >= 1, got 0"));
  EXPECT_THAT(make({0.5}, 1, "area", -1),
              HasSubstr("here: argument \"threshold_type\": expected iou or overlap, got \"area\""));
  EXPECT_THAT(make({0.5}, 1, "iou", std::nan("")),
              HasSubstr("here: argument \"bbox_prune_threshold\": expected a value <= 1 (negative: keep boxes by "
                        "centre), got nan"));
  EXPECT_EQ(make({0.5}, 1, "overlap", 0.5), "no error");
}

TEST(RandomBboxCropErrors, InputsNameTheSampleAndWhatArrived) {
  const TensorListCPU boxes = BoxBatch({RandomLtrb(2), RandomLtrb(3)});
  EXPECT_THAT(RunError({Crop(), {boxes, LabelBatch({{1, 2}, {1, 2}})}}),
              HasSubstr("op \"random_bbox_crop\" (crop): input 1 (\"labels\"), sample 1: expected 3 labels (shape [N] "
                        "or [N, 1], one per box of input 0), got shape (2,)"));
  EXPECT_THAT(RunError({Crop(), {MakeBatch<float>({{2, 2}}, {{0, 0, 1, 1}}), LabelBatch({{1, 2}})}}),
              HasSubstr("op \"random_bbox_crop\" (crop): input 0 (\"boxes\"), sample 0: expected a [N, 4] tensor of "
                        "boxes, got shape (2, 2)"));
  EXPECT_THAT(RunError({Crop(), {MakeBatch<double>({{1, 4}}, {{0, 0, 1, 1}}), LabelBatch({{1}})}}),
              HasSubstr("input 0 (\"boxes\"): expected dtype float32, got float64"));
}

}  // namespace
}  // namespace conveyor::testing
