// filter on the GPU against the CPU reference (filter_test checks that against a direct
// correlation): bit-identical for every border mode and dtype pair with per-sample filters (up to
// 31x31), anchors and fills on fresh random images spanning many tiles; and inside a pipeline with
// graph capture, images and filters of varying sizes fed per iteration, equal to the CPU pipeline.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/filters/filter_testing.h"
#include "tests/util/pipeline_outputs.h"

namespace conveyor::testing {
namespace {

TEST(FilterGpu, MatchesCpuBitExactlyForEveryBorderAndDtype) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<std::pair<DType, std::string>> pairs = {
      {DType::kUInt8, "same"}, {DType::kUInt8, "float32"}, {DType::kFloat32, "same"}};
  int64_t channels = 1;
  for (const std::string& border : kFilterBorders) {
    for (const auto& [type, dtype] : pairs) {
      SCOPED_TRACE(border + " " + std::string(DTypeName(type)) + " -> " + dtype);
      channels = channels % 4 + 1;  // 1..4 over the cases
      std::vector<Shape> shapes = RandomHwcShapes(4, 1, 70, 120, channels);
      shapes.push_back(Shape{1, 1, channels});    // every tap but the centre through the border
      shapes.push_back(Shape{150, 9, channels});  // narrower than a tile, several tiles tall
      shapes.push_back(Shape{0, 5, channels});    // empty
      const int n = static_cast<int>(shapes.size());
      const TensorListCPU in = RandomBatch(shapes, type, "HWC", -1.f, 1.f);
      const TensorListCPU filters = RandomFilters(n, 31);
      std::vector<float> fills = RandomVector<float>(static_cast<size_t>(n), 0.f, 255.f);
      const OpSpec spec = FilterSpec().SetArgInput("filter", "k").SetArgInput("anchor", "a")
                              .SetArgInput("fill_value", "v").SetArg("border", border).SetArg("dtype", dtype);
      const ArgInputs args = {{"filter", filters}, {"anchor", RandomAnchors(filters)}, {"fill_value", PerSampleScalars(fills)}};
      ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args), "per-sample filters");
    }
  }
}

TEST(FilterGpu, LargestAndOneDimensionalFiltersMatchCpu) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU in = RandomBatch({Shape{97, 131, 3}, Shape{31, 31, 1}, Shape{2, 40, 4}}, DType::kUInt8, "HWC");
  for (const std::vector<int64_t>& extent : {std::vector<int64_t>{31, 31}, {1, 31}, {31, 1}}) {
    const std::vector<float> w = RandomVector<float>(static_cast<size_t>(extent[0] * extent[1]), -0.1f, 0.1f);
    for (const std::string& border : kFilterBorders) {
      const OpSpec spec = FilterSpec()
                              .SetArg("filter", std::vector<double>(w.begin(), w.end()))
                              .SetArg("filter_shape", extent)
                              .SetArg("border", border)
                              .SetArg("fill_value", 17.0);
      ExpectSameBytes(RunOp(spec, Device::kGpu, in), RunOp(spec, Device::kCpu, in),
                      border + " " + std::to_string(extent[0]) + "x" + std::to_string(extent[1]));
    }
  }
}

constexpr int kBatch = 4;
constexpr int kIterations = 12;

// Images of varying sizes and a filter of varying extents per sample, fed each iteration; two
// filter nodes (constant border to float32, reflect_1001 to uint8).
std::string Yaml(const std::string& device, bool capture) {
  const std::string d = "device: " + device;
  return "pipeline: {name: filters, batch_size: " + std::to_string(kBatch) + ", " + d +
         ", num_threads: 2, prefetch_depth: 2, seed: 5, graph_capture: " + (capture ? "true" : "false") +
         "}\nops:\n"
         "  - {op: external_source, name: in, device: cpu, args: {dtype: uint8, layout: HWC, ndim: 3}, outputs: [x]}\n"
         "  - {op: external_source, name: k, device: cpu, args: {dtype: float32, ndim: 2}, outputs: [kernels]}\n"
         "  - {op: filter, name: f1, " + d + ", inputs: [x], args: {filter: $kernels, border: constant, "
         "fill_value: 9, dtype: float32}, outputs: [a]}\n"
         "  - {op: filter, name: f2, " + d + ", inputs: [x], args: {filter: $kernels, border: reflect_1001, "
         "anchor: [0]}, outputs: [b]}\n"
         "outputs: [a, b]\n";
}

TEST(FilterGpu, CapturedPipelineEqualsCpuPipelineOverVaryingSizes) {
  CONVEYOR_REQUIRE_GPU();
  Pipeline cpu = Pipeline::FromYaml(Yaml("cpu", false));
  Pipeline captured = Pipeline::FromYaml(Yaml("gpu", true));
  for (int k = 0; k < kIterations; ++k) {
    const TensorListCPU images = RandomBatch(RandomHwcShapes(kBatch, 1, 80, 80, 3), DType::kUInt8, "HWC");
    const TensorListCPU kernels = RandomFilters(kBatch, 9);
    cpu.Feed("in", images);
    cpu.Feed("k", kernels);
    captured.Feed("in", images);
    captured.Feed("k", kernels);
  }
  cpu.Build();
  captured.Build();
  for (int k = 0; k < kIterations; ++k) {
    if (k >= 2) {
      cpu.Run();
      captured.Run();
    }
    PipelineOutputs want = cpu.Outputs(), got = captured.Outputs();
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(testing::OutputOnHost(want, i).num_samples(), kBatch);
      ExpectSameBytes(testing::OutputOnHost(got, i), testing::OutputOnHost(want, i),
                      "iteration " + std::to_string(k) + " output " + std::to_string(i));
    }
    want.Release();
    got.Release();
  }
  EXPECT_GE(captured.counters().captures, 1);
  EXPECT_GE(captured.counters().replays + captured.counters().captures, kIterations);
}

INSTANTIATE_TEST_SUITE_P(
    FilterGpu, OperatorConformance,
    ::testing::Values(ConformanceCase{"gpu", FilterSpec().SetArg("filter", std::vector<double>(25, 1.0 / 25)),
                                      Device::kGpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu_f32", FilterSpec().SetArg("filter", std::vector<double>(9, 0.5))
                                                     .SetArg("border", "constant").SetArg("fill_value", -2.0),
                                      Device::kGpu, DType::kFloat32, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
