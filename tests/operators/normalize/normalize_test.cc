// normalize: hand-computed CPU cases, argument errors, GPU vs CPU (bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

OpSpec Normalize() { return OpSpec("normalize", "n").AddInput("x").AddOutput("y"); }

TEST(Normalize, PerChannelAlongLastAxis) {
  // Two pixels of 3 channels: (in - mean) / std * 2 + 1 with mean [0, 10, 20], std [1, 2, 4].
  const TensorListCPU in = MakeBatch<uint8_t>({Shape{1, 2, 3}}, {{4, 14, 28, 8, 20, 40}}, "HWC");
  const TensorListCPU out = RunOp(Normalize()
                                      .SetArg("mean", std::vector<double>{0, 10, 20})
                                      .SetArg("std", std::vector<double>{1, 2, 4})
                                      .SetArg("scale", 2.0)
                                      .SetArg("shift", 1.0),
                                  Device::kCpu, in);
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_EQ(out.layout(), Layout("HWC"));
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(9, 5, 5, 17, 11, 11));
}

TEST(Normalize, ScalarsAndUint8Output) {
  const TensorListCPU in = MakeBatch<float>({Shape{4}}, {{-10.f, 100.f, 300.f, 2.5f}});
  // (in - 0) / 1 → uint8: clamp and round half to even.
  EXPECT_THAT(SampleValues(RunOp(Normalize().SetArg("dtype", DType::kUInt8), Device::kCpu, in), 0),
              ElementsAre(0, 100, 255, 2));
}

TEST(Normalize, PerSampleMean) {
  const TensorListCPU in = MakeBatch<float>({Shape{2}, Shape{2}}, {{1.f, 2.f}, {1.f, 2.f}});
  const TensorListCPU out = RunOp(Normalize().SetArgInput("mean", "m"), Device::kCpu, in,
                                  {{"mean", PerSampleLists<float>({{1.f}, {-1.f}})}});
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(0, 1));
  EXPECT_THAT(SampleValues(out, 1), ElementsAre(2, 3));
}

TEST(Normalize, Errors) {
  const TensorListCPU img = RandomBatch({Shape{2, 2, 3}}, DType::kUInt8, "HWC");
  EXPECT_THAT(RunError(Normalize().SetArg("mean", std::vector<double>{1, 2}), img),
              HasSubstr("op \"normalize\" (n): argument \"mean\": expected 1 or 3 values (one per channel), got 2 at sample 0"));
  EXPECT_THAT(RunError(Normalize().SetArg("std", std::vector<double>{0}), img),
              HasSubstr("argument \"std\": must be nonzero, got 0 for channel 0 at sample 0"));
  EXPECT_THAT(RunError(Normalize(), RandomBatch({Shape{2}}, DType::kInt32, "")),
              HasSubstr("input 0: expected dtype uint8, float16, bfloat16 or float32, got int32"));
  EXPECT_THAT(RunError(Normalize().SetArg("dtype", DType::kInt16), img),
              HasSubstr("argument \"dtype\": expected uint8, float16, bfloat16 or float32, got int16"));
  EXPECT_THAT(RunError(Normalize().SetArg("std", std::vector<double>(20, 1.0)), RandomBatch({Shape{2, 20}}, DType::kUInt8, "")),
              HasSubstr("sample 0 has 20 channels (last axis of (2, 20)); per-channel mean/std support at most 16"));
}

TEST(NormalizeGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = RandomHwcShapes(7, 1, 60, 333, 3);
  for (DType in_type : {DType::kUInt8, DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const TensorListCPU in = RandomBatch(shapes, in_type, "HWC", 0.f, 255.f);
    for (DType out_type : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kUInt8}) {
      const OpSpec spec = Normalize()
                              .SetArg("mean", std::vector<double>{123.675, 116.28, 103.53})
                              .SetArg("std", std::vector<double>{58.395, 57.12, 57.375})
                              .SetArg("scale", 64.0)
                              .SetArg("shift", 128.0)
                              .SetArg("dtype", out_type);
      ExpectSameBytes(RunOp(spec, Device::kGpu, in), RunOp(spec, Device::kCpu, in),
                      std::string(DTypeName(in_type)) + " -> " + std::string(DTypeName(out_type)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Normalize, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Normalize().SetArg("mean", std::vector<double>{1, 2, 3}), Device::kCpu,
                                      DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Normalize().SetArg("mean", std::vector<double>{1, 2, 3}), Device::kGpu,
                                      DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu_f32_to_f16", Normalize().SetArg("dtype", DType::kFloat16), Device::kGpu}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
