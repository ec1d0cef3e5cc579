// op: math in YAML pipelines through the executor: a per-sample random gain fed as $gain into s0,
// applied to the images and saturated to uint8, checked against the formula computed here; on the
// CPU, and on the GPU captured over many iterations of changing sizes (GPU case skips without one).
// A bad expression in the file is reported at its position.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/pipeline/pipeline.h"
#include "tests/operators/math/math_test_util.h"

namespace conveyor::testing {
namespace {

constexpr int kBatch = 3;

std::string Yaml(const std::string& device, bool capture, const std::string& expr) {
  return "pipeline: {name: contrast, batch_size: 3, device: " + device + ", seed: 5, num_threads: 2, prefetch_depth: 2, "
         "graph_capture: " + (capture ? "true" : "false") + "}\n"
         "ops:\n"
         "  - {op: external_source, name: src, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}\n"
         "  - {op: random.uniform, name: u, args: {range: [0.5, 1.5]}, outputs: [gain]}\n"
         "  - op: math\n"
         "    name: contrast\n"
         "    device: " + device + "\n"
         "    inputs: [images]\n"
         "    args: {expr: \"" + expr + "\", s0: $gain, dtype: uint8}\n"
         "    outputs: [adjusted]\n" +
         (device == "gpu" ? "  - {op: to_host, name: back, inputs: [adjusted], outputs: [adjusted_host]}\n"
                            "outputs: [adjusted_host, gain]\n"
                          : "outputs: [adjusted, gain]\n");
}

const char* kExpr = "clamp((images - 128) * s0 + 128, 0, 255)";

// (int32(v) - 128) -> float32 * gain + 128, clamped, rounded half to even.
void ExpectContrast(const TensorListCPU& out, const TensorListCPU& in, const TensorListCPU& gain) {
  ASSERT_EQ(out.shapes(), in.shapes());
  ASSERT_EQ(out.dtype(), DType::kUInt8);
  EXPECT_EQ(out.layout(), Layout("HWC"));
  for (int s = 0; s < in.num_samples(); ++s) {
    const float g = static_cast<float>(Element(gain, s, 0));
    for (int64_t j = 0; j < in.shape(s).num_elements(); ++j) {
      const float v = static_cast<float>(static_cast<int32_t>(Element(in, s, j)) - 128) * g + 128.f;
      ASSERT_EQ(Element(out, s, j), std::nearbyint(std::min(std::max(v, 0.f), 255.f))) << "sample " << s << " element " << j;
    }
  }
}

TensorListCPU Images() {
  std::vector<Shape> shapes;
  for (int s = 0; s < kBatch; ++s) shapes.push_back(Shape{RandomVector<int64_t>(1, 1, 40)[0], RandomVector<int64_t>(1, 1, 40)[0], 3});
  return RandomTyped(shapes, DType::kUInt8, "HWC");
}

void RunPipeline(const std::string& device, bool capture, int iterations) {
  Pipeline p = Pipeline::FromYaml(Yaml(device, capture, kExpr), "", {.has_gpu = device == "gpu"});
  std::vector<TensorListCPU> fed;
  for (int k = 0; k < 2; ++k) {
    fed.push_back(Images());
    p.Feed("src", fed.back());
  }
  p.Build();
  for (int k = 0; k < iterations; ++k) {
    PipelineOutputs out = p.Outputs();
    out.Sync();  // the GPU pipeline's images come back through to_host (pinned)
    ExpectContrast(out.Cpu(0), fed[static_cast<size_t>(k)], out.Cpu(1));
    out.Release();
    if (::testing::Test::HasFailure()) return;
    fed.push_back(Images());
    p.Feed("src", fed.back());
    p.Run();
  }
}

TEST(MathPipeline, PerSampleGainOnTheCpu) { RunPipeline("cpu", false, 5); }

TEST(MathPipeline, CapturedOnTheGpu) {
  CONVEYOR_REQUIRE_GPU();
  RunPipeline("gpu", true, 30);
}

// Two tensors by name (needs core's OpSchema::RepeatLastInput; before it, math takes one input).
TEST(MathPipeline, TwoInputsByName) {
  Pipeline p = Pipeline::FromYaml(R"(pipeline: {name: blend, batch_size: 2, device: cpu, num_threads: 2, prefetch_depth: 1}
ops:
  - {op: external_source, name: a, args: {dtype: uint8, ndim: 3, layout: HWC}, outputs: [images]}
  - {op: external_source, name: b, args: {dtype: float32, ndim: 1}, outputs: [gains]}
  - {op: math, name: blend, inputs: [images, gains], args: {expr: "images * gains"}, outputs: [out]}
outputs: [out]
)",
                                  "", {.has_gpu = false});
  const TensorListCPU images = RandomTyped({Shape{3, 4, 3}, Shape{1, 2, 3}}, DType::kUInt8, "HWC");
  const TensorListCPU gains = RandomTyped({Shape{3}, Shape{3}}, DType::kFloat32, "");
  p.Feed("a", images);
  p.Feed("b", gains);
  p.Build();
  PipelineOutputs out = p.Outputs();
  ExpectSameBytes(out.Cpu(0), RunMulti(Math("images * gains", {"images", "gains"}), Device::kCpu, {images, gains}), "blend");
}

TEST(MathPipeline, ABadExpressionIsReportedAtItsArgument) {
  try {
    Pipeline p = Pipeline::FromYaml(Yaml("cpu", false, "clamp((images - 128) * s0 + , 0, 255)"), "", {.has_gpu = false});
    p.Build();
    ADD_FAILURE() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(":9:"));  // the args line
    EXPECT_THAT(e.what(), ::testing::HasSubstr("op \"math\" (contrast): argument \"expr\": at column 29 of "
                                               "\"clamp((images - 128) * s0 + , 0, 255)\": expected a number, a name or "
                                               "\"(\", got \",\""));
  }
}

}  // namespace
}  // namespace conveyor::testing
