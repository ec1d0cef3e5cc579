#include "tests/conformance/conformance.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/cuda/stream.h"
#include "core/op/harness.h"
#include "core/pipeline/yaml_loader.h"
#include "core/tensor/half.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"

namespace conveyor::testing {

std::string CaseName(const ::testing::TestParamInfo<ConformanceCase>& info) { return info.param.name; }

namespace {

// Random bytes reinterpreted per dtype would give NaNs and huge values; draw per dtype instead.
TensorListCPU RandomInput(const std::vector<Shape>& shapes, DType dtype, const Layout& layout) {
  TensorListCPU list;
  list.Resize(shapes, dtype);
  for (int s = 0; s < list.num_samples(); ++s) {
    const size_t n = static_cast<size_t>(shapes[static_cast<size_t>(s)].num_elements());
    if (n == 0) continue;  // an empty sample: nothing to draw (memcpy from an empty vector's null data())
    void* dst = list.raw_sample(s);
    switch (dtype) {
      case DType::kFloat32: {
        auto v = RandomVector<float>(n, -50.f, 50.f);
        std::memcpy(dst, v.data(), n * sizeof(float));
        break;
      }
      case DType::kInt32: {
        auto v = RandomVector<int32_t>(n, -1000, 1000);
        std::memcpy(dst, v.data(), n * sizeof(int32_t));
        break;
      }
      case DType::kUInt8: {
        auto v = RandomVector<uint8_t>(n, 0, 255);
        std::memcpy(dst, v.data(), n);
        break;
      }
      default:
        ADD_FAILURE() << "conformance: add random data for " << DTypeName(dtype);
    }
  }
  list.set_layout(layout);
  return list;
}

double ElementAsDouble(const TensorCPU& t, int64_t i) {
  const void* p = t.raw_data();
  switch (t.dtype()) {
    case DType::kBool: return static_cast<const bool*>(p)[i] ? 1 : 0;
    case DType::kUInt8: return static_cast<const uint8_t*>(p)[i];
    case DType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(p)[i];
    case DType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::kFloat16: return HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: return BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[i]);
    case DType::kFloat32: return static_cast<const float*>(p)[i];
    case DType::kFloat64: return static_cast<const double*>(p)[i];
  }
  return 0;
}

// The case's sample shapes: {h, w} plus the channel extent when the case has one.
std::vector<Shape> CaseShapes(const ConformanceCase& c, const std::vector<Shape>& hw) {
  std::vector<Shape> shapes = hw;
  if (c.channels > 0) {
    for (Shape& s : shapes) s = Shape{s[0], s[1], c.channels};
  }
  return shapes;
}

// Bytes equal, or (with a tolerance) every element within it, compared as doubles.
void ExpectSampleNear(const TensorListCPU& got, const TensorListCPU& want, int s, double tolerance,
                      const std::string& what) {
  const int64_t n = want.shape(s).num_elements();
  if (tolerance == 0) {
    EXPECT_EQ(std::memcmp(got.raw_sample(s), want.raw_sample(s), static_cast<size_t>(n) * DTypeSize(want.dtype())), 0)
        << what;
    return;
  }
  const TensorCPU g = got[s], w = want[s];
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::abs(ElementAsDouble(g, i) - ElementAsDouble(w, i));
    if (!(d <= tolerance)) ++bad;
    worst = std::max(worst, d);
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << n << " elements differ by more than " << tolerance
                    << " (largest " << worst << ")";
}

// A harness with fresh random inputs of `shapes`; the host inputs go to `inputs` when asked.
std::unique_ptr<OpHarness> MakeHarness(const ConformanceCase& c, Device device, const std::vector<Shape>& shapes,
                                       std::vector<TensorListCPU>* inputs = nullptr) {
  auto h = std::make_unique<OpHarness>(c.spec, device, static_cast<int>(shapes.size()));
  for (size_t i = 0; i < c.spec.inputs().size(); ++i) {
    TensorListCPU in = RandomInput(shapes, c.input_dtype, c.layout);
    if (inputs) inputs->push_back(in);
    h->SetInput(static_cast<int>(i), std::move(in));
  }
  h->set_batch_size(static_cast<int>(shapes.size()));
  return h;
}

void RunOn(OpHarness& h, Device device, std::optional<cuda::Stream>& stream) {
  if (device == Device::kGpu) {
    stream = cuda::Stream::Create();
    h.Run(stream->view());
  } else {
    h.Run();
  }
}

}  // namespace

TEST_P(OperatorConformance, SchemaRoundTripThroughYaml) {
  const ConformanceCase& c = GetParam();
  PipelineSpec spec;
  OpSpec op = c.spec;
  op.set_device(c.device == Device::kGpu ? DeviceRequest::kGpu : DeviceRequest::kCpu);
  // Every argument written out explicitly, defaults included, must come back typed the same.
  for (const ArgSchema& arg : op.schema().args()) {
    if (!op.HasArg(arg.name) && arg.default_value && op.arg_inputs().count(arg.name) == 0) {
      op.SetArg(arg.name, *arg.default_value);
    }
  }
  spec.ops.push_back(op);
  spec.outputs = op.outputs();
  const PipelineSpec again = ParsePipelineYaml(ToYaml(spec), "<conformance>");
  ASSERT_EQ(again.ops.size(), 1u);
  EXPECT_EQ(again.ops[0], op) << ToYaml(spec);
}

TEST_P(OperatorConformance, EmptyBatch) {
  const ConformanceCase& c = GetParam();
  if (c.device == Device::kGpu) CONVEYOR_REQUIRE_GPU();
  std::unique_ptr<OpHarness> h = MakeHarness(c, c.device, {});
  std::optional<cuda::Stream> stream;
  RunOn(*h, c.device, stream);
  for (size_t j = 0; j < c.spec.outputs().size(); ++j) {
    EXPECT_EQ(h->OutputToHost(static_cast<int>(j)).num_samples(), 0) << "output " << j;
  }
}

TEST_P(OperatorConformance, ZeroSizedSample) {
  const ConformanceCase& c = GetParam();
  if (c.device == Device::kGpu) CONVEYOR_REQUIRE_GPU();
  if (c.spec.inputs().empty()) GTEST_SKIP() << "a source operator: its sample shapes come from arguments";
  if (!c.zero_sized_samples) GTEST_SKIP() << "the operator rejects zero-sized samples by contract";
  std::unique_ptr<OpHarness> h = MakeHarness(c, c.device, CaseShapes(c, {{3, 4}, {0, 4}, {2, 5}}));
  std::optional<cuda::Stream> stream;
  RunOn(*h, c.device, stream);
  for (size_t j = 0; j < c.spec.outputs().size(); ++j) {
    const TensorListCPU out = h->OutputToHost(static_cast<int>(j));
    ASSERT_EQ(out.num_samples(), 3);
    EXPECT_EQ(out.shape(1).num_elements(), 0);
    EXPECT_GT(out.shape(2).num_elements(), 0);
  }
}

TEST_P(OperatorConformance, RunsOnGivenStreamOnly) {
  const ConformanceCase& c = GetParam();
  if (c.device != Device::kGpu) GTEST_SKIP() << "CPU case";
  if (!c.random_data) GTEST_SKIP() << "the operator rejects random data by contract: its own test checks the stream";
  CONVEYOR_REQUIRE_GPU();
  CONVEYOR_SKIP_UNDER_SANITIZER();
  const std::vector<Shape> shapes = CaseShapes(c, {{31, 7}, {1, 1}, {128, 3}});
  std::vector<TensorListCPU> inputs;
  std::unique_ptr<OpHarness> gpu = MakeHarness(c, Device::kGpu, shapes, &inputs);
  cuda::Stream stream = cuda::Stream::Create();
  gpu->Run(stream.view());  // warm-up: first allocations and pinned descriptor buffers
  stream.Synchronize();

  // Anything queued on the legacy default stream now waits ~1 s behind the spin.
  SpinGpu(1000.0, cuda::StreamView::Legacy());
  gpu->Run(stream.view());
  std::vector<TensorListCPU> outputs;
  for (size_t j = 0; j < c.spec.outputs().size(); ++j) outputs.push_back(gpu->OutputToHost(static_cast<int>(j)));
  const bool spin_still_running = !cuda::StreamView::Legacy().Query();
  cuda::StreamView::Legacy().Synchronize();
  EXPECT_TRUE(spin_still_running) << "the run took as long as the spin: did it use the legacy default stream?";

  for (size_t j = 0; j < outputs.size(); ++j) {
    TensorListCPU want = inputs.empty() ? TensorListCPU() : inputs[0];  // transfer ops: the input itself
    if (c.reference_is_cpu) {
      OpHarness cpu(c.spec, Device::kCpu, static_cast<int>(shapes.size()));
      for (size_t i = 0; i < inputs.size(); ++i) cpu.SetInput(static_cast<int>(i), inputs[i]);
      cpu.Run();
      want = cpu.OutputToHost(static_cast<int>(j));
    }
    ASSERT_EQ(outputs[j].shapes(), want.shapes());
    ASSERT_EQ(outputs[j].dtype(), want.dtype());
    for (int s = 0; s < want.num_samples(); ++s) {
      ExpectSampleNear(outputs[j], want, s, c.tolerance, "output " + std::to_string(j) + " sample " + std::to_string(s));
    }
  }
}

}  // namespace conveyor::testing
