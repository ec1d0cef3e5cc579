// The operator conformance suite. Every operator joins it in a few lines:
//
//   INSTANTIATE_TEST_SUITE_P(Cast, OperatorConformance, ::testing::Values(
//       ConformanceCase{"cpu", OpSpec("cast", "c").AddInput("x").AddOutput("y").SetArg("dtype", DType::kInt32),
//                       Device::kCpu}),
//       CaseName);
//
// and gets, per case: the spec round-trips through YAML, an empty batch gives an empty batch, a
// zero-sized sample gives a zero-sized sample, and (GPU) all its work goes to the given stream — a
// kernel spinning on the legacy default stream is still running when the operator's output is
// complete and correct.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/op/spec.h"
#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

namespace conveyor::testing {

struct ConformanceCase {
  std::string name;  // the test-name suffix
  OpSpec spec;       // op, inputs/outputs and arguments
  Device device = Device::kCpu;
  DType input_dtype = DType::kFloat32;  // random input data of this dtype for every input
  // The GPU reference: the op's CPU run (true) or the input itself (false: transfer ops).
  bool reference_is_cpu = true;
  // Layout of every random input; with `channels` > 0 each input sample gets a trailing channel
  // extent (images: layout "HWC", channels 3).
  Layout layout = "HW";
  int channels = 0;
  // GPU vs CPU: largest allowed absolute difference per element (0: bit-identical bytes).
  double tolerance = 0;
  // False for operators whose contract rejects a zero-sized sample (the case name says why).
  bool zero_sized_samples = true;
  // False for operators whose contract rejects random data (decoders: only encoded images): the
  // stream check, which runs on random inputs, skips; the operator's own test must cover it.
  bool random_data = true;
};

class OperatorConformance : public ::testing::TestWithParam<ConformanceCase> {};

std::string CaseName(const ::testing::TestParamInfo<ConformanceCase>& info);

}  // namespace conveyor::testing
