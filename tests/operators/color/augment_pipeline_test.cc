// A CPU pipeline chaining the augmentation operators (hsv, color_twist, gamma, gaussian_blur,
// sharpness, equalize, noise.gaussian, erase) with random per-sample arguments (random.uniform → `$name`): the same seed gives the same bytes in two separate runs, and
// iterations differ from each other.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/pipeline/pipeline.h"

namespace conveyor {
namespace {

constexpr char kYaml[] = R"(
pipeline: {name: augment_test, batch_size: 3, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 77}
ops:
  - {op: external_source, name: frames, args: {dtype: uint8, layout: HWC, ndim: 3}, outputs: [frames]}
  - {op: random.uniform, name: hue_draw, args: {range: [-30.0, 30.0]}, outputs: [hue]}
  - {op: random.uniform, name: sat_draw, args: {range: [0.5, 1.5]}, outputs: [sat]}
  - {op: random.uniform, name: sigma_draw, args: {range: [0.5, 2.0]}, outputs: [sigma]}
  - {op: random.uniform, name: std_draw, args: {range: [1.0, 10.0]}, outputs: [std]}
  - {op: random.uniform, name: anchor_draw, args: {range: [0.0, 12.0], shape: [2]}, outputs: [anchor]}
  - {op: random.uniform, name: gamma_draw, args: {range: [0.7, 1.4]}, outputs: [gamma]}
  - {op: random.uniform, name: sharp_draw, args: {range: [0.0, 2.0]}, outputs: [sharp]}
  - {op: hsv, name: hsv, inputs: [frames], args: {hue: $hue, saturation: $sat}, outputs: [a]}
  - {op: color_twist, name: twist, inputs: [a], args: {contrast: 1.2, hue: $hue}, outputs: [b]}
  - {op: gamma, name: gamma, inputs: [b], args: {gamma: $gamma}, outputs: [c]}
  - {op: gaussian_blur, name: blur, inputs: [c], args: {sigma: $sigma}, outputs: [d]}
  - {op: sharpness, name: sharpen, inputs: [d], args: {factor: $sharp}, outputs: [d2]}
  - {op: equalize, name: equalize, inputs: [d2], outputs: [d3]}
  - {op: noise.gaussian, name: noise, inputs: [d3], args: {stddev: $std}, outputs: [e]}
  - {op: erase, name: erase, inputs: [e], args: {anchor: $anchor, shape: [6, 8], fill_value: [0, 128, 255]}, outputs: [out]}
outputs: [out]
)";

TensorListCPU Frames(int iteration) {
  TensorListCPU list;
  list.Resize({Shape{24, 32, 3}, Shape{17, 20, 3}, Shape{30, 9, 3}}, DType::kUInt8);
  list.set_layout("HWC");
  for (int s = 0; s < 3; ++s) {
    uint8_t* p = static_cast<uint8_t*>(list.raw_sample(s));
    for (int64_t j = 0; j < list.shape(s).num_elements(); ++j) p[j] = static_cast<uint8_t>((j * 37 + s * 11 + iteration * 5) % 251);
  }
  return list;
}

std::vector<std::vector<uint8_t>> RunIterations(int iterations) {
  Pipeline p = Pipeline::FromYaml(kYaml);
  for (int k = 0; k < iterations; ++k) p.Feed("frames", Frames(k));
  p.Build();
  std::vector<std::vector<uint8_t>> bytes;
  for (int k = 0; k < iterations; ++k) {
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& t = out.Cpu(out.Index("out"));
    EXPECT_EQ(t.dtype(), DType::kUInt8);
    EXPECT_EQ(t.num_samples(), 3);
    std::vector<uint8_t> all;
    for (int s = 0; s < t.num_samples(); ++s) {
      const uint8_t* d = static_cast<const uint8_t*>(t.raw_sample(s));
      all.insert(all.end(), d, d + t.shape(s).num_elements());
    }
    bytes.push_back(std::move(all));
    out.Release();
    if (k + 2 < iterations) p.Run();
  }
  return bytes;
}

TEST(AugmentPipeline, DeterministicAcrossRunsAndVariesAcrossIterations) {
  const auto first = RunIterations(3);
  const auto second = RunIterations(3);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first, second);
  EXPECT_NE(first[0], first[1]);
  // The erased box of sample 0 (6 x 8 at a random anchor inside the image) holds the fill (0, 128, 255).
  int fills = 0;
  for (size_t j = 0; j + 2 < first[0].size() && j < 24 * 32 * 3; j += 3) {
    fills += first[0][j] == 0 && first[0][j + 1] == 128 && first[0][j + 2] == 255;
  }
  EXPECT_GE(fills, 6 * 8 / 4);  // at least part of the box lies inside (anchor < 12 in a 24 x 32 image)
}

}  // namespace
}  // namespace conveyor
