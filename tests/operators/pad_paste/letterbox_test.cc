// letterbox on the CPU: the geometry (letterbox.h) by hand; the canvas equals resize to the fitted
// size placed by an independent window check; a painted rectangle's pixel bounds in the output
// equal its box moved by coord_transform with the op's MT (and by the [sx, sy, ox, oy] map);
// errors. GPU equal to CPU byte for byte (tag gpu: skips without a GPU).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/pipeline/pipeline.h"
#include "operators/pad_paste/letterbox.h"
#include "tests/operators/pad_paste/window_test_util.h"

namespace conveyor::testing {
namespace {

using ops::FitLetterbox;
using ops::LetterboxAlign;

OpSpec Letterbox(int64_t h, int64_t w) {
  return OpSpec("letterbox", "lb").AddInput("x").AddOutput("y").AddOutput("t").SetArg("size", std::vector<int64_t>{h, w});
}

TEST(Letterbox, Geometry) {
  ops::LetterboxFit f = FitLetterbox(100, 200, 64, 64, LetterboxAlign::kCenter);
  EXPECT_EQ(f.h, 32);
  EXPECT_EQ(f.w, 64);
  EXPECT_EQ(f.oy, 16);
  EXPECT_EQ(f.ox, 0);
  EXPECT_EQ(f.transform, (std::array<float, 4>{1.0f, 0.5f, 0.0f, 0.25f}));
  f = FitLetterbox(30, 10, 40, 60, LetterboxAlign::kCenter);  // height limits: 40 x 13 (13.33 rounded)
  EXPECT_EQ(f.h, 40);
  EXPECT_EQ(f.w, 13);
  EXPECT_EQ(f.ox, 23);
  f = FitLetterbox(30, 10, 40, 60, LetterboxAlign::kTopLeft);
  EXPECT_EQ(f.oy, 0);
  EXPECT_EQ(f.ox, 0);
  f = FitLetterbox(0, 10, 40, 60, LetterboxAlign::kCenter);
  EXPECT_EQ(f.h, 0);
  EXPECT_EQ(f.transform, (std::array<float, 4>{0, 0, 0, 0}));
  EXPECT_EQ(ops::LetterboxBoxMT({0.5f, 0.25f, 0.1f, 0.2f}, false),
            (std::array<float, 20>{0.5f, 0, 0, 0, 0.1f, 0, 0.25f, 0, 0, 0.2f, 0, 0, 0.5f, 0, 0, 0, 0, 0, 0.25f, 0}));
}

// Output 0 is resize to the fitted size, placed on a fill canvas; output 1 the maps.
TEST(Letterbox, CanvasIsResizePlacedOnFill) {
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    for (const std::string align : {"center", "top_left"}) {
      for (const std::string interp : {"linear", "nearest", "cubic"}) {
        std::vector<Shape> shapes = RandomShapes(6, 70, 3);
        shapes.push_back(Shape{0, 4, 3});
        const TensorListCPU in = RandomImages(shapes, t);
        OpHarness h(Letterbox(48, 40).SetArg("align", align).SetArg("interp_type", interp)
                        .SetArg("fill_value", std::vector<double>{7, 8, 9}),
                    Device::kCpu, in.num_samples());
        h.SetInput(0, in);
        h.Run();
        const TensorListCPU out = h.OutputToHost(0), maps = h.OutputToHost(1);
        for (int s = 0; s < in.num_samples(); ++s) {
          const Shape& is = in.shape(s);
          const ops::LetterboxFit f =
              FitLetterbox(is[0], is[1], 48, 40, align == "center" ? LetterboxAlign::kCenter : LetterboxAlign::kTopLeft);
          TensorListCPU fitted;
          if (f.h > 0) {
            fitted = RunOp({OpSpec("resize", "r").AddInput("x").AddOutput("y").SetArg("size", std::vector<double>{
                                static_cast<double>(f.h), static_cast<double>(f.w)}).SetArg("interp_type", interp),
                            SampleOf(in, s)},
                           Device::kCpu);
          } else {
            fitted = RandomImages({Shape{0, 0, 3}}, t);
          }
          EXPECT_EQ(CheckWindow(SampleOf(out, s), fitted, 0, -f.oy, -f.ox, 0, 48, 40, 3, {7, 8, 9}), "")
              << DTypeName(t) << " " << align << " " << interp;
          ASSERT_EQ(maps.shape(s), Shape{4});
          for (int k = 0; k < 4; ++k) EXPECT_EQ(At<float>(maps, s, k), f.transform[static_cast<size_t>(k)]);
        }
      }
    }
  }
}

// A rectangle painted at integer pixels [x0, x1) x [y0, y1) and its normalized ltrb box; after
// letterbox (nearest) + coord_transform (MT from the op), the box in canvas pixels equals the
// rectangle's bounds found in the output, within one pixel.
TEST(Letterbox, BoxesLandOnTheirObjects) {
  struct Case { int64_t h, w, y0, x0, y1, x1; };
  const std::vector<Case> cases = {{100, 200, 20, 30, 60, 150}, {90, 30, 10, 5, 80, 25}, {64, 64, 0, 0, 10, 64},
                                   {37, 113, 3, 50, 30, 111}};
  const int n = static_cast<int>(cases.size());
  std::vector<Shape> shapes;
  for (const Case& c : cases) shapes.push_back(Shape{c.h, c.w, 1});
  TensorListCPU images = RandomImages(shapes, DType::kUInt8);
  std::vector<std::vector<float>> boxes;
  for (int s = 0; s < n; ++s) {
    const Case& c = cases[static_cast<size_t>(s)];
    auto* p = static_cast<uint8_t*>(images.raw_sample(s));
    for (int64_t y = 0; y < c.h; ++y) {
      for (int64_t x = 0; x < c.w; ++x) p[y * c.w + x] = (y >= c.y0 && y < c.y1 && x >= c.x0 && x < c.x1) ? 255 : 0;
    }
    boxes.push_back({static_cast<float>(c.x0) / c.w, static_cast<float>(c.y0) / c.h, static_cast<float>(c.x1) / c.w,
                     static_cast<float>(c.y1) / c.h});
  }
  const TensorListCPU box_list = MakeBatch<float>(std::vector<Shape>(static_cast<size_t>(n), Shape{1, 4}), boxes);
  for (const auto& [ch, cw] : {std::pair<int64_t, int64_t>{64, 96}, {80, 48}, {50, 50}}) {
    OpHarness h(Letterbox(ch, cw).AddOutput("mt").SetArg("interp_type", "nearest").SetArg("output_mt", true)
                    .SetArg("ltrb", true).SetArg("fill_value", std::vector<double>{100}),
                Device::kCpu, n);
    h.SetInput(0, images);
    h.Run();
    const TensorListCPU out = h.OutputToHost(0), maps = h.OutputToHost(1), mt = h.OutputToHost(2);
    OpHarness ct(OpSpec("coord_transform", "ct").AddInput("b").AddOutput("o").SetArgInput("MT", "mt"), Device::kCpu, n);
    ct.SetInput(0, box_list);
    ct.SetArgInput("MT", mt);
    ct.Run();
    const TensorListCPU moved = ct.OutputToHost(0);
    for (int s = 0; s < n; ++s) {
      int64_t y0 = ch, x0 = cw, y1 = 0, x1 = 0;
      for (int64_t y = 0; y < ch; ++y) {
        for (int64_t x = 0; x < cw; ++x) {
          if (At<uint8_t>(out, s, y * cw + x) != 255) continue;
          y0 = std::min(y0, y), x0 = std::min(x0, x), y1 = std::max(y1, y + 1), x1 = std::max(x1, x + 1);
        }
      }
      const std::vector<double> want = {static_cast<double>(x0) / cw, static_cast<double>(y0) / ch,
                                        static_cast<double>(x1) / cw, static_cast<double>(y1) / ch};
      const auto& b = boxes[static_cast<size_t>(s)];
      const std::vector<double> by_map = {b[0] * At<float>(maps, s, 0) + At<float>(maps, s, 2),
                                          b[1] * At<float>(maps, s, 1) + At<float>(maps, s, 3),
                                          b[2] * At<float>(maps, s, 0) + At<float>(maps, s, 2),
                                          b[3] * At<float>(maps, s, 1) + At<float>(maps, s, 3)};
      for (int k = 0; k < 4; ++k) {
        const double pixel = 1.0 / (k % 2 == 0 ? cw : ch);
        EXPECT_NEAR(At<float>(moved, s, k), want[static_cast<size_t>(k)], pixel)
            << "canvas " << ch << "x" << cw << " sample " << s << " coordinate " << k;
        EXPECT_NEAR(by_map[static_cast<size_t>(k)], At<float>(moved, s, k), 1e-6);
      }
    }
  }
}

// The documented YAML form: letterbox's mt feeds coord_transform's MT per sample.
TEST(Letterbox, BoxesInAYamlPipeline) {
  const char* yaml = R"(pipeline: {name: lb, batch_size: 3, device: cpu, seed: 1, num_threads: 2, prefetch_depth: 1}
ops:
  - {op: external_source, name: src, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}
  - {op: external_source, name: boxes_src, args: {dtype: float32, ndim: 2}, outputs: [boxes]}
  - {op: letterbox, name: lb, inputs: [images], args: {size: [40, 60], fill_value: [114], output_mt: true, ltrb: true},
     outputs: [letterboxed, lb_map, lb_mt]}
  - {op: coord_transform, name: ct, inputs: [boxes], args: {MT: $lb_mt}, outputs: [lb_boxes]}
outputs: [letterboxed, lb_map, lb_boxes]
)";
  const std::vector<Shape> shapes = {Shape{20, 50, 3}, Shape{70, 30, 3}, Shape{40, 60, 3}};
  const TensorListCPU images = RandomImages(shapes, DType::kUInt8);
  const TensorListCPU boxes = MakeBatch<float>(std::vector<Shape>(3, Shape{2, 4}),
                                               std::vector<std::vector<float>>(3, {0, 0, 1, 1, 0.25f, 0.5f, 0.75f, 1}));
  Pipeline p = Pipeline::FromYaml(yaml, "", {.has_gpu = false});
  p.Feed("src", images);
  p.Feed("boxes_src", boxes);
  p.Build();
  PipelineOutputs out = p.Outputs();
  for (int s = 0; s < 3; ++s) {
    const ops::LetterboxFit f = FitLetterbox(shapes[static_cast<size_t>(s)][0], shapes[static_cast<size_t>(s)][1], 40,
                                             60, LetterboxAlign::kCenter);
    // The whole image [0, 0, 1, 1] becomes the fitted image's pixel rectangle.
    const std::vector<double> want = {static_cast<double>(f.ox) / 60, static_cast<double>(f.oy) / 40,
                                      static_cast<double>(f.ox + f.w) / 60, static_cast<double>(f.oy + f.h) / 40};
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(At<float>(out.Cpu(2), s, k), want[static_cast<size_t>(k)], 1e-6) << s;
  }
  out.Release();
}

TEST(Letterbox, Errors) {
  const TensorListCPU u8 = RandomImages({Shape{4, 5, 3}}, DType::kUInt8);
  EXPECT_NE(ErrorOf({Letterbox(8, 8).SetArg("fill_value", std::vector<double>{1, 2}), u8})
                .find("fill_value has 2 values, the output has 3 channels"),
            std::string::npos);
  EXPECT_NE(ErrorOf({Letterbox(8, 8).SetArg("fill_value", std::vector<double>{256}), u8}).find("fill_value[0] = 256"),
            std::string::npos);
  EXPECT_NE(ErrorOf({Letterbox(8, 8).SetArg("size", std::vector<int64_t>{8}), u8}).find("size must be [h, w]"),
            std::string::npos);
  EXPECT_NE(ErrorOf({Letterbox(8, 8), RandomImages({Shape{4, 5, 1}}, DType::kInt32)}).find("int32"), std::string::npos);
}

TEST(LetterboxGpu, EqualsCpu) {
  CONVEYOR_REQUIRE_GPU();
  for (DType t : {DType::kUInt8, DType::kFloat32}) {
    for (const std::string interp : {"linear", "nearest", "cubic"}) {
      std::vector<Shape> shapes = RandomShapes(7, 90, 3);
      shapes.push_back(Shape{0, 4, 3});
      const TensorListCPU in = RandomImages(shapes, t);
      const OpSpec spec = Letterbox(50, 64).AddOutput("mt").SetArg("interp_type", interp).SetArg("output_mt", true)
                              .SetArg("fill_value", std::vector<double>{1, 2, 3});
      OpHarness cpu(spec, Device::kCpu, in.num_samples()), gpu(spec, Device::kGpu, in.num_samples());
      cpu.SetInput(0, in);
      gpu.SetInput(0, in);
      cpu.Run();
      cuda::Stream stream = cuda::Stream::Create();
      gpu.Run(stream.view());
      for (int o = 0; o < 3; ++o) {
        EXPECT_EQ(CompareExact(gpu.OutputToHost(o), cpu.OutputToHost(o)), "") << DTypeName(t) << " " << interp << " output " << o;
      }
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
