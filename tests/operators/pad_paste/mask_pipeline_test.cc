// Masks follow their images (docs/operators_detection.md, "Masks follow their images"): one YAML
// pipeline takes an image and its int32 label map through the same per-sample crop window
// (random_bbox_crop's anchor/shape -> slice), the same flip (random.coin_flip -> flip's
// horizontal), and resize (linear for the image; the mask cast to float32, resized nearest, cast
// back: exact for labels below 2^24). The images are painted with their mask's labels as colours,
// so after the chain every pixel away from a label boundary must have its mask label's colour.
//
//   boxes, labels ──> random_bbox_crop ──anchor, shape──┐
//   coin_flip ──mirror──────────────────────────────────┼──────────┐
//   images ──> slice ───────────────────────────────────┴─> flip ──┴─> resize (linear) ──> out
//   masks  ──> slice ──> flip ──> cast f32 ──> resize (nearest) ──> cast i32 ──────────> mout
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>

#include "core/cuda/stream.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/operators/pad_paste/window_test_util.h"

namespace conveyor::testing {
namespace {

constexpr int kBatch = 4;
constexpr int kIterations = 12;
constexpr int kOut = 32;     // resize target side
constexpr int kRadius = 3;   // pixels this close to a label boundary may be interpolated

std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  const std::string crop = "rel_start: $anchor, rel_shape: $shape, out_of_bounds_policy: trim_to_shape";
  return "pipeline: {name: masks, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", seed: 5, num_threads: 2, prefetch_depth: 2, graph_capture: " + (capture ? "true" : "false") + "}\n"
         "ops:\n"
         "  - {op: external_source, name: img_src, device: cpu, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}\n"
         "  - {op: external_source, name: mask_src, device: cpu, args: {dtype: int32, ndim: 3, layout: HWC}, outputs: [masks]}\n"
         "  - {op: external_source, name: boxes_src, device: cpu, args: {dtype: float32, ndim: 2}, outputs: [boxes]}\n"
         "  - {op: external_source, name: labels_src, device: cpu, args: {dtype: int32, ndim: 1}, outputs: [labels]}\n"
         "  - {op: random.coin_flip, name: coin, device: cpu, args: {probability: 0.5}, outputs: [mirror]}\n"
         "  - {op: random_bbox_crop, name: crop, device: cpu, inputs: [boxes, labels], args: {thresholds: [0.1, 0.3], "
         "scaling: [0.3, 1.0], aspect_ratio: [0.5, 2.0], ltrb: true}, outputs: [anchor, shape, cboxes, clabels]}\n"
         "  - {op: slice, name: img_slice, " + d + ", inputs: [images], args: {" + crop + "}, outputs: [ic]}\n"
         "  - {op: slice, name: mask_slice, " + d + ", inputs: [masks], args: {" + crop + "}, outputs: [mc]}\n"
         "  - {op: flip, name: img_flip, " + d + ", inputs: [ic], args: {horizontal: $mirror}, outputs: [if]}\n"
         "  - {op: flip, name: mask_flip, " + d + ", inputs: [mc], args: {horizontal: $mirror}, outputs: [mf]}\n"
         "  - {op: resize, name: img_resize, " + d + ", inputs: [if], args: {size: [32, 32]}, outputs: [out]}\n"
         "  - {op: cast, name: to_f32, " + d + ", inputs: [mf], args: {dtype: float32}, outputs: [mff]}\n"
         "  - {op: resize, name: mask_resize, " + d + ", inputs: [mff], args: {size: [32, 32], interp_type: nearest}, "
         "outputs: [mr]}\n"
         "  - {op: cast, name: to_i32, " + d + ", inputs: [mr], args: {dtype: int32}, outputs: [mout]}\n"
         "outputs: [out, mout, mirror, anchor, shape]\n";
}

// A label's colour: distinct for the labels used (injective on 0..8 plus the offset).
std::array<uint8_t, 3> Colour(int32_t label) {
  const int32_t l = label - 70000;
  return {static_cast<uint8_t>(10 + l * 15), static_cast<uint8_t>(250 - l * 13), static_cast<uint8_t>((l * 7) % 16 * 16)};
}

struct Fed {
  TensorListCPU images, masks, boxes, labels;
};

// Labels 70000 + a 3 x 3 grid of blocks (uneven rows; a mirror swaps the columns' labels), the
// image painted with their colours.
Fed MakeFed() {
  std::vector<Shape> shapes, mshapes;
  for (int s = 0; s < kBatch; ++s) {
    const int h = RandomVector<int>(1, 40, 72)[0], w = RandomVector<int>(1, 40, 72)[0];
    shapes.push_back(Shape{h, w, 3});
    mshapes.push_back(Shape{h, w, 1});
  }
  Fed f{RandomImages(shapes, DType::kUInt8), RandomImages(mshapes, DType::kInt32), {}, {}};
  for (int s = 0; s < kBatch; ++s) {
    const int64_t h = shapes[static_cast<size_t>(s)][0], w = shapes[static_cast<size_t>(s)][1];
    auto* img = static_cast<uint8_t*>(f.images.raw_sample(s));
    auto* mask = static_cast<int32_t*>(f.masks.raw_sample(s));
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        const int64_t by = std::min<int64_t>(2, y * y * 3 / (h * h)), bx = std::min<int64_t>(2, x * 3 / w);
        const auto label = static_cast<int32_t>(70000 + by * 3 + bx);
        mask[y * w + x] = label;
        const auto c = Colour(label);
        for (int k = 0; k < 3; ++k) img[(y * w + x) * 3 + k] = c[static_cast<size_t>(k)];
      }
    }
  }
  f.boxes = MakeBatch<float>(std::vector<Shape>(kBatch, Shape{1, 4}),
                             std::vector<std::vector<float>>(kBatch, std::vector<float>{0.2f, 0.1f, 0.7f, 0.6f}));
  f.labels = MakeBatch<int32_t>(std::vector<Shape>(kBatch, Shape{1}), std::vector<std::vector<int32_t>>(kBatch, {1}));
  return f;
}

TensorListCPU Host(const PipelineOutputs& out, int i) {
  if (!out.IsGpu(i)) return out.Cpu(i);
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, out.Gpu(i), stream.view());
  stream.Synchronize();
  return host;
}

// Every pixel whose (2 kRadius + 1)^2 mask neighbourhood holds one label has that label's colour;
// returns the first mismatch ("" when none) and counts the pixels checked.
std::string CheckAligned(const TensorListCPU& images, const TensorListCPU& masks, int s, int64_t* checked) {
  if (images.shape(s) != (Shape{kOut, kOut, 3}) || masks.shape(s) != (Shape{kOut, kOut, 1})) return "shapes";
  for (int64_t y = 0; y < kOut; ++y) {
    for (int64_t x = 0; x < kOut; ++x) {
      const int32_t label = At<int32_t>(masks, s, y * kOut + x);
      bool uniform = true;
      for (int64_t v = std::max<int64_t>(0, y - kRadius); v <= std::min<int64_t>(kOut - 1, y + kRadius); ++v) {
        for (int64_t u = std::max<int64_t>(0, x - kRadius); u <= std::min<int64_t>(kOut - 1, x + kRadius); ++u) {
          uniform = uniform && At<int32_t>(masks, s, v * kOut + u) == label;
        }
      }
      if (!uniform) continue;
      ++*checked;
      const auto c = Colour(label);
      for (int k = 0; k < 3; ++k) {
        if (At<uint8_t>(images, s, (y * kOut + x) * 3 + k) != c[static_cast<size_t>(k)]) {
          return "sample " + std::to_string(s) + " at (" + std::to_string(y) + ", " + std::to_string(x) +
                 "): colour is not label " + std::to_string(label) + "'s";
        }
      }
    }
  }
  return "";
}

void FeedAll(Pipeline& p, const std::vector<Fed>& fed) {
  for (const Fed& f : fed) {
    p.Feed("img_src", f.images);
    p.Feed("mask_src", f.masks);
    p.Feed("boxes_src", f.boxes);
    p.Feed("labels_src", f.labels);
  }
}

std::vector<Fed> MakeAllFed() {
  std::vector<Fed> fed;
  for (int k = 0; k < kIterations; ++k) fed.push_back(MakeFed());
  return fed;
}

TEST(MaskPipeline, MasksFollowTheirImagesOnTheCpu) {
  Pipeline p = Pipeline::FromYaml(Yaml("cpu", false), "", {.has_gpu = false});
  FeedAll(p, MakeAllFed());
  p.Build();
  int64_t checked = 0, flips = 0, crops = 0;
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 2) p.Run();
    PipelineOutputs out = p.Outputs();
    const TensorListCPU images = Host(out, 0), masks = Host(out, 1), mirror = Host(out, 2), shape = Host(out, 4);
    for (int s = 0; s < kBatch; ++s) {
      EXPECT_EQ(CheckAligned(images, masks, s, &checked), "") << "iteration " << k;
      flips += At<int32_t>(mirror, s, 0);
      crops += At<float>(shape, s, 0) < 1.0f || At<float>(shape, s, 1) < 1.0f;
    }
    out.Release();
  }
  // Not vacuous: most pixels were checked, and flips and proper crops both happened.
  EXPECT_GT(checked, kIterations * kBatch * kOut * kOut / 4);
  EXPECT_GT(flips, 0);
  EXPECT_LT(flips, kIterations * kBatch);
  EXPECT_GT(crops, 0);
}

// The same chain on the GPU (captured): equal to the CPU pipeline byte for byte, and aligned.
TEST(MaskPipelineGpu, CapturedEqualsCpuAndMasksFollow) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline cpu = Pipeline::FromYaml(Yaml("cpu", false));
  Pipeline gpu = Pipeline::FromYaml(Yaml("gpu", true));
  const std::vector<Fed> fed = MakeAllFed();
  FeedAll(cpu, fed);
  FeedAll(gpu, fed);
  cpu.Build();
  gpu.Build();
  int64_t checked = 0;
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 2) {
      cpu.Run();
      gpu.Run();
    }
    PipelineOutputs a = cpu.Outputs(), b = gpu.Outputs();
    const TensorListCPU images = Host(b, 0), masks = Host(b, 1);
    EXPECT_EQ(CompareExact(images, Host(a, 0)), "") << "iteration " << k;
    EXPECT_EQ(CompareExact(masks, Host(a, 1)), "") << "iteration " << k;
    for (int s = 0; s < kBatch; ++s) EXPECT_EQ(CheckAligned(images, masks, s, &checked), "") << "iteration " << k;
    a.Release();
    b.Release();
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace conveyor::testing
