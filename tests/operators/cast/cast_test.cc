// cast with float16/bfloat16 (both directions, RNE) and the batched GPU kernel: hand-computed
// bits, GPU against CPU for every dtype pair on fresh random data (bit-identical), conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAre;

OpSpec Cast(DType t) { return OpSpec("cast", "c").AddInput("x").AddOutput("y").SetArg("dtype", t); }

std::vector<uint16_t> Bits(const TensorListCPU& t, int s) {
  const auto* p = static_cast<const uint16_t*>(t.raw_sample(s));
  return {p, p + t.shape(s).num_elements()};
}

TEST(Cast, FloatToHalfTypesRoundToNearestEven) {
  // 1 + 2^-11 ties to 1 (even); 1 + 3 * 2^-11 ties up to 1 + 2^-9; 65520 overflows to inf; -2.
  const TensorListCPU in = MakeBatch<float>({Shape{4}}, {{1.f + 0x1p-11f, 1.f + 3 * 0x1p-11f, 65520.f, -2.f}});
  EXPECT_THAT(Bits(RunOp(Cast(DType::kFloat16), Device::kCpu, in), 0), ElementsAre(0x3C00, 0x3C02, 0x7C00, 0xC000));
  // bfloat16: 1 + 2^-8 ties to 1; 1 + 3 * 2^-8 ties up to 1 + 2^-6; -2 → 0xC000.
  const TensorListCPU b = MakeBatch<float>({Shape{3}}, {{1.f + 0x1p-8f, 1.f + 3 * 0x1p-8f, -2.f}});
  EXPECT_THAT(Bits(RunOp(Cast(DType::kBFloat16), Device::kCpu, b), 0), ElementsAre(0x3F80, 0x3F82, 0xC000));
}

TEST(Cast, HalfTypesToOthersAreExactThenStaticCast) {
  const TensorListCPU h = MakeBatch<uint16_t>({Shape{3}}, {{0x3E00, 0xC100, 0x3C00}});  // 1.5, -2.5, 1
  TensorListCPU half;
  half.Resize({Shape{3}}, DType::kFloat16);
  std::memcpy(half.raw_sample(0), h.raw_sample(0), 6);
  EXPECT_THAT(SampleValues(RunOp(Cast(DType::kFloat32), Device::kCpu, half), 0), ElementsAre(1.5f, -2.5f, 1.f));
  const TensorListCPU i = RunOp(Cast(DType::kInt32), Device::kCpu, half);
  const auto* iv = static_cast<const int32_t*>(i.raw_sample(0));
  EXPECT_THAT(std::vector<int32_t>(iv, iv + 3), ElementsAre(1, -2, 1));  // truncation
  const TensorListCPU u = MakeBatch<uint8_t>({Shape{2}}, {{200, 7}});
  EXPECT_THAT(Bits(RunOp(Cast(DType::kBFloat16), Device::kCpu, u), 0), ElementsAre(0x4348, 0x40E0));  // 200, 7
}

// Every dtype pair, fresh random values of varying per-sample sizes (floats in [0, 100) so no
// float → integer conversion is out of range): GPU bytes equal CPU bytes.
TEST(CastGpu, EveryDTypePairMatchesCpu) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<DType> all = {DType::kBool,  DType::kUInt8,   DType::kInt8,     DType::kUInt16,
                                  DType::kInt16, DType::kInt32,   DType::kInt64,    DType::kFloat16,
                                  DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  std::vector<Shape> shapes;
  for (int i = 0; i < 5; ++i) shapes.push_back(Shape{RandomVector<int64_t>(1, 0, 5000)[0]});
  shapes.push_back(Shape{70001});
  for (DType from : all) {
    const TensorListCPU in = RandomBatch(shapes, from, "", 0.f, 100.f);
    for (DType to : all) {
      ExpectSameBytes(RunOp(Cast(to), Device::kGpu, in), RunOp(Cast(to), Device::kCpu, in),
                      std::string(DTypeName(from)) + " -> " + std::string(DTypeName(to)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CastHalf, OperatorConformance,
                         ::testing::Values(ConformanceCase{"cpu_f16", Cast(DType::kFloat16), Device::kCpu},
                                           ConformanceCase{"gpu_f16", Cast(DType::kFloat16), Device::kGpu},
                                           ConformanceCase{"gpu_u8_to_bf16", Cast(DType::kBFloat16), Device::kGpu,
                                                           DType::kUInt8, true, "HWC", 3}),
                         CaseName);

}  // namespace
}  // namespace conveyor::testing
