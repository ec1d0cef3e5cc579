// python_function inside pipelines: errors with the node's YAML position, an unregistered name at
// build, the lifetime of registrations (bound at build, destroyed after the last pipeline), and
// the registration API's own refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "core/pipeline/pipeline.h"
#include "tests/operators/python_function/function_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// external_source "in" (float32, 1-D samples) → python_function "fn" → output y. The function name
// sits on line 7, its first character at column kFunctionColumn.
std::string Yaml(const std::string& function, const std::string& extra_args = "") {
  return "pipeline: {name: fn_test, batch_size: 3, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 1}\n"
         "ops:\n"
         "  - {op: external_source, name: in, args: {dtype: float32, ndim: 1}, outputs: [x]}\n"
         "  - op: python_function\n"
         "    name: fn\n"
         "    inputs: [x]\n"
         "    args: {function: " + function + extra_args + "}\n"
         "    outputs: [y]\n"
         "outputs: [y]\n";
}
constexpr int kFunctionColumn = 22;

void FeedRandom(Pipeline& p, uint32_t seed) { p.Feed("in", RandomFloats({4, 1, 6}, seed)); }

void ExpectDoubled(const TensorListCPU& out, const TensorListCPU& in) {
  ASSERT_EQ(out.num_samples(), in.num_samples());
  for (int s = 0; s < in.num_samples(); ++s) {
    ASSERT_EQ(out.shape(s), in.shape(s));
    for (int64_t i = 0; i < in.shape(s).num_elements(); ++i) ASSERT_EQ(Floats(out, s)[i], 2.0f * Floats(in, s)[i]);
  }
}

TEST(PythonFunctionPipeline, DoublesEveryIteration) {
  ScopedFunction f("pipe_double", DoubleFloats);
  Pipeline p = Pipeline::FromYaml(Yaml(f.name()));
  for (uint32_t k = 0; k < 2; ++k) FeedRandom(p, k);
  p.Build();
  for (uint32_t k = 0; k < 5; ++k) {
    PipelineOutputs out = p.Outputs();
    ExpectDoubled(out.Cpu(0), RandomFloats({4, 1, 6}, k));
    out.Release();
    FeedRandom(p, k + 2);
    p.Run();
  }
}

TEST(PythonFunctionPipeline, ACallbackErrorLeadsWithTheNodesYamlPosition) {
  const char* message = "Traceback (most recent call last):\n  File \"aug.py\", line 3\nZeroDivisionError: oops";
  ScopedFunction f("pipe_fail", FailWithMessage, const_cast<char*>(message));
  Pipeline p = Pipeline::FromYaml(Yaml(f.name()));
  FeedRandom(p, 1);
  p.Build();
  try {
    p.Outputs();
    FAIL() << "expected the function's error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), StartsWith("<string>:7:" + std::to_string(kFunctionColumn) + ": "));
    EXPECT_THAT(e.what(), HasSubstr("iteration 0: node \"fn\" (op \"python_function\"): argument \"function\" "
                                    "(\"pipe_fail\") failed on samples 0 to 2: Traceback (most recent call last):\n"
                                    "  File \"aug.py\", line 3\nZeroDivisionError: oops"));
  }
}

TEST(PythonFunctionPipeline, AnUnregisteredNameFailsTheBuildAtItsPosition) {
  Pipeline p = Pipeline::FromYaml(Yaml("pipe_nobody_registered"));
  FeedRandom(p, 1);
  try {
    p.Build();
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), StartsWith("<string>:7:" + std::to_string(kFunctionColumn) +
                                     ": op \"python_function\" (fn): function \"pipe_nobody_registered\" is not "
                                     "registered (registered: "));
    EXPECT_THAT(e.what(), HasSubstr("`conveyor run` cannot call user code"));
  }
}

// Bound at build: removing the registration leaves the built pipeline working, and destroy runs
// once, when the pipeline lets go.
TEST(PythonFunctionPipeline, ABuiltPipelineKeepsItsFunctionUntilItIsDestroyed) {
  CallLog log;
  ASSERT_EQ(conveyor_register_function("pipe_kept", DoubleFloats, &log, CountDestroy), CONVEYOR_OK);
  auto p = std::make_unique<Pipeline>(Pipeline::FromYaml(Yaml("pipe_kept")));
  FeedRandom(*p, 1);
  p->Build();
  ASSERT_EQ(conveyor_unregister_function("pipe_kept"), CONVEYOR_OK);
  EXPECT_EQ(log.destroyed.load(), 0);
  {
    PipelineOutputs out = p->Outputs();
    ExpectDoubled(out.Cpu(0), RandomFloats({4, 1, 6}, 1));
  }
  FeedRandom(*p, 2);
  p->Run();
  p.reset();
  EXPECT_EQ(log.destroyed.load(), 1);
  // And a new pipeline no longer finds it.
  Pipeline q = Pipeline::FromYaml(Yaml("pipe_kept"));
  FeedRandom(q, 1);
  EXPECT_THROW(q.Build(), ConfigError);
}

TEST(PythonFunctionPipeline, ReplacingARegistrationAffectsOnlyPipelinesBuiltAfter) {
  CallLog log;
  ASSERT_EQ(conveyor_register_function("pipe_swap", DoubleFloats, &log, CountDestroy), CONVEYOR_OK);
  Pipeline before = Pipeline::FromYaml(Yaml("pipe_swap"));
  FeedRandom(before, 3);
  before.Build();
  ScopedFunction replacement("pipe_swap", ShapeOf);
  EXPECT_EQ(log.destroyed.load(), 0);  // `before` still holds the first registration
  Pipeline after = Pipeline::FromYaml(Yaml("pipe_swap"));
  FeedRandom(after, 3);
  after.Build();
  ExpectDoubled(before.Outputs().Cpu(0), RandomFloats({4, 1, 6}, 3));
  const PipelineOutputs out = after.Outputs();
  EXPECT_EQ(out.Cpu(0).dtype(), DType::kInt64);
  EXPECT_EQ(out.Cpu(0).shape(0), Shape{1});
}

TEST(PythonFunctionPipeline, TwoFunctionNodesRunSideBySideOverManyIterations) {
  ScopedFunction a("pipe_side_a", DoubleFloats);
  ScopedFunction b("pipe_side_b", DoubleFloats, nullptr);
  const std::string yaml =
      "pipeline: {name: side, batch_size: 3, device: cpu, num_threads: 2, prefetch_depth: 3, seed: 1}\n"
      "ops:\n"
      "  - {op: external_source, name: in, args: {dtype: float32, ndim: 1}, outputs: [x]}\n"
      "  - {op: python_function, name: fa, inputs: [x], args: {function: pipe_side_a}, outputs: [ya]}\n"
      "  - {op: python_function, name: fb, inputs: [x], args: {function: pipe_side_b, batch_processing: false},\n"
      "     outputs: [yb]}\n"
      "outputs: [ya, yb]\n";
  Pipeline p = Pipeline::FromYaml(yaml);
  for (uint32_t k = 0; k < 3; ++k) FeedRandom(p, 100 + k);
  p.Build();
  for (uint32_t k = 0; k < 12; ++k) {
    PipelineOutputs out = p.Outputs();
    const TensorListCPU in = RandomFloats({4, 1, 6}, 100 + k);
    ExpectDoubled(out.Cpu(out.Index("ya")), in);
    ExpectDoubled(out.Cpu(out.Index("yb")), in);
    out.Release();
    FeedRandom(p, 103 + k);
    p.Run();
  }
}

TEST(FunctionRegistration, RefusalsNameTheParameterAndStillRunDestroy) {
  CallLog log;
  EXPECT_EQ(conveyor_register_function(nullptr, DoubleFloats, &log, CountDestroy),
            CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("conveyor_register_function: name: expected a non-NULL pointer"));
  EXPECT_EQ(conveyor_register_function("reg_null", nullptr, &log, CountDestroy), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("fn: expected a function, got NULL"));
  EXPECT_EQ(conveyor_register_function("", DoubleFloats, &log, CountDestroy), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("name: expected a non-empty name, got \"\""));
  EXPECT_EQ(log.destroyed.load(), 3);
}

TEST(FunctionRegistration, UnregisteringAnUnknownNameListsTheRegisteredOnes) {
  ScopedFunction f("reg_listed", DoubleFloats);
  EXPECT_EQ(conveyor_unregister_function("reg_unknown"), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("expected a registered function ("));
  EXPECT_THAT(conveyor_last_error(), HasSubstr("reg_listed"));
  EXPECT_THAT(conveyor_last_error(), HasSubstr("got \"reg_unknown\""));
}

TEST(FunctionRegistration, RegisteredNamesComeSortedOnePerLine) {
  ScopedFunction b("reg_names_b", DoubleFloats);
  ScopedFunction a("reg_names_a", DoubleFloats);
  size_t size = 0;
  ASSERT_EQ(conveyor_registered_functions(nullptr, 0, &size), CONVEYOR_OK);
  std::string text(size + 1, 'x');
  ASSERT_EQ(conveyor_registered_functions(text.data(), text.size(), &size), CONVEYOR_OK);
  text.resize(size);
  EXPECT_THAT(text, HasSubstr("reg_names_a\nreg_names_b\n"));
  char small[2];
  EXPECT_EQ(conveyor_registered_functions(small, sizeof(small), &size), CONVEYOR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(conveyor_last_error(), HasSubstr("capacity: expected at least"));
}

}  // namespace
}  // namespace conveyor::testing
