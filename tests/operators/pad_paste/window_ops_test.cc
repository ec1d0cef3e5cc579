// pad, slice and paste on the CPU against an independent window reference (window_test_util.h) on
// fresh random images of every dtype, masks included; DALI's size rules; per-sample arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/operators/pad_paste/window_test_util.h"

namespace conveyor::testing {
namespace {

const DType kDTypes[] = {DType::kUInt8, DType::kInt32, DType::kFloat32, DType::kInt16};

TEST(PadCpu, PadsToTheBatchMaximumAtTheEnd) {
  for (DType t : kDTypes) {
    const TensorListCPU in = RandomImages(RandomShapes(5, 30, 3), t);
    const TensorListCPU out =
        RunOp({Unary("pad", "p").SetArg("axes", std::vector<int64_t>{0, 1}).SetArg("fill_value", 7.0), in},
              Device::kCpu);
    int64_t mh = 0, mw = 0;
    for (int s = 0; s < 5; ++s) mh = std::max(mh, in.shape(s)[0]), mw = std::max(mw, in.shape(s)[1]);
    for (int s = 0; s < 5; ++s) {
      EXPECT_EQ(CheckWindow(out, in, s, 0, 0, 0, mh, mw, 3, {7}), "") << DTypeName(t) << " seed " << RngSeed();
    }
  }
}

TEST(PadCpu, DefaultAxesAreAllIncludingChannels) {
  const TensorListCPU in = RandomImages({{2, 3, 1}, {4, 1, 3}}, DType::kUInt8);
  const TensorListCPU out = RunOp({Unary("pad", "p"), in}, Device::kCpu);
  EXPECT_EQ(CheckWindow(out, in, 0, 0, 0, 0, 4, 3, 3, {0}), "");
  EXPECT_EQ(CheckWindow(out, in, 1, 0, 0, 0, 4, 3, 3, {0}), "");
}

TEST(PadCpu, MinimumShapeAndAlignPerSample) {
  // DALI: shape is a minimum (a larger sample is not cut); align rounds up; <= 0 takes the batch max.
  const TensorListCPU in = RandomImages({{5, 9, 1}, {12, 3, 1}}, DType::kInt32);
  const TensorListCPU out = RunOp({Unary("pad", "p").SetArg("axes", std::vector<int64_t>{1, 0})
                                       .SetArgInput("shape", "sh").SetArg("align", std::vector<int64_t>{4, 1})
                                       .SetArg("fill_value", 255.0),
                                   in,
                                   {{"shape", ArgValues({{6, -1}, {6, 10}})}}},
                                  Device::kCpu);
  // Sample 0: W max(9, 6) = 9 -> 12; H batch max 12. Sample 1: W max(3, 6) = 6 -> 8; H max(12, 10) = 12.
  EXPECT_EQ(CheckWindow(out, in, 0, 0, 0, 0, 12, 12, 1, {255}), "");
  EXPECT_EQ(CheckWindow(out, in, 1, 0, 0, 0, 12, 8, 1, {255}), "");
}

TEST(SliceCpu, NormalizedAnchorAndShapeInXyOrder) {
  for (DType t : kDTypes) {
    const std::vector<Shape> shapes = RandomShapes(6, 40, 3);
    const TensorListCPU in = RandomImages(shapes, t);
    std::vector<std::vector<float>> anchors, sizes;
    for (int s = 0; s < 6; ++s) {
      const auto a = RandomVector<float>(2, 0.f, 0.5f), b = RandomVector<float>(2, 0.f, 0.5f);
      anchors.push_back(a);
      sizes.push_back(b);
    }
    const TensorListCPU out =
        RunOp({Unary("slice", "s").SetArgInput("rel_start", "a").SetArgInput("rel_shape", "b"), in,
               {{"rel_start", ArgValues(anchors)}, {"rel_shape", ArgValues(sizes)}}},
              Device::kCpu);
    for (int s = 0; s < 6; ++s) {
      const double W = static_cast<double>(shapes[s][1]), H = static_cast<double>(shapes[s][0]);
      const auto& a = anchors[static_cast<size_t>(s)];
      const auto& b = sizes[static_cast<size_t>(s)];
      const int64_t x0 = std::llround(double(a[0]) * W), y0 = std::llround(double(a[1]) * H);
      const int64_t x1 = std::llround((double(a[0]) + double(b[0])) * W);
      const int64_t y1 = std::llround((double(a[1]) + double(b[1])) * H);
      EXPECT_EQ(CheckWindow(out, in, s, y0, x0, 0, y1 - y0, x1 - x0, 3, {0}), "") << DTypeName(t);
    }
  }
}

TEST(SliceCpu, AbsoluteStartShapeEndAndChannels) {
  const TensorListCPU in = RandomImages({{10, 12, 4}}, DType::kFloat32);
  EXPECT_EQ(CheckWindow(RunOp({Unary("slice", "s").SetArg("start", std::vector<double>{3, 2})
                                   .SetArg("shape", std::vector<double>{5, 4}), in}, Device::kCpu),
                        in, 0, 2, 3, 0, 4, 5, 4, {0}), "");
  EXPECT_EQ(CheckWindow(RunOp({Unary("slice", "s").SetArg("axes", std::vector<int64_t>{0, 2})
                                   .SetArg("start", std::vector<double>{1, 1}).SetArg("end", std::vector<double>{9, 3}),
                               in}, Device::kCpu),
                        in, 0, 1, 0, 1, 8, 12, 2, {0}), "");
  EXPECT_EQ(CheckWindow(RunOp({Unary("slice", "s").SetArg("rel_end", std::vector<double>{0.5, 0.5}), in}, Device::kCpu),
                        in, 0, 0, 0, 0, 5, 6, 4, {0}), "");
}

TEST(SliceCpu, PadAndTrimPolicies) {
  for (DType t : kDTypes) {
    const TensorListCPU in = RandomImages({{6, 7, 3}, {3, 2, 3}}, t);
    const OpSpec base = Unary("slice", "s").SetArg("start", std::vector<double>{-2, 1})
                            .SetArg("shape", std::vector<double>{9, 4});
    const TensorListCPU padded = RunOp({OpSpec(base).SetArg("out_of_bounds_policy", "pad")
                                            .SetArg("fill_values", std::vector<double>{1, 2, 3}), in}, Device::kCpu);
    EXPECT_EQ(CheckWindow(padded, in, 0, 1, -2, 0, 4, 9, 3, {1, 2, 3}), "") << DTypeName(t);
    EXPECT_EQ(CheckWindow(padded, in, 1, 1, -2, 0, 4, 9, 3, {1, 2, 3}), "") << DTypeName(t);
    const TensorListCPU trimmed = RunOp({OpSpec(base).SetArg("out_of_bounds_policy", "trim_to_shape"), in}, Device::kCpu);
    EXPECT_EQ(CheckWindow(trimmed, in, 0, 1, 0, 0, 4, 7, 3, {0}), "") << DTypeName(t);
    EXPECT_EQ(CheckWindow(trimmed, in, 1, 1, 0, 0, 2, 2, 3, {0}), "") << DTypeName(t);
  }
}

TEST(PasteCpu, CanvasRatioPositionAndMinimumSize) {
  for (DType t : kDTypes) {
    const std::vector<Shape> shapes = RandomShapes(6, 30, 3);
    const TensorListCPU in = RandomImages(shapes, t);
    std::vector<std::vector<float>> ratio, px, py;
    for (int s = 0; s < 6; ++s) {
      ratio.push_back({RandomVector<float>(1, 1.f, 3.f)[0]});
      px.push_back({RandomVector<float>(1, 0.f, 1.f)[0]});
      py.push_back({s == 0 ? 1.f : RandomVector<float>(1, 0.f, 1.f)[0]});
    }
    const TensorListCPU out = RunOp({Unary("paste", "p").SetArgInput("ratio", "r").SetArgInput("paste_x", "x")
                                         .SetArgInput("paste_y", "y").SetArg("min_canvas_size", 40.0)
                                         .SetArg("fill_value", std::vector<double>{4, 5, 6}),
                                     in,
                                     {{"ratio", ArgValues(ratio, true)}, {"paste_x", ArgValues(px, true)},
                                      {"paste_y", ArgValues(py, true)}}},
                                    Device::kCpu);
    for (int s = 0; s < 6; ++s) {
      const double r = ratio[static_cast<size_t>(s)][0];
      const int64_t h = shapes[s][0], w = shapes[s][1];
      const int64_t ch = std::max<int64_t>(std::llround(double(h) * r), 40);
      const int64_t cw = std::max<int64_t>(std::llround(double(w) * r), 40);
      const int64_t oy = std::llround(double(py[static_cast<size_t>(s)][0]) * double(ch - h));
      const int64_t ox = std::llround(double(px[static_cast<size_t>(s)][0]) * double(cw - w));
      EXPECT_EQ(CheckWindow(out, in, s, -oy, -ox, 0, ch, cw, 3, {4, 5, 6}), "") << DTypeName(t);
    }
  }
}

TEST(PasteCpu, MaskLabelsPassUnchanged) {
  // An int32 label map: every label of the input appears unchanged, the canvas holds the ignore label.
  const TensorListCPU mask = MakeBatch<int32_t>({{2, 2, 1}}, {{3, 70000, -1, 2147483647}}, "HWC");
  const TensorListCPU out = RunOp({Unary("paste", "p").SetArg("ratio", 2.0).SetArg("paste_x", 0.0)
                                       .SetArg("paste_y", 1.0).SetArg("fill_value", std::vector<double>{255}),
                                   mask},
                                  Device::kCpu);
  const std::vector<int32_t> want = {255, 255, 255, 255, 255, 255, 255, 255,
                                     3,   70000, 255, 255, -1, 2147483647, 255, 255};
  ASSERT_EQ(out.shape(0), (Shape{4, 4, 1}));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(At<int32_t>(out, 0, i), want[static_cast<size_t>(i)]) << i;
}

}  // namespace
}  // namespace conveyor::testing
