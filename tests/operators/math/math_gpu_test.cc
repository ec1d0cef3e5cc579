// op: math on the GPU against the CPU on fresh random inputs: every dtype pair, every operator and
// function, broadcasting patterns, per-sample scalars, forced output dtypes, edge shapes, several
// iterations through one operator; and the conformance cases.
//
// Tolerances (docs/operators_tensor.md): bit-identical (NaNs included: the store writes one NaN)
// for everything but exp, log and pow, which call each side's math library: within 8 units in the
// last place of the output dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tests/conformance/conformance.h"
#include "tests/operators/math/math_test_util.h"

namespace conveyor::testing {
namespace {

std::vector<Shape> EdgeShapes() {
  std::vector<Shape> shapes;
  for (int i = 0; i < 5; ++i) shapes.push_back(Shape{RandomVector<int64_t>(1, 1, 60)[0], RandomVector<int64_t>(1, 1, 9)[0]});
  shapes.push_back(Shape{0, 3});
  shapes.push_back(Shape{1, 1});
  shapes.push_back(Shape{513, 401});  // more elements than one grid pass
  return shapes;
}

// GPU output == CPU output: bytes, or within `ulps` units in the last place of the output dtype —
// or of `computed_in` when the program computes in a narrower float type than its (forced) output.
void ExpectGpuMatchesCpu(const OpSpec& spec, const std::vector<TensorListCPU>& inputs, const std::string& what, int ulps = 0,
                         const ArgInputs& args = {}, DType computed_in = DType::kFloat64) {
  const TensorListCPU cpu = RunMulti(spec, Device::kCpu, inputs, args);
  const TensorListCPU gpu = RunMulti(spec, Device::kGpu, inputs, args);
  if (ulps == 0 || !IsFloat(cpu.dtype())) {
    ExpectSameBytes(gpu, cpu, what);
    return;
  }
  ASSERT_EQ(gpu.shapes(), cpu.shapes()) << what;
  ASSERT_EQ(gpu.dtype(), cpu.dtype()) << what;
  const DType precision = DTypeSize(computed_in) < DTypeSize(cpu.dtype()) ? computed_in : cpu.dtype();
  const double eps = precision == DType::kFloat64    ? 0x1p-52
                     : precision == DType::kFloat32    ? 0x1p-23
                     : precision == DType::kFloat16    ? 0x1p-10
                                                       : 0x1p-7;
  for (int s = 0; s < cpu.num_samples(); ++s) {
    for (int64_t j = 0; j < cpu.shape(s).num_elements(); ++j) {
      const double want = Element(cpu, s, j), got = Element(gpu, s, j);
      if (std::isnan(want) && std::isnan(got)) continue;
      if (want == got) continue;
      // Relative to the value, and at least `ulps` of the type's smallest subnormal step (exp of a
      // large negative integer lands among float32's subnormals, where ulps are absolute).
      const double tiny = cpu.dtype() == DType::kFloat64   ? 0x1p-1074
                          : cpu.dtype() == DType::kFloat32 ? 0x1p-149
                          : cpu.dtype() == DType::kFloat16 ? 0x1p-24
                                                           : 0x1p-133;
      ASSERT_LE(std::abs(got - want), ulps * std::max(eps * std::abs(want), tiny))
          << what << " sample " << s << " element " << j;
    }
  }
}

TEST(MathGpu, EveryOperatorForEveryDTypePairMatchesCpuBitForBit) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = EdgeShapes();
  const char* const kExact[] = {"a + b", "a - b", "a * b", "a / b", "a // b", "a % b", "min(a, b)", "max(a, b)",
                                "a < b", "a == b", "a >= b", "where(a > b, a, b)", "clamp(a, b, 3)"};
  for (DType ta : kAllDTypes) {
    for (DType tb : kAllDTypes) {
      const std::vector<TensorListCPU> in = {RandomTyped(shapes, ta, ""), RandomTyped(shapes, tb, "")};
      for (const char* expr : kExact) {
        const bool two_bools = ta == DType::kBool && tb == DType::kBool;
        const std::string e = expr;
        if (two_bools && (e == "a + b" || e == "a - b" || e == "a / b" || e == "a // b" || e == "a % b")) continue;
        ExpectGpuMatchesCpu(Math(expr, {"a", "b"}), in,
                            e + " with " + std::string(DTypeName(ta)) + ", " + std::string(DTypeName(tb)));
      }
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(MathGpu, UnaryFunctionsForEveryDType) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = EdgeShapes();
  for (DType t : kAllDTypes) {
    const std::vector<TensorListCPU> in = {RandomTyped(shapes, t, "", -20.f, 20.f)};
    const std::string type(DTypeName(t));
    for (const char* expr : {"abs(x)", "floor(x * 0.37)", "ceil(x * 0.37)", "round(x * 0.5)", "sqrt(abs(x))", "x * x + 1"}) {
      ExpectGpuMatchesCpu(Math(expr), in, std::string(expr) + " " + type);
    }
    if (t != DType::kBool) ExpectGpuMatchesCpu(Math("-x"), in, "-x " + type);
    ExpectGpuMatchesCpu(Math("exp(x * 0.25)"), in, "exp " + type, 8);
    ExpectGpuMatchesCpu(Math("log(abs(x) + 1)"), in, "log " + type, 8);
    ExpectGpuMatchesCpu(Math("pow(abs(x), 0.7) + x ** 2"), in, "pow " + type, 8);
  }
}

TEST(MathGpu, IntegerEdgeCasesMatchCpu) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<double> v = {0, 1, -1, 2, -2, 7, -7, 127, -128, 32767, -32768, 2147483647, -2147483648.0};
  for (DType t : {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16}) {
    std::vector<double> a, b;
    for (double x : v) {
      for (double y : v) a.push_back(x), b.push_back(y);
    }
    const std::vector<TensorListCPU> in = {TypedBatch({Shape{static_cast<int64_t>(a.size())}}, t, {a}),
                                           TypedBatch({Shape{static_cast<int64_t>(b.size())}}, t, {b})};
    for (const char* expr : {"a // b", "a % b", "a ** b", "a * b - a", "-a + 0 * b", "abs(b) + 0 * a"}) {
      ExpectGpuMatchesCpu(Math(expr, {"a", "b"}), in, std::string(expr) + " " + std::string(DTypeName(t)));
    }
    ExpectGpuMatchesCpu(Math("-a", {"a"}), {in[0]}, "-a " + std::string(DTypeName(t)));
  }
}

TEST(MathGpu, BroadcastingPatternsMatchCpu) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Shape> img, chan, col, scalar;
  for (int i = 0; i < 6; ++i) {
    const int64_t h = RandomVector<int64_t>(1, 1, 50)[0], w = RandomVector<int64_t>(1, 1, 50)[0];
    img.push_back(Shape{h, w, 3});
    chan.push_back(Shape{3});
    col.push_back(Shape{h, 1, 1});
    scalar.push_back(i % 2 ? Shape{} : Shape{1});
  }
  const std::vector<TensorListCPU> in = {RandomTyped(img, DType::kUInt8, "HWC"), RandomTyped(chan, DType::kFloat32, "C"),
                                         RandomTyped(col, DType::kFloat16, ""), RandomTyped(scalar, DType::kInt32, "")};
  ExpectGpuMatchesCpu(Math("(img - mean) * col + k", {"img", "mean", "col", "k"}), in, "image broadcast");
  ExpectGpuMatchesCpu(Math("clamp(img * mean, 0, 255)", {"img", "mean"}).SetArg("dtype", "uint8"), {in[0], in[1]},
                      "per-channel gain to uint8");
  ExpectGpuMatchesCpu(Math("k - col", {"k", "col"}), {in[3], in[2]}, "scalar against a column");
}

TEST(MathGpu, PerSampleScalarsAndForcedDTypesMatchCpu) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = EdgeShapes();
  const std::vector<TensorListCPU> in = {RandomTyped(shapes, DType::kFloat32, "HW", -300.f, 300.f)};
  const ArgInputs args = {{"s0", PerSampleScalars(RandomVector<float>(shapes.size(), -2.f, 2.f))},
                          {"s3", PerSampleScalars(RandomVector<float>(shapes.size(), 0.f, 10.f))}};
  for (DType out : kAllDTypes) {
    ExpectGpuMatchesCpu(Math("x * s0 + s3 - s1").SetArgInput("s0", "a").SetArgInput("s3", "b").SetArg("s1", 0.25)
                            .SetArg("dtype", std::string(DTypeName(out))),
                        in, "scalars to " + std::string(DTypeName(out)), 0, args);
  }
}

// One 1-byte input (uint8, int8, bool) takes the per-sample table kernel (math_gpu.cu): the
// program interpreted once per byte value, then a table read per element. Same bits as the CPU for
// every output dtype (1, 2, 4 and 8-byte words), per-sample scalars, and the augment_bench shape.
TEST(MathGpu, OneByteInputTableMatchesCpu) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Shape> shapes = EdgeShapes();
  shapes.push_back(Shape{224, 224, 3});
  const ArgInputs args = {{"s0", PerSampleScalars(RandomVector<float>(shapes.size(), -2.f, 2.f))},
                          {"s3", PerSampleScalars(RandomVector<float>(shapes.size(), 0.f, 300.f))}};
  for (DType t : {DType::kUInt8, DType::kInt8, DType::kBool}) {
    const std::vector<TensorListCPU> in = {RandomTyped(shapes, t, "", -128, 128)};
    for (DType out : kAllDTypes) {
      const std::string what = std::string(DTypeName(t)) + " to " + std::string(DTypeName(out));
      ExpectGpuMatchesCpu(Math("clamp(x * s0 + s3, 0, 255)").SetArgInput("s0", "a").SetArgInput("s3", "b")
                              .SetArg("dtype", std::string(DTypeName(out))),
                          in, "clamp affine " + what, 0, args);
      ExpectGpuMatchesCpu(Math("where(x > 100, x // 3, 7 - x) + s3").SetArgInput("s3", "b").SetArg("dtype", std::string(DTypeName(out))),
                          in, "select " + what, 0, {{"s3", args.at("s3")}});
      // x / 255 of a 1-byte x is float32 (the promotion rules): pow runs in float32, so a forced
      // float64 output carries float32's rounding (CUDA's powf and glibc's differ by an ulp or two).
      ExpectGpuMatchesCpu(Math("pow(abs(x) / 255, s3 / 100) * 255").SetArgInput("s3", "b").SetArg("dtype", std::string(DTypeName(out))),
                          in, "pow " + what, 8, {{"s3", args.at("s3")}}, DType::kFloat32);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// One operator, several iterations: shapes change, descriptors are rewritten, the dtype change
// recompiles.
TEST(MathGpu, SeveralIterationsThroughOneOperator) {
  CONVEYOR_REQUIRE_GPU();
  const OpSpec spec = Math("x * 3 - 1");
  OpHarness gpu(spec, Device::kGpu);
  OpHarness cpu(spec, Device::kCpu);
  cuda::Stream stream = cuda::Stream::Create();
  const DType types[] = {DType::kUInt8, DType::kUInt8, DType::kFloat16, DType::kInt64};
  for (int it = 0; it < 4; ++it) {
    const TensorListCPU in = RandomTyped(EdgeShapes(), types[it], "HW");
    gpu.SetInput(0, in);
    cpu.SetInput(0, in);
    gpu.Run(stream.view());
    cpu.Run();
    ExpectSameBytes(gpu.OutputToHost(0), cpu.OutputToHost(0), "iteration " + std::to_string(it));
  }
}

ConformanceCase Case(std::string name, OpSpec spec, Device device, DType type = DType::kFloat32, double tolerance = 0) {
  ConformanceCase c{std::move(name), std::move(spec), device, type};
  c.tolerance = tolerance;
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Math, OperatorConformance,
    ::testing::Values(Case("cpu", Math("(x - 0.5) * 2"), Device::kCpu),
                      Case("gpu", Math("(x - 0.5) * 2"), Device::kGpu),
                      Case("gpu_u8", Math("clamp(x * 1.5 + s0, 0, 255)").SetArg("s0", 3.0).SetArg("dtype", "uint8"), Device::kGpu,
                           DType::kUInt8),
                      Case("gpu_int", Math("x // 7 + x % 7 + abs(x)"), Device::kGpu, DType::kInt32),
                      Case("gpu_exp", Math("exp(x / 50) + sqrt(abs(x))"), Device::kGpu, DType::kFloat32, 1e-5)),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
