// python_function through the operator harness, with C callbacks registered through the C API:
// batch and per-sample calls, two outputs, outputs whose shape and dtype the callback chooses,
// layouts, and every refusal's message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/python_function/function_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Function(const std::string& name, int inputs = 1, int outputs = 1) {
  OpSpec spec("python_function", "fn");
  spec.SetArg("function", name);
  for (int i = 0; i < inputs; ++i) spec.AddInput("x" + std::to_string(i));
  for (int o = 0; o < outputs; ++o) spec.AddOutput("y" + std::to_string(o));
  if (outputs != 1) spec.SetArg("num_outputs", int64_t{outputs});
  return spec;
}

void ExpectDoubled(const TensorListCPU& out, const TensorListCPU& in) {
  ASSERT_EQ(out.num_samples(), in.num_samples());
  ASSERT_EQ(out.dtype(), DType::kFloat32);
  for (int s = 0; s < in.num_samples(); ++s) {
    ASSERT_EQ(out.shape(s), in.shape(s)) << "sample " << s;
    for (int64_t i = 0; i < in.shape(s).num_elements(); ++i) {
      ASSERT_EQ(Floats(out, s)[i], 2.0f * Floats(in, s)[i]) << "sample " << s << " element " << i;
    }
  }
}

TEST(PythonFunction, BatchModeCallsOncePerBatchWithEverySample) {
  CallLog log;
  ScopedFunction f("test_double_batch", DoubleFloats, &log);
  OpHarness h(Function(f.name()), Device::kCpu);
  for (int64_t k = 0; k < 2; ++k) {
    const TensorListCPU in = RandomFloats({5, 1, 17}, 10 + static_cast<uint32_t>(k));
    h.SetInput(0, in);
    h.set_iteration(k);
    h.Run();
    ExpectDoubled(h.OutputCpu(0), in);
  }
  ASSERT_EQ(log.calls.size(), 2u);
  EXPECT_EQ(log.calls[1].num_samples, 3);
  EXPECT_EQ(log.calls[1].first_sample, 0);
  EXPECT_EQ(log.calls[1].num_inputs, 1);
  EXPECT_EQ(log.calls[1].num_outputs, 1);
  EXPECT_EQ(log.calls[1].iteration, 1);
  EXPECT_EQ(log.calls[1].batch_processing, 1);
  EXPECT_STREQ(log.calls[1].node, "fn");
  EXPECT_STREQ(log.calls[1].function, "test_double_batch");
  EXPECT_EQ(log.input_layouts[1], "W");
}

TEST(PythonFunction, PerSampleModeCallsOncePerSampleInOrder) {
  CallLog log;
  ScopedFunction f("test_double_samples", DoubleFloats, &log);
  OpHarness h(Function(f.name()).SetArg("batch_processing", false), Device::kCpu);
  const TensorListCPU in = RandomFloats({4, 9, 2, 6}, 3);
  h.SetInput(0, in);
  h.Run();
  ExpectDoubled(h.OutputCpu(0), in);
  ASSERT_EQ(log.calls.size(), 4u);
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(log.calls[static_cast<size_t>(s)].first_sample, s);
    EXPECT_EQ(log.calls[static_cast<size_t>(s)].num_samples, 1);
    EXPECT_EQ(log.calls[static_cast<size_t>(s)].batch_processing, 0);
  }
}

TEST(PythonFunction, TwoInputsAndTwoOutputs) {
  ScopedFunction f("test_sum_difference", SumAndDifference);
  OpHarness h(Function(f.name(), 2, 2), Device::kCpu);
  const TensorListCPU a = RandomFloats({3, 8}, 1);
  const TensorListCPU b = RandomFloats({3, 8}, 2);
  h.SetInput(0, a);
  h.SetInput(1, b);
  h.Run();
  for (int s = 0; s < 2; ++s) {
    for (int64_t i = 0; i < a.shape(s).num_elements(); ++i) {
      EXPECT_EQ(Floats(h.OutputCpu(0), s)[i], Floats(a, s)[i] + Floats(b, s)[i]);
      EXPECT_EQ(Floats(h.OutputCpu(1), s)[i], Floats(a, s)[i] - Floats(b, s)[i]);
    }
  }
}

TEST(PythonFunction, TheCallbackChoosesShapeDtypeAndLayout) {
  ScopedFunction f("test_shape_of", ShapeOf);
  OpHarness h(Function(f.name()), Device::kCpu);
  TensorListCPU in;
  in.Resize({Shape{2, 3}, Shape{7, 1}}, DType::kUInt8);
  h.SetInput(0, in);
  h.Run();
  const TensorListCPU& out = h.OutputCpu(0);
  EXPECT_EQ(out.dtype(), DType::kInt64);
  EXPECT_EQ(out.layout(), Layout("C"));
  ASSERT_EQ(out.shape(1), Shape{2});
  EXPECT_EQ(static_cast<const int64_t*>(out.raw_sample(1))[0], 7);
  EXPECT_EQ(static_cast<const int64_t*>(out.raw_sample(1))[1], 1);

  // output_layouts wins over the callback's layout.
  OpHarness named(Function(f.name()).SetArg("output_layouts", std::vector<Layout>{"D"}), Device::kCpu);
  named.SetInput(0, in);
  named.Run();
  EXPECT_EQ(named.OutputCpu(0).layout(), Layout("D"));
}

TEST(PythonFunction, CallbackErrorsCarryTheirMessageAndTheSamples) {
  const char* message = "Traceback (most recent call last):\n  ValueError: bad pixel";
  ScopedFunction f("test_fail", FailWithMessage, const_cast<char*>(message));
  OpHarness batch(Function(f.name()), Device::kCpu);
  batch.SetInput(0, RandomFloats({2, 2, 2}, 4));
  try {
    batch.Run();
    FAIL() << "expected the callback's error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("argument \"function\" (\"test_fail\") failed on samples 0 to 2: Traceback (most "
                                    "recent call last):\n  ValueError: bad pixel"));
  }
  OpHarness per_sample(Function(f.name()).SetArg("batch_processing", false), Device::kCpu);
  per_sample.SetInput(0, RandomFloats({2, 2}, 4));
  EXPECT_THROW(
      {
        try {
          per_sample.Run();
        } catch (const InvalidArgument& e) {
          EXPECT_THAT(e.what(), HasSubstr("(\"test_fail\") failed on sample 0: Traceback"));
          throw;
        }
      },
      InvalidArgument);
}

// A status without conveyor_function_call_set_error still fails, and says so.
TEST(PythonFunction, ANonZeroStatusWithoutAMessageIsNamed) {
  ScopedFunction f("test_silent", [](conveyor_function_call_t, void*) -> int32_t { return 3; });
  OpHarness h(Function(f.name()), Device::kCpu);
  h.SetInput(0, RandomFloats({2, 4}, 5));
  try {
    h.Run();
    FAIL() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("failed on samples 0 to 1: it returned 3 without a message"));
  }
}

TEST(PythonFunction, AnOutputLeftUnsetIsNamed) {
  ScopedFunction f("test_lazy", [](conveyor_function_call_t, void*) -> int32_t { return 0; });
  OpHarness h(Function(f.name()), Device::kCpu);
  h.SetInput(0, RandomFloats({2, 3}, 6));
  try {
    h.Run();
    FAIL() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("(\"test_lazy\") returned without output 0 of sample 0; a function sets every "
                                    "output (num_outputs: 1) of every sample"));
  }
}

// Refused calls fail the node with their message even when the callback ignores the status.
int32_t MixedDtypes(conveyor_function_call_t call, void*) {
  const int64_t n = 2;
  void* out = nullptr;
  conveyor_function_call_output(call, 0, 0, 1, &n, CONVEYOR_DTYPE_FLOAT32, nullptr, &out);
  conveyor_function_call_output(call, 0, 1, 1, &n, CONVEYOR_DTYPE_INT32, nullptr, &out);
  return 0;
}
int32_t TwiceTheSameSample(conveyor_function_call_t call, void*) {
  const int64_t n = 1;
  void* out = nullptr;
  conveyor_function_call_output(call, 0, 0, 1, &n, CONVEYOR_DTYPE_UINT8, nullptr, &out);
  conveyor_function_call_output(call, 0, 0, 1, &n, CONVEYOR_DTYPE_UINT8, nullptr, &out);
  return 0;
}
int32_t BadIndices(conveyor_function_call_t call, void*) {
  const int64_t n = 1;
  void* out = nullptr;
  conveyor_tensor_info_t info;
  if (conveyor_function_call_inputs(call, 1, &info) == CONVEYOR_OK) return 0;
  conveyor_function_call_output(call, 0, 5, 1, &n, CONVEYOR_DTYPE_UINT8, nullptr, &out);
  return 1;
}
int32_t LayoutOfWrongLength(conveyor_function_call_t call, void*) {
  const int64_t shape[2] = {2, 2};
  void* out = nullptr;
  conveyor_function_call_output(call, 0, 0, 2, shape, CONVEYOR_DTYPE_UINT8, "HWC", &out);
  return 0;
}

std::string ErrorOf(conveyor_function_fn fn, const std::string& name, int samples = 2) {
  ScopedFunction f(name, fn);
  OpHarness h(Function(f.name()), Device::kCpu);
  std::vector<int64_t> lengths(static_cast<size_t>(samples), 2);
  h.SetInput(0, RandomFloats(lengths, 7));
  try {
    h.Run();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PythonFunction, RefusedCallsNameWhatWasExpected) {
  EXPECT_THAT(ErrorOf(MixedDtypes, "test_mixed"),
              HasSubstr("conveyor_function_call_output: output 0 of sample 1: expected float32, the dtype of this "
                        "output's other samples, got int32"));
  EXPECT_THAT(ErrorOf(TwiceTheSameSample, "test_twice"),
              HasSubstr("output 0 of sample 0: expected one output per sample, got a second one"));
  EXPECT_THAT(ErrorOf(BadIndices, "test_indices"),
              HasSubstr("conveyor_function_call_inputs: input: expected 0 to 0, got 1"));
  EXPECT_THAT(ErrorOf(LayoutOfWrongLength, "test_layout"),
              HasSubstr("output 0 of sample 0: expected a layout of 2 letters for shape (2, 2), got \"HWC\""));
}

TEST(PythonFunction, OutputLayoutsMustFitTheOutputs) {
  ScopedFunction f("test_layouts", ShapeOf);
  try {
    OpHarness h(Function(f.name()).SetArg("output_layouts", std::vector<Layout>{"C", "D"}), Device::kCpu);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected 1 layouts, one per output (num_outputs: 1), got 2"));
  }
  OpHarness h(Function(f.name()).SetArg("output_layouts", std::vector<Layout>{"HW"}), Device::kCpu);
  h.SetInput(0, RandomFloats({3}, 8));
  try {
    h.Run();
    FAIL() << "expected an error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("argument \"output_layouts\": output 0 has layout \"HW\" (2 axes), but the "
                                    "function returned shape (1,) for sample 0"));
  }
}

TEST(PythonFunction, NumOutputsMustMatchTheOutputsListed) {
  ScopedFunction f("test_count", DoubleFloats);
  try {
    OpHarness h(Function(f.name(), 1, 1).SetArg("num_outputs", int64_t{2}), Device::kCpu);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected 2 outputs, as argument \"num_outputs\" says, got 1"));
  }
}

TEST(PythonFunction, AnUnregisteredNameListsTheRegisteredOnes) {
  ScopedFunction f("test_present", DoubleFloats);
  try {
    OpHarness h(Function("test_absent"), Device::kCpu);
    FAIL() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_THAT(e.what(), HasSubstr("function \"test_absent\" is not registered (registered: "));
    EXPECT_THAT(e.what(), HasSubstr("test_present"));
    EXPECT_THAT(e.what(), HasSubstr("conveyor.register_function(\"test_absent\", fn) in Python"));
    EXPECT_EQ(e.field(), "args.function");
  }
}

// The shared suite (empty batch: no call; zero-sized sample; YAML round trip) with an identity
// function registered for the whole program.
int32_t Identity(conveyor_function_call_t call, void*) {
  const conveyor_function_call_desc_t d = Describe(call, nullptr);
  const std::vector<conveyor_tensor_info_t> in = Inputs(call, 0, d.num_samples);
  for (int s = 0; s < d.num_samples; ++s) {
    void* out = nullptr;
    if (conveyor_function_call_output(call, 0, s, in[s].ndim, in[s].shape, in[s].dtype, nullptr, &out)) return 1;
    if (out != nullptr) {
      std::memcpy(out, in[s].data, static_cast<size_t>(Elements(in[s])) * 4);  // the suite feeds float32
    }
  }
  return 0;
}
const bool kIdentityRegistered = conveyor_register_function("identity", Identity, nullptr, nullptr) == CONVEYOR_OK;

INSTANTIATE_TEST_SUITE_P(PythonFunction, OperatorConformance,
                         ::testing::Values(ConformanceCase{
                             "cpu", OpSpec("python_function", "fn").SetArg("function", std::string("identity"))
                                        .AddInput("x").AddOutput("y"),
                             Device::kCpu}),
                         CaseName);

TEST(PythonFunction, IdentityIsRegisteredForTheSuite) { EXPECT_TRUE(kIdentityRegistered); }

}  // namespace
}  // namespace conveyor::testing
