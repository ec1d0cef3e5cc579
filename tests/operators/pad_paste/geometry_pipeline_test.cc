// pad, slice, paste and mosaic in one YAML pipeline through the executor on the CPU:
//
//   external_source images ──> paste (ratio 2) ──> slice (rel_start 0.25, rel_shape 0.5) ──> pad (align 8)
//   external_source boxes, labels ─────────────────────────────────────> mosaic (images: the slice)
//
// The slice of the paste gives the images back (even sizes: the offsets are exact), pad aligns
// them, and the mosaic equals the operator run alone with the pipeline's seed and node name.
#include <gtest/gtest.h>

#include "core/pipeline/pipeline.h"
#include "tests/operators/pad_paste/window_test_util.h"

namespace conveyor::testing {
namespace {

constexpr int kBatch = 4;
constexpr uint64_t kSeed = 9;

const char* kYaml = R"(pipeline: {name: geometry, batch_size: 4, device: cpu, seed: 9, num_threads: 2, prefetch_depth: 1}
ops:
  - {op: external_source, name: src, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}
  - {op: external_source, name: boxes_src, args: {dtype: float32, ndim: 2}, outputs: [boxes]}
  - {op: external_source, name: labels_src, args: {dtype: int32, ndim: 1}, outputs: [labels]}
  - {op: paste, name: paste, inputs: [images], args: {ratio: 2, fill_value: [1, 2, 3]}, outputs: [canvas]}
  - {op: slice, name: slice, inputs: [canvas], args: {rel_start: [0.25, 0.25], rel_shape: [0.5, 0.5]}, outputs: [back]}
  - {op: pad, name: pad, inputs: [back], args: {axes: [0, 1], align: [8], fill_value: 5}, outputs: [aligned]}
  - {op: mosaic, name: mos, inputs: [back, boxes, labels], args: {size: [40, 40], ltrb: true}, outputs: [mosaic, mboxes, mlabels]}
outputs: [back, aligned, mosaic, mboxes, mlabels]
)";

TEST(GeometryPipeline, PasteSliceRoundTripPadAndMosaicOnTheCpu) {
  std::vector<Shape> shapes;
  for (int s = 0; s < kBatch; ++s) shapes.push_back(Shape{2 * RandomVector<int>(1, 1, 15)[0], 2 * RandomVector<int>(1, 1, 15)[0], 3});
  const TensorListCPU images = RandomImages(shapes, DType::kUInt8);
  std::vector<std::vector<float>> box_values(kBatch, std::vector<float>{0.1f, 0.2f, 0.6f, 0.9f});
  std::vector<std::vector<int32_t>> label_values = {{1}, {2}, {3}, {4}};
  const TensorListCPU boxes = MakeBatch<float>(std::vector<Shape>(kBatch, Shape{1, 4}), box_values);
  const TensorListCPU labels = MakeBatch<int32_t>(std::vector<Shape>(kBatch, Shape{1}), label_values);

  Pipeline p = Pipeline::FromYaml(kYaml, "", {.has_gpu = false});
  p.Feed("src", images);
  p.Feed("boxes_src", boxes);
  p.Feed("labels_src", labels);
  p.Build();
  PipelineOutputs out = p.Outputs();
  EXPECT_EQ(CompareExact(out.Cpu(0), images), "");
  int64_t mh = 0, mw = 0;
  for (const Shape& s : shapes) mh = std::max(mh, s[0]), mw = std::max(mw, s[1]);
  for (int s = 0; s < kBatch; ++s) {
    EXPECT_EQ(CheckWindow(out.Cpu(1), images, s, 0, 0, 0, (mh + 7) / 8 * 8, (mw + 7) / 8 * 8, 3, {5}), "");
  }
  OpHarness h(OpSpec("mosaic", "mos").AddInput("back").AddInput("boxes").AddInput("labels").AddOutput("mosaic")
                  .AddOutput("mboxes").AddOutput("mlabels").SetArg("size", std::vector<int64_t>{40, 40})
                  .SetArg("ltrb", true),
              Device::kCpu, kBatch);
  h.SetInput(0, images);
  h.SetInput(1, boxes);
  h.SetInput(2, labels);
  h.set_seed(kSeed);
  h.set_iteration(0);
  h.Run();
  for (int o = 0; o < 3; ++o) EXPECT_EQ(CompareExact(out.Cpu(2 + o), h.OutputToHost(o)), "") << "output " << o;
  out.Release();
}

// A mask follows its image through mosaic in a pipeline: the image node's draws feed the mask node.
TEST(GeometryPipeline, MaskMosaicFollowsTheImageMosaic) {
  const char* yaml = R"(pipeline: {name: mosaic_masks, batch_size: 4, device: cpu, seed: 9, num_threads: 2, prefetch_depth: 1}
ops:
  - {op: external_source, name: src, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}
  - {op: external_source, name: mask_src, args: {dtype: int32, ndim: 3, layout: HWC}, outputs: [masks]}
  - {op: external_source, name: boxes_src, args: {dtype: float32, ndim: 2}, outputs: [boxes]}
  - {op: external_source, name: labels_src, args: {dtype: int32, ndim: 1}, outputs: [labels]}
  - {op: mosaic, name: mos, inputs: [images, boxes, labels], args: {size: [40, 40], output_draws: true},
     outputs: [mosaic, mboxes, mlabels, draws]}
  - {op: mosaic, name: mask_mos, inputs: [masks, boxes, labels], args: {size: [40, 40], fill_values: [0], draws: $draws},
     outputs: [mask_mosaic, unused_boxes, unused_labels]}
outputs: [mosaic, mask_mosaic]
)";
  std::vector<Shape> shapes, mask_shapes;
  for (int s = 0; s < kBatch; ++s) {
    const int h = RandomVector<int>(1, 5, 30)[0], w = RandomVector<int>(1, 5, 30)[0];
    shapes.push_back(Shape{h, w, 1});
    mask_shapes.push_back(Shape{h, w, 1});
  }
  const TensorListCPU images = RandomImages(shapes, DType::kUInt8);
  TensorListCPU masks;
  masks.Resize(mask_shapes, DType::kInt32);
  masks.set_layout("HWC");
  for (int s = 0; s < kBatch; ++s) {
    for (int64_t i = 0; i < mask_shapes[static_cast<size_t>(s)].num_elements(); ++i) {
      static_cast<int32_t*>(masks.raw_sample(s))[i] = 1 + At<uint8_t>(images, s, i);
    }
  }
  Pipeline p = Pipeline::FromYaml(yaml, "", {.has_gpu = false});
  p.Feed("src", images);
  p.Feed("mask_src", masks);
  p.Feed("boxes_src", MakeBatch<float>(std::vector<Shape>(kBatch, Shape{0, 4}), std::vector<std::vector<float>>(kBatch)));
  p.Feed("labels_src", MakeBatch<int32_t>(std::vector<Shape>(kBatch, Shape{0}), std::vector<std::vector<int32_t>>(kBatch)));
  p.Build();
  PipelineOutputs out = p.Outputs();
  for (int s = 0; s < kBatch; ++s) {
    for (int64_t i = 0; i < 40 * 40; ++i) {
      const int32_t m = At<int32_t>(out.Cpu(1), s, i);
      const int v = At<uint8_t>(out.Cpu(0), s, i);
      ASSERT_TRUE(m == 1 + v || (m == 0 && v == 114)) << "sample " << s << " pixel " << i;
    }
  }
  out.Release();
}

}  // namespace
}  // namespace conveyor::testing
