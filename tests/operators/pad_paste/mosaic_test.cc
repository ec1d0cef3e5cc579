// mosaic on the CPU: pixels and boxes against an independent reference that re-draws each sample's
// centre and partners from its stream; masks through the same mosaic unchanged in value (same stream,
// and fed draws); the box rule on a hand case; every error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/op/philox.h"
#include "tests/operators/pad_paste/window_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Mosaic(int64_t h, int64_t w) {
  return OpSpec("mosaic", "m").AddInput("img").AddInput("boxes").AddInput("labels").AddOutput("out")
      .AddOutput("out_boxes").AddOutput("out_labels").SetArg("size", std::vector<int64_t>{h, w});
}

struct MosaicRun {
  std::vector<TensorListCPU> outputs;
  uint32_t node = 0;
};

MosaicRun RunMosaic(const OpSpec& spec, const TensorListCPU& img, const TensorListCPU& boxes,
                    const TensorListCPU& labels, int64_t iteration, uint64_t seed = 77) {
  OpHarness h(spec, Device::kCpu, img.num_samples());
  h.SetInput(0, img);
  h.SetInput(1, boxes);
  h.SetInput(2, labels);
  h.set_iteration(iteration);
  h.set_seed(seed);
  h.Run();
  MosaicRun r;
  for (int o = 0; o < 3; ++o) r.outputs.push_back(h.OutputToHost(o));
  r.node = h.workspace().node_id();
  return r;
}

TensorListCPU RandomBoxes(int n, std::vector<std::vector<int32_t>>* labels) {
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> values;
  for (int s = 0; s < n; ++s) {
    const int count = RandomVector<int>(1, 0, 6)[0];
    std::vector<float> v, l;
    std::vector<int32_t> lab;
    for (int b = 0; b < count; ++b) {
      const auto c = RandomVector<float>(4, -0.1f, 1.1f);
      v.insert(v.end(), {std::min(c[0], c[2]), std::min(c[1], c[3]), std::max(c[0], c[2]), std::max(c[1], c[3])});
      lab.push_back(RandomVector<int>(1, 1, 80)[0]);
    }
    shapes.push_back(Shape{count, 4});
    values.push_back(v);
    labels->push_back(lab);
  }
  return MakeBatch<float>(shapes, values);
}

TensorListCPU Labels(const std::vector<std::vector<int32_t>>& labels) {
  std::vector<Shape> shapes;
  for (const auto& l : labels) shapes.push_back(Shape{static_cast<int64_t>(l.size())});
  return MakeBatch<int32_t>(shapes, labels);
}

double Clip01(double v) { return v < 0 ? 0 : (v > 1 ? 1 : v); }

TEST(MosaicCpu, PixelsAndBoxesMatchAReferenceDrawnFromEachSampleStream) {
  const int n = 6;
  const int64_t H = 48, W = 64;
  for (DType t : {DType::kUInt8, DType::kInt32, DType::kFloat32}) {
    for (int64_t iteration : {0, 3}) {
      const std::vector<Shape> shapes = RandomShapes(n, 70, 3);
      const TensorListCPU img = RandomImages(shapes, t);
      std::vector<std::vector<int32_t>> labels;
      const TensorListCPU boxes = RandomBoxes(n, &labels);
      const MosaicRun r = RunMosaic(Mosaic(H, W).SetArg("ltrb", true).SetArg("fill_values", std::vector<double>{9}),
                                    img, boxes, Labels(labels), iteration);
      int partners_not_self = 0;
      for (int s = 0; s < n; ++s) {
        Philox rng(77, r.node, static_cast<uint64_t>(iteration), static_cast<uint32_t>(s));
        const double fx = 0.25 + 0.5 * rng.NextUniform(), fy = 0.25 + 0.5 * rng.NextUniform();
        const int64_t cx = static_cast<int64_t>(std::floor(fx * W)), cy = static_cast<int64_t>(std::floor(fy * H));
        int src[4] = {s, 0, 0, 0};
        for (int k = 1; k < 4; ++k) src[k] = static_cast<int>(rng.NextU32() % n), partners_not_self += src[k] != s;
        ASSERT_EQ(r.outputs[0].shape(s), (Shape{H, W, 3}));
        // Pixels: quadrant k shows image src[k] with its corner at the centre.
        for (int64_t y = 0; y < H; ++y) {
          for (int64_t x = 0; x < W; ++x) {
            const int k = (y >= cy ? 2 : 0) + (x >= cx ? 1 : 0);
            const Shape& is = shapes[static_cast<size_t>(src[k])];
            const int64_t oy = k < 2 ? cy - is[0] : cy, ox = k % 2 == 0 ? cx - is[1] : cx;
            const int64_t sy = y - oy, sx = x - ox;
            const bool inside = sy >= 0 && sy < is[0] && sx >= 0 && sx < is[1];
            for (int c = 0; c < 3; ++c) {
              const double want = inside ? ElementAsDouble(img, src[k], (sy * is[1] + sx) * 3 + c) : 9.0;
              ASSERT_EQ(ElementAsDouble(r.outputs[0], s, (y * W + x) * 3 + c), want)
                  << DTypeName(t) << " sample " << s << " at " << y << "," << x;
            }
          }
        }
        // Boxes: clipped in their image, moved, clipped to the canvas, kept with area; labels carried.
        std::vector<float> want_boxes;
        std::vector<int32_t> want_labels;
        for (int k = 0; k < 4; ++k) {
          const Shape& is = shapes[static_cast<size_t>(src[k])];
          const double oy = double(k < 2 ? cy - is[0] : cy), ox = double(k % 2 == 0 ? cx - is[1] : cx);
          const int64_t count = boxes.shape(src[k])[0];
          for (int64_t b = 0; b < count; ++b) {
            const float* v = static_cast<const float*>(boxes.raw_sample(src[k])) + 4 * b;
            const double l = (Clip01(v[0]) * double(is[1]) + ox) / W, tp = (Clip01(v[1]) * double(is[0]) + oy) / H;
            const double rr = (Clip01(v[2]) * double(is[1]) + ox) / W, bt = (Clip01(v[3]) * double(is[0]) + oy) / H;
            const double L = Clip01(l), T = Clip01(tp), R = Clip01(rr), B = Clip01(bt);
            if (!(R > L && B > T)) continue;
            want_boxes.insert(want_boxes.end(), {float(L), float(T), float(R), float(B)});
            want_labels.push_back(labels[static_cast<size_t>(src[k])][static_cast<size_t>(b)]);
          }
        }
        ASSERT_EQ(r.outputs[1].shape(s), (Shape{static_cast<int64_t>(want_labels.size()), 4})) << "sample " << s;
        for (size_t i = 0; i < want_boxes.size(); ++i) {
          EXPECT_NEAR(At<float>(r.outputs[1], s, static_cast<int64_t>(i)), want_boxes[i], 1e-6) << s << " " << i;
        }
        for (size_t i = 0; i < want_labels.size(); ++i) {
          EXPECT_EQ(At<int32_t>(r.outputs[2], s, static_cast<int64_t>(i)), want_labels[i]);
        }
      }
      EXPECT_GT(partners_not_self, 0);
    }
  }
}

TEST(MosaicCpu, MaskGetsTheSameGeometryAsItsImage) {
  // A mask node with the same name, seed and iteration draws the same mosaic; label values unchanged.
  const std::vector<Shape> shapes = RandomShapes(4, 30, 1);
  const TensorListCPU img = RandomImages(shapes, DType::kUInt8);
  TensorListCPU mask;
  mask.Resize(shapes, DType::kInt32);
  mask.set_layout("HWC");
  for (int s = 0; s < 4; ++s) {
    for (int64_t i = 0; i < shapes[s].num_elements(); ++i) {
      static_cast<int32_t*>(mask.raw_sample(s))[i] = 1000 * At<uint8_t>(img, s, i) + 7;
    }
  }
  std::vector<std::vector<int32_t>> labels;
  const TensorListCPU boxes = RandomBoxes(4, &labels);
  const OpSpec spec = Mosaic(32, 32).SetArg("fill_values", std::vector<double>{0});
  const MosaicRun a = RunMosaic(spec, img, boxes, Labels(labels), 5);
  const MosaicRun b = RunMosaic(spec, mask, boxes, Labels(labels), 5);
  for (int s = 0; s < 4; ++s) {
    for (int64_t i = 0; i < 32 * 32; ++i) {
      const int32_t m = At<int32_t>(b.outputs[0], s, i);
      const int v = At<uint8_t>(a.outputs[0], s, i);
      ASSERT_TRUE(m == 1000 * v + 7 || (m == 0 && v == 0)) << s << " " << i;
    }
  }
}

// A mask follows its image through a second node fed the first one's draws (any node name).
TEST(MosaicCpu, MaskFollowsItsImageThroughFedDraws) {
  const std::vector<Shape> shapes = RandomShapes(5, 30, 3);
  std::vector<Shape> mask_shapes;
  for (const Shape& s : shapes) mask_shapes.push_back(Shape{s[0], s[1], 1});
  const TensorListCPU img = RandomImages(shapes, DType::kUInt8);
  TensorListCPU mask;
  mask.Resize(mask_shapes, DType::kInt32);
  mask.set_layout("HWC");
  for (int s = 0; s < 5; ++s) {
    for (int64_t i = 0; i < mask_shapes[s].num_elements(); ++i) {
      static_cast<int32_t*>(mask.raw_sample(s))[i] = 70000 + At<uint8_t>(img, s, 3 * i);
    }
  }
  std::vector<std::vector<int32_t>> labels;
  const TensorListCPU boxes = RandomBoxes(5, &labels);
  OpHarness a(Mosaic(40, 36).AddOutput("draws").SetArg("output_draws", true), Device::kCpu, 5);
  a.SetInput(0, img);
  a.SetInput(1, boxes);
  a.SetInput(2, Labels(labels));
  a.set_seed(3);
  a.Run();
  const TensorListCPU draws = a.OutputToHost(3);
  ASSERT_EQ(draws.shape(0), Shape{6});
  OpHarness b(OpSpec("mosaic", "mask_mosaic").AddInput("m").AddInput("boxes").AddInput("labels").AddOutput("out")
                  .AddOutput("ob").AddOutput("ol").SetArg("size", std::vector<int64_t>{40, 36})
                  .SetArg("fill_values", std::vector<double>{0}).SetArgInput("draws", "d"),
              Device::kCpu, 5);
  b.SetInput(0, mask);
  b.SetInput(1, boxes);
  b.SetInput(2, Labels(labels));
  b.SetArgInput("draws", draws);
  b.set_seed(99);  // a different stream: the fed draws decide
  b.Run();
  const TensorListCPU image_out = a.OutputToHost(0), mask_out = b.OutputToHost(0);
  int64_t covered = 0;
  for (int s = 0; s < 5; ++s) {
    for (int64_t i = 0; i < 40 * 36; ++i) {
      const int32_t m = At<int32_t>(mask_out, s, i);
      const int v = At<uint8_t>(image_out, s, 3 * i);
      ASSERT_TRUE(m == 70000 + v || (m == 0 && v == 114)) << "sample " << s << " pixel " << i << ": " << m << " " << v;
      covered += m != 0;
    }
  }
  EXPECT_GT(covered, 0);
  for (int o = 1; o < 3; ++o) EXPECT_EQ(CompareExact(b.OutputToHost(o), a.OutputToHost(o)), "") << "output " << o;
  // The draw is sample i's own when nothing is fed: quadrant 0 shows sample i.
  for (int s = 0; s < 5; ++s) EXPECT_EQ(At<int32_t>(draws, s, 2), s);
}

TEST(MosaicCpu, FedDrawsAreChecked) {
  const TensorListCPU img = RandomImages({{4, 4, 3}, {4, 4, 3}}, DType::kUInt8);
  const TensorListCPU boxes = MakeBatch<float>({{0, 4}, {0, 4}}, {{}, {}});
  const TensorListCPU labels = MakeBatch<int32_t>({{0}, {0}}, {{}, {}});
  auto error = [&](const std::vector<std::vector<int32_t>>& d) -> std::string {
    OpHarness h(Mosaic(4, 4).SetArgInput("draws", "d"), Device::kCpu, 2);
    h.SetInput(0, img);
    h.SetInput(1, boxes);
    h.SetInput(2, labels);
    std::vector<Shape> shapes;
    for (const auto& v : d) shapes.push_back(Shape{static_cast<int64_t>(v.size())});
    h.SetArgInput("draws", MakeBatch<int32_t>(shapes, d));
    try {
      h.Run();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THAT(error({{1, 1, 0, 0, 0, 0}, {1, 1, 0, 1}}),
              HasSubstr("op \"mosaic\" (m): sample 1: draws has 4 values, expected 6"));
  EXPECT_THAT(error({{5, 1, 0, 0, 0, 0}, {1, 1, 0, 1, 1, 1}}), HasSubstr("sample 0: draws: centre (5, 1) is outside the 4 x 4 canvas"));
  EXPECT_THAT(error({{1, 1, 0, 0, 0, 0}, {1, 1, 0, 2, 1, 1}}), HasSubstr("sample 1: draws[3] = 2: not a sample of this batch of 2"));
  EXPECT_EQ(error({{1, 1, 0, 0, 0, 0}, {1, 1, 0, 1, 1, 1}}), "no error");
}

TEST(MosaicCpu, BoxesLeftWithoutAreaAreDropped) {
  // One 10 x 10 image, its own partner, centre fixed at (5, 5): only the bottom-right copy shows the box.
  const TensorListCPU img = RandomImages({{10, 10, 3}}, DType::kUInt8);
  const TensorListCPU boxes = MakeBatch<float>({{1, 4}}, {{0, 0, 0.4f, 0.4f}});
  const TensorListCPU labels = MakeBatch<int32_t>({{1, 1}}, {{17}});
  const MosaicRun r = RunMosaic(Mosaic(10, 10).SetArg("ltrb", true).SetArg("center_range", std::vector<double>{0.5, 0.5}),
                                img, boxes, labels, 0);
  ASSERT_EQ(r.outputs[1].shape(0), (Shape{1, 4}));
  ASSERT_EQ(r.outputs[2].shape(0), (Shape{1, 1}));
  const std::vector<float> want = {0.5f, 0.5f, 0.9f, 0.9f};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(At<float>(r.outputs[1], 0, i), want[static_cast<size_t>(i)]);
  EXPECT_EQ(At<int32_t>(r.outputs[2], 0, 0), 17);
}

std::string MosaicError(const OpSpec& spec, const TensorListCPU& img, const TensorListCPU& boxes,
                        const TensorListCPU& labels) {
  try {
    RunMosaic(spec, img, boxes, labels, 0);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(MosaicCpu, ErrorsSayWhatAndWhere) {
  const TensorListCPU boxes = MakeBatch<float>({{0, 4}, {0, 4}}, {{}, {}});
  const TensorListCPU labels = MakeBatch<int32_t>({{0}, {0}}, {{}, {}});
  const TensorListCPU img = RandomImages({{4, 4, 3}, {4, 4, 3}}, DType::kUInt8);
  EXPECT_THAT(MosaicError(OpSpec(Mosaic(4, 4)).SetArg("size", std::vector<int64_t>{4}), img, boxes, labels),
              HasSubstr("op \"mosaic\" (m): size must be [h, w], got 1 values"));
  EXPECT_THAT(MosaicError(Mosaic(4, 4).SetArg("center_range", std::vector<double>{0.8, 0.2}), img, boxes, labels),
              HasSubstr("op \"mosaic\" (m): center_range must be [lo, hi] with lo <= hi, got 2 values (0.8, 0.2)"));
  EXPECT_THAT(MosaicError(Mosaic(4, 4).SetArg("fill_values", std::vector<double>{300}), img, boxes, labels),
              HasSubstr("op \"mosaic\" (m): sample 0: fill_values[0] = 300: expected an integer in [0, 255] for uint8"));
  EXPECT_THAT(MosaicError(Mosaic(4, 4), img, MakeBatch<float>({{1, 3}, {0, 4}}, {{1, 2, 3}, {}}), labels),
              HasSubstr("sample 0: expected a [N, 4] tensor of boxes, got shape (1, 3)"));
  // Channel counts: with 8 samples half gray, some mosaic pairs a 3-channel image with a gray one.
  std::vector<Shape> mixed;
  for (int s = 0; s < 8; ++s) mixed.push_back(Shape{4, 4, s % 2 ? 1 : 3});
  std::vector<Shape> no_boxes(8, Shape{0, 4});
  EXPECT_THAT(MosaicError(Mosaic(4, 4), RandomImages(mixed, DType::kUInt8),
                          MakeBatch<float>(no_boxes, std::vector<std::vector<float>>(8)),
                          MakeBatch<int32_t>(std::vector<Shape>(8, Shape{0}), std::vector<std::vector<int32_t>>(8))),
              HasSubstr("op \"mosaic\" (m): sample 0: its mosaic takes sample 7 with 1 channels, sample 0 has 3; every "
                        "image must have the same channel count"));
}

}  // namespace
}  // namespace conveyor::testing
