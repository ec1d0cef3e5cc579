// The geometry operators in a YAML pipeline through the executor:
//
//   random.uniform angles ──> transforms.rotation (about a centre) ──> transforms.translation ──mt──┐
//   external_source images ──────────────────────────────────────> warp_affine (matrix: $mt, inverse_map: false)
//                          ├──> rotate (angle: $angles) ──> jitter
//
// CPU: the warp equals the reference warp by the inverse of the matrix the test composes itself
// from the drawn angle, and the matrix output equals it. GPU (tag gpu): the same pipeline with the
// image nodes on the GPU and graph capture, equal to the CPU pipeline byte for byte at every
// iteration while angles, draws and image sizes change (replays must read new descriptors); its
// image outputs come to the host through to_host nodes.
#include <gtest/gtest.h>

#include "core/pipeline/graph.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/yaml_loader.h"
#include "tests/operators/geometry/geometry_testing.h"

namespace conveyor::testing {
namespace {

constexpr int kBatch = 4;
constexpr int kIterations = 6;

std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: geometry_warp, batch_size: 4, " + d + ", seed: 3, num_threads: 2, prefetch_depth: 2, "
         "graph_capture: " + (capture ? "true" : "false") + "}\n"
         "ops:\n"
         "  - {op: external_source, name: src, device: cpu, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}\n"
         "  - {op: random.uniform, name: draw, device: cpu, args: {range: [-45, 45]}, outputs: [angles]}\n"
         "  - {op: transforms.rotation, name: turn, args: {angle: $angles, center: [16, 12]}, outputs: [mt_turn]}\n"
         "  - {op: transforms.translation, name: shift, args: {offset: [3, -2], transform: $mt_turn}, outputs: [mt]}\n"
         "  - {op: warp_affine, name: warp, " + d + ", inputs: [images], args: {matrix: $mt, inverse_map: false, "
         "fill_value: [0, 128, 255]}, outputs: [warped]}\n"
         "  - {op: rotate, name: rot, " + d + ", inputs: [images], args: {angle: $angles, interp_type: cubic}, outputs: [rotated]}\n"
         "  - {op: jitter, name: jit, " + d + ", inputs: [rotated], args: {nDegree: 3}, outputs: [jittered]}\n" +
         (device == "gpu" ? "  - {op: to_host, name: warped_host, device: gpu, inputs: [warped], outputs: [warped_h]}\n"
                            "  - {op: to_host, name: jittered_host, device: gpu, inputs: [jittered], outputs: [jittered_h]}\n"
                            "outputs: [warped_h, mt, angles, jittered_h]\n"
                          : "outputs: [warped, mt, angles, jittered]\n");
}

std::vector<TensorListCPU> FeedAll(std::vector<Pipeline*> pipelines) {
  std::vector<TensorListCPU> fed;
  for (int k = 0; k < kIterations; ++k) {
    // The largest images first (so most later iterations fit the capacity and replay), then any size.
    const std::vector<Shape> shapes = k < 2 ? std::vector<Shape>(kBatch, Shape{40, 50, 3}) : RandomHwcShapes(kBatch, 1, 40, 50, 3);
    fed.push_back(RandomBatch(shapes, DType::kUInt8, "HWC"));
    for (Pipeline* p : pipelines) p->Feed("src", fed.back());
  }
  return fed;
}

// The forward map the pipeline composes: translation (3, -2) after a rotation by `deg` about (16, 12).
Matrix Forward(double deg) {
  const double a = deg * M_PI / 180, c = std::cos(a), s = std::sin(a);
  return {c, -s, 16 - c * 16 + s * 12 + 3, s, c, 12 - s * 16 - c * 12 - 2};
}

TEST(GeometryPipeline, TransformsFeedWarpAffineOnTheCpu) {
  Pipeline p = Pipeline::FromYaml(Yaml("cpu", false), "", {.has_gpu = false});
  const std::vector<TensorListCPU> fed = FeedAll({&p});
  p.Build();
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 2) p.Run();
    PipelineOutputs out = p.Outputs();
    const TensorListCPU &warped = out.Cpu(0), &mt = out.Cpu(1), &angles = out.Cpu(2), &jittered = out.Cpu(3);
    for (int s = 0; s < kBatch; ++s) {
      const Matrix forward = Forward(At(angles, s, 0));
      for (int j = 0; j < 6; ++j) ASSERT_NEAR(At(mt, s, j), forward[static_cast<size_t>(j)], 1e-4) << "iteration " << k;
      ASSERT_EQ(warped.shape(s), fed[static_cast<size_t>(k)].shape(s));
      Matrix f32;
      for (int j = 0; j < 6; ++j) f32[static_cast<size_t>(j)] = At(mt, s, j);
      ExpectWarpMatches(fed[static_cast<size_t>(k)], warped, s, Inverse(f32), "linear", {0, 128, 255},
                        "iteration " + std::to_string(k));
      EXPECT_EQ(jittered.shape(s)[2], 3);
    }
    out.Release();
  }
}

// The GPU variant's graph (devices, per-sample arguments from CPU nodes into GPU nodes, to_host)
// is checked on any machine; it runs below where there is a GPU.
TEST(GeometryPipeline, GpuGraphIsValid) {
  const Graph graph = Graph::Build(ParsePipelineYaml(Yaml("gpu", true)), {.has_gpu = true});
  EXPECT_EQ(graph.device(), Device::kGpu);
}

TEST(GeometryPipelineGpu, CapturedEqualsCpu) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline cpu = Pipeline::FromYaml(Yaml("cpu", false));
  Pipeline gpu = Pipeline::FromYaml(Yaml("gpu", true));
  FeedAll({&cpu, &gpu});
  cpu.Build();
  gpu.Build();
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 2) {
      cpu.Run();
      gpu.Run();
    }
    PipelineOutputs a = cpu.Outputs(), b = gpu.Outputs();
    b.Sync();  // to_host's copies run on the GPU stream
    for (int i = 0; i < 4; ++i) {
      ExpectSameBytes(b.Cpu(i), a.Cpu(i), "iteration " + std::to_string(k) + " output " + std::to_string(i));
    }
    a.Release();
    b.Release();
  }
  EXPECT_GT(gpu.counters().captures, 0);
  EXPECT_GE(gpu.counters().replays, kIterations);
}

}  // namespace
}  // namespace conveyor::testing
