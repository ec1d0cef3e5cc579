// box_encoder: random boxes against a reference that builds the whole IoU matrix first and then
// takes argmaxes (the operator streams over pairs), hand-checked SSD cases (criteria, forced
// matches, offsets), the clipping rule, label ranks and dtypes, and every error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/operators/detection/box_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

// An 8 x 8 grid of anchors in two sizes, clipped to the image: 128 anchors, ltrb.
std::vector<double> GridAnchors() {
  std::vector<double> a;
  for (double size : {0.15, 0.35}) {
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) {
        const double cx = (x + 0.5) / 8, cy = (y + 0.5) / 8;
        a.insert(a.end(), {std::max(0.0, cx - size / 2), std::max(0.0, cy - size / 2), std::min(1.0, cx + size / 2),
                           std::min(1.0, cy + size / 2)});
      }
    }
  }
  return a;
}

OpSpec Encoder(const std::vector<double>& anchors) {
  return OpSpec("box_encoder", "enc")
      .AddInput("boxes")
      .AddInput("labels")
      .AddOutput("encoded")
      .AddOutput("elabels")
      .SetArg("anchors", anchors);
}

struct Reference {
  std::vector<float> boxes;  // [A, 4]
  std::vector<int32_t> labels;
};

double Overlap1D(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

Reference Encode(const std::vector<float>& boxes, const std::vector<int32_t>& labels,
                 const std::vector<double>& anchors, double criteria, bool offset = false, double scale = 1,
                 std::array<double, 4> means = {0, 0, 0, 0}, std::array<double, 4> stds = {1, 1, 1, 1}) {
  const size_t na = anchors.size() / 4, nb = boxes.size() / 4;
  // iou[b][a], for boxes in range with area (the random boxes here all are).
  std::vector<std::vector<double>> iou(nb, std::vector<double>(na));
  for (size_t b = 0; b < nb; ++b) {
    const double* A = anchors.data();
    const float* B = &boxes[4 * b];
    for (size_t a = 0; a < na; ++a) {
      const double inter =
          Overlap1D(A[4 * a], A[4 * a + 2], B[0], B[2]) * Overlap1D(A[4 * a + 1], A[4 * a + 3], B[1], B[3]);
      const double ua = (A[4 * a + 2] - A[4 * a]) * (A[4 * a + 3] - A[4 * a + 1]);
      const double ub = (double{B[2]} - B[0]) * (double{B[3]} - B[1]);
      iou[b][a] = inter / (ua + ub - inter);
    }
  }
  std::vector<int> match(na, -1);
  for (size_t a = 0; a < na; ++a) {
    int best = -1;
    double best_iou = 0;
    for (size_t b = 0; b < nb; ++b) {
      if (best < 0 || iou[b][a] > best_iou) best = static_cast<int>(b), best_iou = iou[b][a];
    }
    if (best >= 0 && best_iou > criteria) match[a] = best;
  }
  for (size_t b = 0; b < nb; ++b) {
    const auto it = std::max_element(iou[b].begin(), iou[b].end());
    if (*it > 0) match[static_cast<size_t>(it - iou[b].begin())] = static_cast<int>(b);
  }
  Reference r;
  for (size_t a = 0; a < na; ++a) {
    const double* an = &anchors[4 * a];
    double t[4] = {an[0], an[1], an[2], an[3]};
    if (match[a] >= 0) {
      for (int c = 0; c < 4; ++c) t[c] = boxes[4 * static_cast<size_t>(match[a]) + c];
    }
    r.labels.push_back(match[a] >= 0 ? labels[static_cast<size_t>(match[a])] : 0);
    const double cx = (t[0] + t[2]) / 2, cy = (t[1] + t[3]) / 2, w = t[2] - t[0], h = t[3] - t[1];
    if (!offset) {
      r.boxes.insert(r.boxes.end(),
                     {static_cast<float>(cx), static_cast<float>(cy), static_cast<float>(w), static_cast<float>(h)});
      continue;
    }
    const double acx = (an[0] + an[2]) / 2 * scale, acy = (an[1] + an[3]) / 2 * scale;
    const double aw = (an[2] - an[0]) * scale, ah = (an[3] - an[1]) * scale;
    const double enc[4] = {(cx * scale - acx) / aw, (cy * scale - acy) / ah, std::log(w * scale / aw),
                           std::log(h * scale / ah)};
    for (int c = 0; c < 4; ++c) r.boxes.push_back(static_cast<float>((enc[c] - means[c]) / stds[c]));
  }
  return r;
}

TEST(BoxEncoder, RandomBoxesMatchMatrixReference) {
  const std::vector<double> anchors = GridAnchors();
  for (bool offset : {false, true}) {
    std::vector<std::vector<float>> samples;
    for (int s = 0; s < 8; ++s) samples.push_back(RandomLtrb(static_cast<size_t>(s * 3), 0.05f));
    const TensorListCPU boxes = BoxBatch(samples);
    const TensorListCPU labels = RandomLabels(boxes);
    OpSpec spec = Encoder(anchors).SetArg("criteria", 0.4).SetArg("offset", offset);
    if (offset) {
      spec.SetArg("scale", 300.0)
          .SetArg("stds", std::vector<double>{0.1, 0.1, 0.2, 0.2})
          .SetArg("means", std::vector<double>{0.01, -0.02, 0.03, 0.0});
    }
    const std::vector<TensorListCPU> out = RunBoxOp({spec, {boxes, labels}});
    for (int s = 0; s < 8; ++s) {
      const Reference want = offset ? Encode(samples[s], Values<int32_t>(labels, s), anchors, 0.4, true, 300,
                                             {0.01, -0.02, 0.03, 0.0}, {0.1, 0.1, 0.2, 0.2})
                                    : Encode(samples[s], Values<int32_t>(labels, s), anchors, 0.4);
      ASSERT_EQ(out[0].shape(s), (Shape{128, 4}));
      ASSERT_EQ(out[1].shape(s), (Shape{128}));
      EXPECT_EQ(Values<int32_t>(out[1], s), want.labels) << "sample " << s;
      const std::vector<float> got = Values<float>(out[0], s);
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want.boxes[i], 2e-4) << "sample " << s << " " << i;
    }
  }
}

// Three anchors: top-left quarter, bottom-right quarter, bottom-left quarter.
const std::vector<double> kQuarters = {0, 0, 0.5, 0.5, 0.5, 0.5, 1, 1, 0, 0.5, 0.5, 1};

TEST(BoxEncoder, HandCheckedMatchForcedMatchAndLaterBoxWins) {
  // IoU with anchor 0 = 0.16 / 0.25 = 0.64 > 0.5: matched; the other anchors stay background.
  std::vector<TensorListCPU> out =
      RunBoxOp({Encoder(kQuarters), {BoxBatch({{0.1f, 0.1f, 0.5f, 0.5f}}), LabelBatch({{7}})}});
  std::vector<float> want = {0.3f, 0.3f, 0.4f, 0.4f, 0.75f, 0.75f, 0.5f, 0.5f, 0.25f, 0.75f, 0.5f, 0.5f};
  std::vector<float> got = Values<float>(out[0], 0);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
  EXPECT_EQ(Values<int32_t>(out[1], 0), (std::vector<int32_t>{7, 0, 0}));
  // IoU 0.16 < criteria, but the box claims its best anchor anyway; of two boxes with the same best
  // anchor, the later one wins it.
  out = RunBoxOp(
      {Encoder(kQuarters),
       {BoxBatch({{0.6f, 0.6f, 0.9f, 0.9f, 0.7f, 0.7f, 0.8f, 0.8f, 0, 0, 0.2f, 0.2f}}), LabelBatch({{3, 4, 5}})}});
  EXPECT_EQ(Values<int32_t>(out[1], 0), (std::vector<int32_t>{5, 4, 0}));
  got = Values<float>(out[0], 0);
  EXPECT_NEAR(got[0], 0.1f, 1e-6);
  EXPECT_NEAR(got[4], 0.75f, 1e-6);
  EXPECT_NEAR(got[6], 0.1f, 1e-6);
}

TEST(BoxEncoder, OffsetsHandChecked) {
  const OpSpec spec = Encoder(kQuarters)
                          .SetArg("offset", true)
                          .SetArg("scale", 2.0)
                          .SetArg("stds", std::vector<double>{0.1, 0.1, 0.2, 0.2})
                          .SetArg("means", std::vector<double>{0, 0, 0, 0.5});
  const std::vector<TensorListCPU> out = RunBoxOp({spec, {BoxBatch({{0.1f, 0.1f, 0.5f, 0.5f}}), LabelBatch({{7}})}});
  const std::vector<float> got = Values<float>(out[0], 0);
  // Box centre 0.3 * 2 = 0.6 vs anchor 0.5 (width 1): 0.1 / 0.1 = 1; log(0.8 / 1) / 0.2; background
  // anchors encode themselves: 0, 0, 0, (0 - 0.5) / 0.2.
  const std::vector<float> want = {1.0f,
                                   1.0f,
                                   static_cast<float>(std::log(0.8) / 0.2),
                                   static_cast<float>((std::log(0.8) - 0.5) / 0.2),
                                   0,
                                   0,
                                   0,
                                   -2.5f,
                                   0,
                                   0,
                                   0,
                                   -2.5f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
}

TEST(BoxEncoder, DegenerateBoxesAreDroppedOutOfRangeBoxesClipped) {
  const float nan = std::nanf("");
  // A NaN box and a zero-width box match nothing; the out-of-range box is clipped to
  // (0, 0, 0.5, 0.5): exactly anchor 0.
  const TensorListCPU boxes = BoxBatch({{nan, 0.1f, 0.4f, 0.4f, 0.6f, 0.6f, 0.6f, 0.9f, -0.3f, -1.f, 0.5f, 0.5f}, {}});
  const TensorListCPU labels = LabelBatch({{1, 2, 3}, {}});
  const std::vector<TensorListCPU> out = RunBoxOp({Encoder(kQuarters), {boxes, labels}});
  EXPECT_EQ(Values<int32_t>(out[1], 0), (std::vector<int32_t>{3, 0, 0}));
  const std::vector<float> got = Values<float>(out[0], 0);
  EXPECT_NEAR(got[0], 0.25f, 1e-6);
  EXPECT_NEAR(got[2], 0.5f, 1e-6);
  // No boxes: every anchor is background.
  EXPECT_EQ(Values<int32_t>(out[1], 1), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_NEAR(Values<float>(out[0], 1)[4], 0.75f, 1e-6);
}

TEST(BoxEncoder, LabelsOfRankTwoAndInt64KeepTheirDtype) {
  const TensorListCPU boxes = BoxBatch({{0.1f, 0.1f, 0.5f, 0.5f}});
  const TensorListCPU labels = MakeBatch<int64_t>({{1, 1}}, {{int64_t{1} << 40}});
  const std::vector<TensorListCPU> out = RunBoxOp({Encoder(kQuarters), {boxes, labels}});
  EXPECT_EQ(out[1].dtype(), DType::kInt64);
  EXPECT_EQ(out[1].shape(0), (Shape{3}));
  EXPECT_EQ(Values<int64_t>(out[1], 0), (std::vector<int64_t>{int64_t{1} << 40, 0, 0}));
}

TEST(BoxEncoder, ArgumentErrors) {
  const std::vector<TensorListCPU> in = {BoxBatch({{0.1f, 0.1f, 0.5f, 0.5f}}), LabelBatch({{7}})};
  EXPECT_THAT(
      RunError({Encoder({0, 0, 1, 1, 0.5}), in}),
      HasSubstr("op \"box_encoder\" (enc): argument \"anchors\": expected a nonempty multiple of 4 values (ltrb "
                "per anchor), got 5"));
  EXPECT_THAT(RunError({Encoder({0, 0, 1, 1, 0.5, 0.2, 0.4, 0.9}), in}),
              HasSubstr("argument \"anchors\": anchor 1 [0.5, 0.2, 0.4, 0.9] must be finite with right > left and "
                        "bottom > top"));
  EXPECT_THAT(RunError({Encoder(kQuarters).SetArg("means", std::vector<double>{0, 0, 0}), in}),
              HasSubstr("argument \"means\": expected 4 values [x, y, w, h], got 3"));
  EXPECT_THAT(RunError({Encoder(kQuarters).SetArg("stds", std::vector<double>{1, 1, 0, 1}), in}),
              HasSubstr("argument \"stds\": must be nonzero, got 0 at position 2"));
  EXPECT_THAT(RunError({Encoder(kQuarters).SetArg("scale", 0.0), in}),
              HasSubstr("argument \"scale\": expected a finite value > 0, got 0"));
}

TEST(BoxEncoder, InputErrors) {
  const TensorListCPU boxes = BoxBatch({{0.1f, 0.1f, 0.5f, 0.5f}, {0.1f, 0.1f, 0.5f, 0.5f, 0.2f, 0.2f, 0.3f, 0.3f}});
  EXPECT_THAT(RunError({Encoder(kQuarters), {boxes, LabelBatch({{1}, {2}})}}),
              HasSubstr("op \"box_encoder\" (enc): input 1 (\"labels\"), sample 1: expected 2 labels (shape [N] or [N, "
                        "1], one per box of input 0), got shape (1,)"));
  EXPECT_THAT(RunError({Encoder(kQuarters), {boxes, MakeBatch<int32_t>({{1, 2}, {2, 2}}, {{1, 1}, {1, 2, 3, 4}})}}),
              HasSubstr("input 1 (\"labels\"), sample 0: expected 1 labels (shape [N] or [N, 1], one per box of input "
                        "0), got shape (1, 2)"));
  EXPECT_THAT(RunError({Encoder(kQuarters), {boxes, MakeBatch<float>({{1}, {2}}, {{1}, {1, 2}})}}),
              HasSubstr("input 1 (\"labels\"): expected dtype int32 or int64, got float32"));
  EXPECT_THAT(RunError({Encoder(kQuarters), {boxes, LabelBatch({{1}})}}),
              HasSubstr("input 1 (\"labels\"): expected one sample per sample of input 0 (2), got 1"));
  EXPECT_THAT(RunError({Encoder(kQuarters), {MakeBatch<float>({{1, 3}}, {{0, 0, 1}}), LabelBatch({{1}})}}),
              HasSubstr("input 0 (\"boxes\"), sample 0: expected a [N, 4] tensor of boxes, got shape (1, 3)"));
}

TEST(BoxEncoder, EmptyBatch) {
  const std::vector<TensorListCPU> out = RunBoxOp({Encoder(kQuarters), {BoxBatch({}), LabelBatch({})}});
  EXPECT_EQ(out[0].num_samples(), 0);
  EXPECT_EQ(out[1].num_samples(), 0);
}

}  // namespace
}  // namespace conveyor::testing
