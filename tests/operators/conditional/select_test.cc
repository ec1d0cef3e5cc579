// select on its own (as written by hand): per sample `result` where enable is nonzero, else
// `input`, on fresh random data of differing shapes; constant enable; its refusals; the GPU run
// against the CPU reference byte for byte (skips without a GPU); the conformance suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/conditional/conditions_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Select() { return OpSpec("select", "s").AddInput("a").AddInput("b").AddOutput("y"); }

INSTANTIATE_TEST_SUITE_P(
    Select, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Select(), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu_result", Select(), Device::kGpu, DType::kFloat32},
                      ConformanceCase{"gpu_input", Select().SetArg("enable", false), Device::kGpu, DType::kUInt8,
                                      true, "HWC", 3}),
    CaseName);

// Runs select on `device` over (input, result) with a per-sample int32 mask.
TensorListCPU RunSelect(Device device, const TensorListCPU& input, const TensorListCPU& result,
                        const std::vector<int>& mask) {
  std::vector<std::vector<int32_t>> values;
  for (int m : mask) values.push_back({m});
  OpHarness h(Select().SetArgInput("enable", "m"), device, input.num_samples());
  h.SetInput(0, input);
  h.SetInput(1, result);
  h.SetArgInput("enable", MakeBatch<int32_t>(std::vector<Shape>(mask.size(), Shape{}), values));
  if (device == Device::kGpu) {
    cuda::Stream stream = cuda::Stream::Create();
    h.Run(stream.view());
    return h.OutputToHost(0);
  }
  h.Run();
  return h.OutputToHost(0);
}

// The error `select` throws for these inputs and this enable feed.
std::string SelectError(const TensorListCPU& input, const TensorListCPU& result, const TensorListCPU& enable) {
  try {
    OpHarness h(Select().SetArgInput("enable", "m"), Device::kCpu, input.num_samples());
    h.SetInput(0, input);
    h.SetInput(1, result);
    h.SetArgInput("enable", enable);
    h.Run();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(SelectCpu, TakesResultWhereEnabledElseInputWithEachSamplesShape) {
  const TensorListCPU input = VaryingImages(12);
  const TensorListCPU result = VaryingImages(12);  // other sizes: the output follows the chosen sample
  std::vector<int> mask = RandomVector<int>(12, 0, 1);
  mask[0] = 0;
  mask[1] = 7;  // nonzero counts as selected
  const TensorListCPU got = RunSelect(Device::kCpu, input, result, mask);
  ExpectSelected(got, input, result, mask, "cpu");
  EXPECT_EQ(got.layout(), input.layout());
}

TEST(SelectCpu, ConstantEnable) {
  const TensorListCPU input = VaryingImages(5);
  const TensorListCPU result = VaryingImages(5);
  for (bool enable : {false, true}) {
    OpHarness h(Select().SetArg("enable", enable), Device::kCpu, 5);
    h.SetInput(0, input);
    h.SetInput(1, result);
    h.Run();
    ExpectSelected(h.OutputToHost(0), input, result, std::vector<int>(5, enable), enable ? "true" : "false");
  }
}

TEST(SelectCpu, RefusesInputsOfAnotherDtypeLayoutOrNdim) {
  const TensorListCPU mask = MakeBatch<int32_t>({Shape{}, Shape{}}, {{1}, {0}});
  const TensorListCPU images = RandomImages({Shape{4, 5, 3}, Shape{6, 2, 3}}, DType::kUInt8);
  EXPECT_THAT(SelectError(images, RandomImages({Shape{4, 5, 3}, Shape{6, 2, 3}}, DType::kFloat32), mask),
              HasSubstr("op \"select\" (s): input \"a\" and result \"b\" must have one dtype; result has float32, "
                        "input uint8"));
  EXPECT_THAT(SelectError(images, RandomImages({Shape{4, 5, 3}, Shape{6, 2, 3}}, DType::kUInt8, "CHW"), mask),
              HasSubstr("op \"select\" (s): input \"a\" and result \"b\" must have one layout; result has layout CHW, "
                        "input layout HWC"));
  EXPECT_THAT(SelectError(images, RandomImages({Shape{4, 5, 3}, Shape{12, 3}}, DType::kUInt8), mask),
              HasSubstr("must have one ndim; result has 2 (sample 1: (12, 3)), input 3 ((6, 2, 3))"));
  EXPECT_THAT(SelectError(images, RandomImages({Shape{4, 5, 3}}, DType::kUInt8), mask),
              HasSubstr("must have one number of samples; result has 1, input 2"));
}

TEST(SelectCpu, RefusesAMaskThatIsNotOneBoolOrIntegerPerSample) {
  const TensorListCPU images = RandomImages({Shape{4, 5, 3}, Shape{6, 2, 3}}, DType::kUInt8);
  EXPECT_THAT(SelectError(images, images, MakeBatch<float>({Shape{}, Shape{}}, {{1.f}, {0.f}})),
              HasSubstr("op \"select\" (s): argument \"enable\" (\"$m\") must be one bool or integer per sample; "
                        "sample 0 is float32 ()"));
  EXPECT_THAT(SelectError(images, images, MakeBatch<int32_t>({Shape{}, Shape{3}}, {{1}, {0, 1, 1}})),
              HasSubstr("argument \"enable\" (\"$m\") must be one bool or integer per sample; sample 1 is int32 (3,)"));
  EXPECT_THAT(SelectError(images, images, MakeBatch<int32_t>({Shape{}}, {{1}})),
              HasSubstr("argument \"enable\" (\"$m\") has 1 samples, the batch 2"));
}

TEST(SelectGpu, EqualsCpuOnRandomMasksAndShapes) {
  CONVEYOR_REQUIRE_GPU();
  for (DType dtype : {DType::kUInt8, DType::kFloat32}) {
    for (int n : {1, 7, 64}) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " batch " + std::to_string(n));
      std::vector<Shape> a, b;
      for (int s = 0; s < n; ++s) {
        a.push_back(Shape{RandomVector<int>(1, 1, 90)[0], RandomVector<int>(1, 1, 90)[0], 3});
        b.push_back(Shape{RandomVector<int>(1, 1, 90)[0], RandomVector<int>(1, 1, 90)[0], 3});
      }
      const TensorListCPU input = RandomImages(a, dtype), result = RandomImages(b, dtype);
      const std::vector<int> mask = RandomVector<int>(static_cast<size_t>(n), 0, 1);
      const TensorListCPU cpu = RunSelect(Device::kCpu, input, result, mask);
      ExpectSelected(cpu, input, result, mask, "cpu");
      EXPECT_EQ(CompareExact(RunSelect(Device::kGpu, input, result, mask), cpu), "") << "seed " << RngSeed();
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
