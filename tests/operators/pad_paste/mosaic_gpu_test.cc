// mosaic on the GPU: equal to the CPU reference bit for bit (every dtype, 1 and 3 channels, images
// smaller and larger than the canvas, fills, several iterations so the partners differ, draws fed
// from a CPU node); in a pipeline, captured == eager == CPU over iterations whose sizes grow and
// repeat (captures, then replays); and a geometric check on both backends: rectangles painted under
// their boxes are found again, pixel for pixel, under the moved boxes. GPU cases skip without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "tests/operators/pad_paste/window_test_util.h"
#include "tests/util/pipeline_outputs.h"

namespace conveyor::testing {
namespace {

OpSpec Mosaic(int64_t h, int64_t w) {
  return OpSpec("mosaic", "m").AddInput("img").AddInput("boxes").AddInput("labels").AddOutput("out")
      .AddOutput("out_boxes").AddOutput("out_labels").SetArg("size", std::vector<int64_t>{h, w});
}

struct Batch {
  TensorListCPU images, boxes, labels;
};

// Random boxes (some leaving the image, some without area) and int32 [N] or int64 [N, 1] labels.
void AddRandomBoxes(Batch& b, bool int64_labels) {
  std::vector<Shape> shapes, label_shapes;
  std::vector<std::vector<float>> values;
  std::vector<std::vector<int64_t>> labels;
  for (int s = 0; s < b.images.num_samples(); ++s) {
    const int count = RandomVector<int>(1, 0, 5)[0];
    std::vector<float> v;
    std::vector<int64_t> l;
    for (int k = 0; k < count; ++k) {
      const auto c = RandomVector<float>(4, -0.2f, 1.2f);
      v.insert(v.end(), {c[0], c[1], c[2], c[3]});  // ltrb or xywh: both readings are valid input
      l.push_back(RandomVector<int64_t>(1, 1, 90)[0]);
    }
    shapes.push_back(Shape{count, 4});
    label_shapes.push_back(int64_labels ? Shape{count, 1} : Shape{count});
    values.push_back(v);
    labels.push_back(l);
  }
  b.boxes = MakeBatch<float>(shapes, values);
  if (int64_labels) {
    b.labels = MakeBatch<int64_t>(label_shapes, labels);
  } else {
    std::vector<std::vector<int32_t>> narrow;
    for (const auto& l : labels) narrow.emplace_back(l.begin(), l.end());
    b.labels = MakeBatch<int32_t>(label_shapes, narrow);
  }
}

// `n` images with sides in [lo, hi] (and a zero-sized one when `empty`), with random boxes.
Batch RandomBatch(int n, int lo, int hi, int64_t channels, DType dtype, bool int64_labels, bool empty = false) {
  std::vector<Shape> shapes;
  for (int s = 0; s < n; ++s) {
    shapes.push_back(Shape{RandomVector<int>(1, lo, hi)[0], RandomVector<int>(1, lo, hi)[0], channels});
  }
  if (empty) shapes.back() = Shape{0, 7, channels};
  Batch b{RandomImages(shapes, dtype), {}, {}};
  AddRandomBoxes(b, int64_labels);
  return b;
}

// Every output of one harness run, on the host.
std::vector<TensorListCPU> RunHarness(const OpSpec& spec, Device device, const Batch& b, int64_t iteration,
                                      const TensorListCPU* draws = nullptr) {
  OpHarness h(spec, device, b.images.num_samples());
  h.SetInput(0, b.images);
  h.SetInput(1, b.boxes);
  h.SetInput(2, b.labels);
  if (draws != nullptr) h.SetArgInput("draws", *draws);
  h.set_iteration(iteration);
  h.set_seed(41);
  std::optional<cuda::Stream> stream;
  if (device == Device::kGpu) stream = cuda::Stream::Create();
  if (stream) {
    h.Run(stream->view());
  } else {
    h.Run();
  }
  std::vector<TensorListCPU> out;
  for (size_t o = 0; o < h.descs().size(); ++o) out.push_back(h.OutputToHost(static_cast<int>(o)));
  return out;
}

std::string CompareAll(const std::vector<TensorListCPU>& got, const std::vector<TensorListCPU>& want) {
  if (got.size() != want.size()) return "output counts differ";
  for (size_t o = 0; o < want.size(); ++o) {
    const std::string diff = CompareExact(got[o], want[o]);
    if (!diff.empty()) return "output " + std::to_string(o) + ": " + diff;
  }
  return "";
}

TEST(MosaicGpu, EqualsCpuBitForBit) {
  CONVEYOR_REQUIRE_GPU();
  struct Fill {
    std::vector<double> three, one;
  };
  for (DType t : {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kInt32, DType::kFloat32}) {
    const bool is_float = t == DType::kFloat32;
    const Fill fill = is_float ? Fill{{0.5, -3.25, 1e6}, {-7.5}} : Fill{{1, 2, 3}, {114}};
    for (int64_t c : {1, 3}) {
      // Canvas 48 x 64: sides 1..100 give tiles smaller and larger than it, cut on every side.
      for (int64_t iteration : {0, 1, 7}) {
        const Batch b = RandomBatch(7, 1, 100, c, t, iteration % 2 == 1, iteration == 7);
        OpSpec spec = Mosaic(48, 64).SetArg("ltrb", iteration == 0).SetArg("output_draws", true).AddOutput("draws");
        spec.SetArg("fill_values", c == 3 ? fill.three : fill.one);
        if (iteration == 7) spec.SetArg("center_range", std::vector<double>{0.0, 1.0});
        EXPECT_EQ(CompareAll(RunHarness(spec, Device::kGpu, b, iteration), RunHarness(spec, Device::kCpu, b, iteration)),
                  "")
            << DTypeName(t) << " c=" << c << " iteration " << iteration << " seed " << RngSeed();
      }
    }
  }
}

// The draws of a CPU node fed to a GPU node (a mask following its image): equal to the CPU node fed
// the same, and the draws decide (the GPU node's own stream would differ).
TEST(MosaicGpu, FedDrawsEqualCpu) {
  CONVEYOR_REQUIRE_GPU();
  const Batch b = RandomBatch(6, 5, 60, 1, DType::kInt32, false);
  const OpSpec planner = Mosaic(40, 36).SetArg("output_draws", true).AddOutput("draws");
  const TensorListCPU draws = RunHarness(planner, Device::kCpu, b, 3)[3];
  const OpSpec fed = OpSpec("mosaic", "mask_mosaic").AddInput("m").AddInput("boxes").AddInput("labels")
                         .AddOutput("out").AddOutput("ob").AddOutput("ol")
                         .SetArg("size", std::vector<int64_t>{40, 36}).SetArg("fill_values", std::vector<double>{0})
                         .SetArgInput("draws", "d");
  const std::vector<TensorListCPU> gpu = RunHarness(fed, Device::kGpu, b, 3, &draws);
  EXPECT_EQ(CompareAll(gpu, RunHarness(fed, Device::kCpu, b, 3, &draws)), "") << "seed " << RngSeed();
  // Quadrant 0 of sample s shows sample s at the fed centre: its last pixel sits just above-left of it.
  for (int s = 0; s < 6; ++s) {
    const int64_t cy = At<int32_t>(draws, s, 0), cx = At<int32_t>(draws, s, 1);
    const Shape& is = b.images.shape(s);
    if (cy == 0 || cx == 0) continue;
    EXPECT_EQ(At<int32_t>(gpu[0], s, (cy - 1) * 36 + (cx - 1)), At<int32_t>(b.images, s, is[0] * is[1] - 1))
        << "sample " << s;
  }
}

// --- Geometry: a rectangle painted under each source's box is found again under the moved boxes. ---

constexpr int64_t kCanvasH = 64, kCanvasW = 80;

// Sample s's rectangle colour; the background stays below 40 in channel 0, the fill is 114 grey.
std::array<uint8_t, 3> Colour(int64_t s) {
  return {static_cast<uint8_t>(40 + 20 * s), static_cast<uint8_t>(250 - 15 * s), static_cast<uint8_t>(90 + s)};
}

// n images (sides 16..100: some larger than the canvas) each with one painted rectangle at whole
// pixels, its box (ltrb, normalized) and label s.
Batch PaintedBatch(int n) {
  Batch b;
  std::vector<Shape> shapes;
  for (int s = 0; s < n; ++s) shapes.push_back(Shape{RandomVector<int>(1, 16, 100)[0], RandomVector<int>(1, 16, 100)[0], 3});
  b.images.Resize(shapes, DType::kUInt8);
  b.images.set_layout("HWC");
  std::vector<std::vector<float>> boxes;
  std::vector<std::vector<int32_t>> labels;
  for (int s = 0; s < n; ++s) {
    const int64_t h = shapes[static_cast<size_t>(s)][0], w = shapes[static_cast<size_t>(s)][1];
    const int64_t y0 = RandomVector<int64_t>(1, 0, h - 4)[0], x0 = RandomVector<int64_t>(1, 0, w - 4)[0];
    const int64_t y1 = RandomVector<int64_t>(1, y0 + 2, h)[0], x1 = RandomVector<int64_t>(1, x0 + 2, w)[0];
    auto* px = static_cast<uint8_t*>(b.images.raw_sample(s));
    const std::vector<uint8_t> noise = RandomVector<uint8_t>(static_cast<size_t>(h * w * 3), 0, 39);
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        const bool in = y >= y0 && y < y1 && x >= x0 && x < x1;
        for (int64_t c = 0; c < 3; ++c) {
          const int64_t i = (y * w + x) * 3 + c;
          px[i] = in ? Colour(s)[static_cast<size_t>(c)] : noise[static_cast<size_t>(i)];
        }
      }
    }
    boxes.push_back({float(double(x0) / double(w)), float(double(y0) / double(h)), float(double(x1) / double(w)),
                     float(double(y1) / double(h))});
    labels.push_back({s});
  }
  b.boxes = MakeBatch<float>(std::vector<Shape>(static_cast<size_t>(n), Shape{1, 4}), boxes);
  b.labels = MakeBatch<int32_t>(std::vector<Shape>(static_cast<size_t>(n), Shape{1}), labels);
  return b;
}

// Sample s of a mosaic: every pixel under a kept box has its label's colour, and each colour covers
// exactly the pixels of its label's boxes (so no painted pixel lies outside the boxes). "" when so.
std::string CheckPaintedBoxes(const std::vector<TensorListCPU>& out, int s, int64_t* pixels) {
  const int64_t count = out[1].shape(s)[0];
  std::map<int32_t, int64_t> area;
  for (int64_t k = 0; k < count; ++k) {
    const int32_t label = At<int32_t>(out[2], s, k);
    const auto edge = [&](int i, int64_t side) { return std::llround(double(At<float>(out[1], s, 4 * k + i)) * double(side)); };
    const int64_t l = edge(0, kCanvasW), t = edge(1, kCanvasH), r = edge(2, kCanvasW), b = edge(3, kCanvasH);
    if (r <= l || b <= t) continue;  // kept with a sliver of area from rounding: no whole pixel
    area[label] += (r - l) * (b - t);
    for (int64_t y = t; y < b; ++y) {
      for (int64_t x = l; x < r; ++x) {
        for (int64_t c = 0; c < 3; ++c) {
          if (At<uint8_t>(out[0], s, (y * kCanvasW + x) * 3 + c) != Colour(label)[static_cast<size_t>(c)]) {
            return "sample " + std::to_string(s) + ": pixel (" + std::to_string(y) + ", " + std::to_string(x) +
                   ") under box " + std::to_string(k) + " is not label " + std::to_string(label) + "'s colour";
          }
        }
      }
    }
  }
  std::map<int32_t, int64_t> painted;
  for (int64_t i = 0; i < kCanvasH * kCanvasW; ++i) {
    const uint8_t red = At<uint8_t>(out[0], s, 3 * i);
    if (red >= 40 && red != 114) ++painted[(red - 40) / 20];
  }
  if (painted != area) return "sample " + std::to_string(s) + ": painted pixels per label differ from the boxes' areas";
  for (const auto& [label, n] : area) *pixels += n;
  return "";
}

class MosaicGeometry : public ::testing::TestWithParam<Device> {};

TEST_P(MosaicGeometry, PaintedBoxesAreFoundAgain) {
  if (GetParam() == Device::kGpu) CONVEYOR_REQUIRE_GPU();
  const int n = 8;
  int64_t pixels = 0, boxes = 0;
  for (int64_t iteration = 0; iteration < 6; ++iteration) {
    const Batch b = PaintedBatch(n);
    const OpSpec spec = Mosaic(kCanvasH, kCanvasW).SetArg("ltrb", true).SetArg("center_range", std::vector<double>{0.2, 0.8});
    const std::vector<TensorListCPU> out = RunHarness(spec, GetParam(), b, iteration);
    for (int s = 0; s < n; ++s) {
      EXPECT_EQ(CheckPaintedBoxes(out, s, &pixels), "") << "iteration " << iteration << " seed " << RngSeed();
      boxes += out[1].shape(s)[0];
    }
  }
  // Not vacuous: boxes were kept and a share of the canvases lay under them.
  EXPECT_GT(boxes, n);
  EXPECT_GT(pixels, 6 * n * kCanvasH * kCanvasW / 100);
}

INSTANTIATE_TEST_SUITE_P(Backends, MosaicGeometry, ::testing::Values(Device::kCpu, Device::kGpu),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(DeviceName(info.param));
                         });

// --- A pipeline: captured == eager == CPU. ---

constexpr int kBatch = 6;
constexpr int kIterations = 8;

// mos draws its own mosaic; plan (always CPU) draws another whose draws feed mask_mos, so a GPU mask
// node follows a CPU plan.
std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: mosaic_gpu, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", seed: 13, num_threads: 2, prefetch_depth: 2, graph_capture: " + (capture ? "true" : "false") + "}\n"
         "ops:\n"
         "  - {op: external_source, name: img_src, device: cpu, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}\n"
         "  - {op: external_source, name: mask_src, device: cpu, args: {dtype: int32, ndim: 3, layout: HWC}, outputs: [masks]}\n"
         "  - {op: external_source, name: boxes_src, device: cpu, args: {dtype: float32, ndim: 2}, outputs: [boxes]}\n"
         "  - {op: external_source, name: labels_src, device: cpu, args: {dtype: int64, ndim: 2}, outputs: [labels]}\n"
         "  - {op: mosaic, name: mos, " + d + ", inputs: [images, boxes, labels], args: {size: [72, 88], "
         "fill_values: [1, 2, 3], ltrb: true, output_draws: true}, outputs: [mosaic, mboxes, mlabels, draws]}\n"
         "  - {op: mosaic, name: plan, device: cpu, inputs: [images, boxes, labels], args: {size: [72, 88], "
         "output_draws: true}, outputs: [plan_img, pboxes, plabels, plan_draws]}\n"
         "  - {op: mosaic, name: mask_mos, " + d + ", inputs: [masks, boxes, labels], args: {size: [72, 88], "
         "fill_values: [0], draws: $plan_draws}, outputs: [mask_mosaic, mask_boxes, mask_labels]}\n"
         "outputs: [mosaic, mboxes, mlabels, draws, plan_img, mask_mosaic, mask_boxes, mask_labels]\n";
}

struct Fed {
  Batch batch;
  TensorListCPU masks;
};

// Batches 0..5 fresh (sides 4..60; batch 3 up to 130, so buffers grow and graphs are recaptured),
// 6 and 7 repeat 4 and 5's data: same capacities, so those iterations replay.
std::vector<Fed> MakeAllFed() {
  std::vector<Fed> fed;
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 6) {
      fed.push_back(fed[static_cast<size_t>(k - 2)]);
      continue;
    }
    Fed f{RandomBatch(kBatch, 4, k == 3 ? 130 : 60, 3, DType::kUInt8, true), {}};
    std::vector<Shape> mask_shapes;
    for (const Shape& s : f.batch.images.shapes()) mask_shapes.push_back(Shape{s[0], s[1], 1});
    f.masks.Resize(mask_shapes, DType::kInt32);
    f.masks.set_layout("HWC");
    for (int s = 0; s < kBatch; ++s) {
      for (int64_t i = 0; i < mask_shapes[static_cast<size_t>(s)].num_elements(); ++i) {
        static_cast<int32_t*>(f.masks.raw_sample(s))[i] = 1000 + At<uint8_t>(f.batch.images, s, 3 * i);
      }
    }
    fed.push_back(f);
  }
  return fed;
}

void FeedAll(Pipeline& p, const std::vector<Fed>& fed) {
  for (const Fed& f : fed) {
    p.Feed("img_src", f.batch.images);
    p.Feed("mask_src", f.masks);
    p.Feed("boxes_src", f.batch.boxes);
    p.Feed("labels_src", f.batch.labels);
  }
}

TEST(MosaicGpuPipeline, CapturedEqualsEagerEqualsCpu) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline cpu = Pipeline::FromYaml(Yaml("cpu", false));
  Pipeline eager = Pipeline::FromYaml(Yaml("gpu", false));
  Pipeline captured = Pipeline::FromYaml(Yaml("gpu", true));
  const std::vector<Fed> fed = MakeAllFed();
  for (Pipeline* p : {&cpu, &eager, &captured}) {
    FeedAll(*p, fed);
    p->Build();
  }
  int64_t mask_pixels = 0;
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 2) {
      for (Pipeline* p : {&cpu, &eager, &captured}) p->Run();
    }
    PipelineOutputs a = cpu.Outputs(), b = eager.Outputs(), c = captured.Outputs();
    for (int o = 0; o < 8; ++o) {
      const TensorListCPU want = OutputOnHost(a, o);
      EXPECT_EQ(CompareExact(OutputOnHost(b, o), want), "") << "eager, iteration " << k << ", output " << o;
      EXPECT_EQ(CompareExact(OutputOnHost(c, o), want), "") << "captured, iteration " << k << ", output " << o;
    }
    // The GPU mask node followed the CPU plan: each mask pixel is its image pixel's label, or fill.
    const TensorListCPU plan = OutputOnHost(c, 4), mask = OutputOnHost(c, 5);
    for (int s = 0; s < kBatch; ++s) {
      for (int64_t i = 0; i < 72 * 88; ++i) {
        const int32_t m = At<int32_t>(mask, s, i);
        const int v = At<uint8_t>(plan, s, 3 * i);
        ASSERT_TRUE(m == 1000 + v || (m == 0 && v == 114)) << "iteration " << k << " sample " << s << " pixel " << i;
        mask_pixels += m != 0;
      }
    }
    a.Release();
    b.Release();
    c.Release();
  }
  EXPECT_GT(mask_pixels, 0);
  EXPECT_GT(captured.counters().captures, 0);
  EXPECT_GE(captured.counters().replays, 2);  // iterations 6 and 7 at least
  EXPECT_EQ(eager.counters().captures, 0);
}

}  // namespace
}  // namespace conveyor::testing
