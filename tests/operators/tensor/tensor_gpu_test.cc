// The tensor operators on the GPU: bit-identical to the CPU on fresh random inputs of every dtype
// each accepts, edge shapes (empty samples, one element, odd byte widths that force narrow words),
// several iterations through one operator; and their conformance cases.
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/tensor/tensor_testing.h"

namespace conveyor::testing {
namespace {

constexpr DType kIndexTypes[] = {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kInt32, DType::kInt64};

std::vector<Shape> EdgeShapes(int ndim) {
  std::vector<Shape> shapes;
  for (int i = 0; i < 6; ++i) {
    std::vector<int64_t> e;
    for (int d = 0; d < ndim; ++d) e.push_back(RandomVector<int64_t>(1, 1, d == ndim - 1 ? 7 : 40)[0]);
    shapes.emplace_back(e);
  }
  std::vector<int64_t> empty(static_cast<size_t>(ndim), 3), one(static_cast<size_t>(ndim), 1);
  empty[0] = 0;
  shapes.emplace_back(empty);
  shapes.emplace_back(one);
  return shapes;
}

void ExpectGpuMatchesCpu(const OpSpec& spec, const std::vector<TensorListCPU>& inputs, const std::string& what,
                         const ArgInputs& args = {}) {
  const TensorListCPU cpu = RunMulti(spec, Device::kCpu, inputs, args);
  const TensorListCPU gpu = RunMulti(spec, Device::kGpu, inputs, args);
  ExpectSameBytes(gpu, cpu, what);
}

OpSpec Unary(const std::string& op) { return OpSpec(op, op).AddInput("x").AddOutput("y"); }

TEST(TensorGpu, ReshapeSqueezeExpandDimsMatchCpu) {
  CONVEYOR_REQUIRE_GPU();
  for (DType type : kAllDTypes) {
    std::vector<Shape> shapes = EdgeShapes(3);
    for (Shape& s : shapes) s[2] = 1;
    const TensorListCPU in = RandomTyped(shapes, type, "HWC");
    const std::string what = std::string(DTypeName(type));
    ExpectGpuMatchesCpu(Unary("reshape").SetArg("rel_shape", std::vector<double>{1, -1}), {in}, "reshape " + what);
    ExpectGpuMatchesCpu(Unary("reshape").SetArg("shape", std::vector<int64_t>{-1}), {in}, "flatten " + what);
    ExpectGpuMatchesCpu(Unary("squeeze").SetArg("axis_names", "C"), {in}, "squeeze " + what);
    ExpectGpuMatchesCpu(Unary("expand_dims").SetArg("axes", std::vector<int64_t>{0, 4}).SetArg("new_axis_names", "FX"), {in},
                        "expand_dims " + what);
  }
}

TEST(TensorGpu, CatAndStackMatchCpuForEveryDTypeAndAxis) {
  CONVEYOR_REQUIRE_GPU();
  for (DType type : kAllDTypes) {
    for (int axis : {0, 1, 2, -1}) {
      const std::vector<Shape> base = EdgeShapes(3);
      std::vector<TensorListCPU> cat_in, stack_in;
      for (int k = 0; k < 3; ++k) {
        std::vector<Shape> shapes = base;
        const int a = axis < 0 ? 2 : axis;
        for (Shape& s : shapes) s[a] += k;  // unequal widths: rows of odd byte counts
        cat_in.push_back(RandomTyped(shapes, type, "HWC"));
        stack_in.push_back(RandomTyped(base, type, "HWC"));
      }
      const std::string what = std::string(DTypeName(type)) + " axis " + std::to_string(axis);
      ExpectGpuMatchesCpu(OpSpec("cat", "c").AddInput("a").AddInput("b").AddInput("c").AddOutput("y").SetArg("axis", axis),
                          cat_in, "cat " + what);
      ExpectGpuMatchesCpu(OpSpec("stack", "s").AddInput("a").AddInput("b").AddInput("c").AddOutput("y").SetArg("axis", axis),
                          stack_in, "stack " + what);
    }
  }
}

TEST(TensorGpu, OneHotMatchesCpuForEveryIndexAndOutputType) {
  CONVEYOR_REQUIRE_GPU();
  for (DType type : kIndexTypes) {
    const TensorListCPU in = RandomTyped(EdgeShapes(2), type, "HW");  // values beyond the classes too
    for (DType out : kAllDTypes) {
      for (int axis : {0, 1, 2}) {
        ExpectGpuMatchesCpu(Unary("one_hot")
                                .SetArg("num_classes", int64_t{13})
                                .SetArg("axis", axis)
                                .SetArg("dtype", out)
                                .SetArg("on_value", 2.5)
                                .SetArg("off_value", -1.0),
                            {in}, std::string("one_hot ") + std::string(DTypeName(type)) + " -> " +
                                      std::string(DTypeName(out)) + " axis " + std::to_string(axis));
      }
    }
  }
}

TEST(TensorGpu, LookupTableMatchesCpuForEveryKeyAndOutputType) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<int64_t> keys;
  std::vector<double> values;
  for (int i = 0; i < 300; ++i) {
    keys.push_back(RandomVector<int64_t>(1, 0, 2000)[0]);
    values.push_back(RandomVector<double>(1, -1000, 1000)[0]);
  }
  for (DType type : kIndexTypes) {
    const TensorListCPU in = RandomTyped(EdgeShapes(2), type, "HW");
    for (DType out : kAllDTypes) {
      ExpectGpuMatchesCpu(Unary("lookup_table").SetArg("keys", keys).SetArg("values", values).SetArg("default_value", 3.0)
                              .SetArg("dtype", out),
                          {in}, std::string("lookup_table ") + std::string(DTypeName(type)) + " -> " + std::string(DTypeName(out)));
    }
  }
}

// One operator over several iterations of changing shapes (descriptors rewritten, the lookup
// table uploaded once and reused).
TEST(TensorGpu, SeveralIterationsThroughOneOperator) {
  CONVEYOR_REQUIRE_GPU();
  const OpSpec lut = Unary("lookup_table").SetArg("keys", std::vector<int64_t>{1, 5}).SetArg("values", std::vector<double>{7, 9});
  OpHarness gpu(lut, Device::kGpu);
  OpHarness cpu(lut, Device::kCpu);
  cuda::Stream stream = cuda::Stream::Create();
  for (int it = 0; it < 4; ++it) {
    const TensorListCPU in = RandomTyped(EdgeShapes(2), DType::kInt32, "HW");
    gpu.SetInput(0, in);
    cpu.SetInput(0, in);
    gpu.Run(stream.view());
    cpu.Run();
    ExpectSameBytes(gpu.OutputToHost(0), cpu.OutputToHost(0), "iteration " + std::to_string(it));
  }
}

OpSpec Cat2() { return OpSpec("cat", "c").AddInput("a").AddInput("b").AddOutput("y").SetArg("axis", 1); }
OpSpec Stack2() { return OpSpec("stack", "s").AddInput("a").AddInput("b").AddOutput("y").SetArg("axis", -1); }

ConformanceCase Case(std::string name, OpSpec spec, Device device, DType type = DType::kFloat32) {
  ConformanceCase c{std::move(name), std::move(spec), device, type};
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Tensor, OperatorConformance,
    ::testing::Values(Case("reshape_cpu", Unary("reshape").SetArg("shape", std::vector<int64_t>{-1}), Device::kCpu),
                      Case("reshape_gpu", Unary("reshape").SetArg("rel_shape", std::vector<double>{1, -1}), Device::kGpu),
                      [] {
                        ConformanceCase c = Case("squeeze_gpu", Unary("squeeze").SetArg("axes", std::vector<int64_t>{-1}),
                                                 Device::kGpu, DType::kUInt8);
                        c.layout = "HWC";
                        c.channels = 1;
                        return c;
                      }(),
                      Case("expand_dims_cpu", Unary("expand_dims").SetArg("axes", std::vector<int64_t>{0}), Device::kCpu),
                      Case("expand_dims_gpu", Unary("expand_dims").SetArg("axes", std::vector<int64_t>{2}), Device::kGpu),
                      Case("cat_cpu", Cat2(), Device::kCpu), Case("cat_gpu", Cat2(), Device::kGpu, DType::kUInt8),
                      Case("stack_cpu", Stack2(), Device::kCpu, DType::kInt32), Case("stack_gpu", Stack2(), Device::kGpu),
                      Case("one_hot_cpu", Unary("one_hot").SetArg("num_classes", int64_t{5}), Device::kCpu, DType::kInt32),
                      Case("one_hot_gpu", Unary("one_hot").SetArg("num_classes", int64_t{5}).SetArg("axis", 0), Device::kGpu,
                           DType::kUInt8),
                      Case("lookup_table_cpu",
                           Unary("lookup_table").SetArg("keys", std::vector<int64_t>{1, 2}).SetArg("values", std::vector<double>{3, 4}),
                           Device::kCpu, DType::kInt32),
                      Case("lookup_table_gpu",
                           Unary("lookup_table").SetArg("keys", std::vector<int64_t>{1, 2}).SetArg("values", std::vector<double>{3, 4}),
                           Device::kGpu, DType::kInt32)),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
