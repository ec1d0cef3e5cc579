// The standard operators joining the conformance suite (tests/conformance/conformance.h).
// external_source is not here: its outputs come from the executor (Pipeline::Feed).
#include "tests/conformance/conformance.h"

namespace conveyor::testing {
namespace {

using ::testing::Values;

OpSpec Unary(const std::string& op) { return OpSpec(op, op + "_node").AddInput("x").AddOutput("y"); }
OpSpec Source(const std::string& op) {
  return OpSpec(op, op + "_node").AddOutput("y").SetArg("shape", std::vector<int64_t>{5, 3});
}

INSTANTIATE_TEST_SUITE_P(Copy, OperatorConformance,
                         Values(ConformanceCase{"cpu", Unary("copy"), Device::kCpu},
                                ConformanceCase{"gpu", Unary("copy"), Device::kGpu}),
                         CaseName);

INSTANTIATE_TEST_SUITE_P(Cast, OperatorConformance,
                         Values(ConformanceCase{"cpu", Unary("cast").SetArg("dtype", DType::kInt32), Device::kCpu},
                                ConformanceCase{"gpu_to_u8", Unary("cast").SetArg("dtype", DType::kUInt8), Device::kGpu,
                                                DType::kInt32},
                                ConformanceCase{"gpu", Unary("cast").SetArg("dtype", DType::kFloat64), Device::kGpu}),
                         CaseName);

INSTANTIATE_TEST_SUITE_P(RandomUniform, OperatorConformance,
                         Values(ConformanceCase{"cpu", Source("random.uniform"), Device::kCpu},
                                ConformanceCase{"gpu", Source("random.uniform"), Device::kGpu}),
                         CaseName);

INSTANTIATE_TEST_SUITE_P(RandomCoinFlip, OperatorConformance,
                         Values(ConformanceCase{"cpu", Source("random.coin_flip").SetArg("probability", 0.3), Device::kCpu},
                                ConformanceCase{"gpu", Source("random.coin_flip"), Device::kGpu}),
                         CaseName);

INSTANTIATE_TEST_SUITE_P(ToHost, OperatorConformance,
                         Values(ConformanceCase{"gpu", Unary("to_host"), Device::kGpu, DType::kUInt8, false}),
                         CaseName);

}  // namespace
}  // namespace conveyor::testing
