// core/op: schemas, specs, the registry, workspaces, Philox, and operators run through OpHarness.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/op/harness.h"
#include "core/op/philox.h"
#include "core/op/registry.h"
#include "tests/util/gpu_test.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;

template <typename E, typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

TEST(OpSchema, ValidatesItself) {
  EXPECT_THAT(ErrorOf<InvalidArgument>([] { OpSchema("Bad-Name").Backends({Device::kCpu}).Validate(); }),
              HasSubstr("op schema \"Bad-Name\": expected a lower-case name"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] { OpSchema("x").Validate(); }), HasSubstr("declares no backend"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpSchema("x").Arg<float>("p", 2.f, "").Range(0, 1).Backends({Device::kCpu}).Validate();
              }),
              HasSubstr("argument \"p\" default: expected a value in [0, 1], got 2"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpSchema("x").Arg<int>("a", 1, "").Arg<int>("a", 2, "").Backends({Device::kCpu}).Validate();
              }),
              HasSubstr("argument \"a\" declared twice"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpSchema("x").Arg<std::string>("s", "a", "", PerSample::kAllowed).Backends({Device::kCpu}).Validate();
              }),
              HasSubstr("only numbers and bools can be fed per sample"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] { OpSchema("x").Capturable().Backends({Device::kCpu}).Validate(); }),
              HasSubstr("Capturable() needs a GPU backend"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] { OpSchema("x").Range(0, 1); }), HasSubstr("Range must follow an Arg"));
}

// A repeated last input: the schema checks its range; a spec's count outside it is refused naming
// the range, the repeating input and the count.
TEST(OpSchema, RepeatLastInputRangeIsChecked) {
  EXPECT_THAT(ErrorOf<InvalidArgument>([] { OpSchema("x").RepeatLastInput(1, 4).Backends({Device::kCpu}).Validate(); }),
              HasSubstr("RepeatLastInput(1, 4) needs a declared input to repeat"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpSchema("x").Input("a").RepeatLastInput(3, 2).Backends({Device::kCpu}).Validate();
              }),
              HasSubstr("1 <= min <= max"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpSchema("x").Input("a").Input("b").Input("c").RepeatLastInput(1, 8).Backends({Device::kCpu}).Validate();
              }),
              HasSubstr("min counting the 2 fixed inputs before it"));
  const OpSchema ok = OpSchema("x").Input("a").Input("b").RepeatLastInput(2, 5);
  EXPECT_EQ(ok.min_inputs(), 2u);
  EXPECT_EQ(ok.max_inputs(), 5u);
  EXPECT_EQ(&ok.InputAt(4), &ok.inputs().back());
  OpSpec none("cat", "c");
  none.AddOutput("y");
  EXPECT_THAT(ErrorOf<SpecError>([&] { none.Validate(); }),
              HasSubstr("expected 1 to 64 inputs (input repeats), got 0"));
  OpSpec three("cat", "c");
  three.AddInput("a").AddInput("b").AddInput("d").AddOutput("y");
  EXPECT_NO_THROW(three.Validate());
}

TEST(ArgValue, TypesAndYaml) {
  EXPECT_EQ(ArgValue(3).type(), ArgType::kInt);
  EXPECT_EQ(ArgValue(0.5f).type(), ArgType::kFloat);
  EXPECT_EQ(ArgValue("RGB").type(), ArgType::kString);
  EXPECT_EQ(ArgValue(std::vector<float>{1, 2}).type(), ArgType::kFloatList);
  EXPECT_EQ(ArgValue(3).As<double>(), 3.0);  // ints serve floats
  EXPECT_EQ(ArgValue(std::vector<int>{1, 2}).As<std::vector<float>>(), (std::vector<float>{1, 2}));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] { ArgValue(0.5).As<int>(); }), HasSubstr("expected int, the value is float"));
  EXPECT_EQ(ArgValue(0.1).ToYaml(), "0.1");
  EXPECT_EQ(ArgValue(2.0).ToYaml(), "2.0");
  EXPECT_EQ(ArgValue(std::string("yes")).ToYaml(), "\"yes\"");
  EXPECT_EQ(ArgValue(std::vector<bool>{true, false}).ToYaml(), "[true, false]");
  EXPECT_EQ(ArgValue(DType::kFloat16).ToYaml(), "float16");
  EXPECT_EQ(ArgTypeOf<std::vector<DType>>(), ArgType::kDTypeList);
}

TEST(OpSpec, ValidateMessagesWithoutFile) {
  OpSpec spec("random.coin_flip", "coin");
  spec.AddOutput("f").SetArg("probabilty", 0.5);
  EXPECT_THAT(ErrorOf<SpecError>([&] { spec.Validate(); }),
              HasSubstr("op \"random.coin_flip\" (coin): unknown argument \"probabilty\"; did you mean "
                        "\"probability\"?"));
  OpSpec inputs("copy", "c");
  inputs.AddOutput("y");
  EXPECT_THAT(ErrorOf<SpecError>([&] { inputs.Validate(); }), HasSubstr("expected 1 input (input), got 0"));
  OpSpec cast("cast", "c");
  cast.AddInput("x").AddOutput("y");
  EXPECT_THAT(ErrorOf<SpecError>([&] { cast.Validate(); }), HasSubstr("missing required argument \"dtype\""));
  cast.SetArg("dtype", 3);
  EXPECT_THAT(ErrorOf<SpecError>([&] { cast.Validate(); }),
              HasSubstr("argument \"dtype\": expected dtype, got int 3"));
}

// An operator with one output per entry of its `names` list: each output i is [1] int32 = i.
class PerEntryOp final : public Operator {
 public:
  explicit PerEntryOp(const OpSpec& spec) : Operator(spec) {}
  OutputDescs Setup(const Workspace& ws) override {
    return OutputDescs(spec().outputs().size(),
                       TensorListDesc{std::vector<Shape>(static_cast<size_t>(ws.batch_size()), Shape{1}),
                                      DType::kInt32, {}});
  }
  void RunCpu(Workspace& ws) override {
    for (int o = 0; o < ws.num_outputs(); ++o) {
      for (int i = 0; i < ws.batch_size(); ++i) *static_cast<int32_t*>(ws.OutputCpu(o).raw_sample(i)) = o;
    }
  }
};

TEST(OpSchema, OutputPerEntryOfAListArgument) {
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpSchema("x").Output("o").OutputPerEntryOf("n").Arg<std::string>("n", "", "").Backends({Device::kCpu})
                    .Validate();
              }),
              HasSubstr("op schema \"x\": OutputPerEntryOf(\"n\") needs a list or int argument of that name and "
                        "exactly one declared output"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpSchema("x").Output("a").Output("b").OutputPerEntryOf("n")
                    .Arg<std::vector<std::string>>("n", {}, "").Backends({Device::kCpu}).Validate();
              }),
              HasSubstr("exactly one declared output"));
  static const bool registered = [] {
    OpRegistry::Global().Register(OpSchema("testing.per_entry")
                                      .Output("value", "One per name.")
                                      .OutputPerEntryOf("names")
                                      .Arg<std::vector<std::string>>("names", {"a", "b"}, "Names.")
                                      .Backends({Device::kCpu}),
                                  [](const OpSpec& spec) -> std::unique_ptr<Operator> {
                                    return std::make_unique<PerEntryOp>(spec);
                                  },
                                  "op_test");
    return true;
  }();
  (void)registered;
  // The default list has two entries; a set list decides the count.
  OpSpec two("testing.per_entry", "p");
  two.AddOutput("x");
  EXPECT_THAT(ErrorOf<SpecError>([&] { two.Validate(); }),
              HasSubstr("op \"testing.per_entry\" (p): expected 2 outputs, one per entry of argument \"names\", got 1"));
  two.AddOutput("y");
  EXPECT_NO_THROW(two.Validate());
  OpSpec three("testing.per_entry", "p");
  three.SetArg("names", std::vector<std::string>{"u", "v", "w"}).AddOutput("a").AddOutput("b");
  EXPECT_THAT(ErrorOf<SpecError>([&] { three.Validate(); }), HasSubstr("expected 3 outputs, one per entry"));
  three.AddOutput("c");
  OpHarness h(three, Device::kCpu, 4);
  h.Run();
  for (int o = 0; o < 3; ++o) {
    ASSERT_EQ(h.OutputCpu(o).num_samples(), 4);
    EXPECT_EQ(*static_cast<const int32_t*>(h.OutputCpu(o).raw_sample(3)), o);
  }
  EXPECT_THAT(OpRegistry::Global().Schema("testing.per_entry").Describe(), HasSubstr("(one output per entry of names)"));
}

TEST(OpRegistry, LookupWithSuggestion) {
  EXPECT_NE(OpRegistry::Global().Find("cast"), nullptr);
  EXPECT_THAT(ErrorOf<ConfigError>([] { OpRegistry::Global().Get("random.unifrom"); }),
              HasSubstr("unknown operator \"random.unifrom\"; did you mean \"random.uniform\"?"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([] {
                OpRegistry::Global().Register(OpSchema("cast").Backends({Device::kCpu}),
                                              [](const OpSpec&) -> std::unique_ptr<Operator> { return nullptr; },
                                              "this test");
              }),
              HasSubstr("operator \"cast\" is already registered (by built-in); a second registration came from "
                        "this test"));
  const std::vector<std::string> names = OpRegistry::Global().Names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Philox, KnownAnswerAndIndependence) {
  // Random123's philox4x32-10 known answer for counter 0, key 0.
  Philox zero(0, 0, 0, 0);
  EXPECT_EQ(zero.NextU32(), 0x6627e8d5u);
  EXPECT_EQ(zero.NextU32(), 0xe169c58du);
  EXPECT_EQ(zero.NextU32(), 0xbc57ac4cu);
  EXPECT_EQ(zero.NextU32(), 0x9b00dbd8u);
  // Seek lands on the same draw as the sequential walk.
  Philox walk(99, 7, 3, 5), seek(99, 7, 3, 5);
  std::vector<uint32_t> seq;
  for (int i = 0; i < 11; ++i) seq.push_back(walk.NextU32());
  seek.Seek(9);
  EXPECT_EQ(seek.NextU32(), seq[9]);
  EXPECT_EQ(seek.NextU32(), seq[10]);
  // Every part of the key changes the stream.
  std::set<uint32_t> firsts;
  for (auto [seed, node, it, sample] : std::vector<std::tuple<uint64_t, uint32_t, uint64_t, uint32_t>>{
           {1, 2, 3, 4}, {2, 2, 3, 4}, {1, 3, 3, 4}, {1, 2, 4, 4}, {1, 2, 3, 5}, {1, 2, (1ull << 32) + 3, 4}}) {
    firsts.insert(Philox(seed, node, it, sample).NextU32());
  }
  EXPECT_EQ(firsts.size(), 6u);
  Philox u(5, 6, 7, 8);
  for (int i = 0; i < 1000; ++i) {
    const float v = u.NextUniform(-2.f, 3.f);
    ASSERT_GE(v, -2.f);
    ASSERT_LT(v, 3.f);
  }
}

TEST(Workspace, PerSampleArgumentsAndBindings) {
  OpSpec spec("random.coin_flip", "coin");
  spec.AddOutput("f").SetArg("probability", 0.25);
  Workspace ws(spec, 3);
  EXPECT_FLOAT_EQ(ws.Arg<float>("probability"), 0.25f);
  EXPECT_EQ(ws.ArgPerSample<float>("probability"), (std::vector<float>{0.25f, 0.25f, 0.25f}));
  const std::vector<float> fed = testing::RandomVector<float>(3, 0.f, 1.f);
  TensorListCPU values = MakeBatch<float>({{}, {}, {}}, {{fed[0]}, {fed[1]}, {fed[2]}});
  ws.SetArgInput("probability", values);
  EXPECT_TRUE(ws.IsArgPerSample("probability"));
  EXPECT_EQ(ws.ArgPerSample<float>("probability"), fed);
  EXPECT_THAT(ErrorOf<InvalidArgument>([&] { ws.Arg<float>("probability"); }),
              HasSubstr("argument \"probability\" is fed per sample"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([&] { ws.ArgForSample<float>("probability", 3); }),
              HasSubstr("is fed 3 samples, sample 3 was asked for"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([&] { ws.stream(); }), HasSubstr("no CUDA stream in this workspace"));
  EXPECT_THAT(ErrorOf<InvalidArgument>([&] { ws.InputCpu(0); }), HasSubstr("input 0 is out of range"));
  TensorListCPU out;
  ws.AddOutput(out);
  EXPECT_THAT(ErrorOf<InvalidArgument>([&] { ws.OutputGpu(0); }), HasSubstr("output 0 is not on the device"));
  EXPECT_EQ(ws.node_id(), NodeId("coin"));
}

TensorListCPU RandomFloats(const std::vector<Shape>& shapes) {
  std::vector<std::vector<float>> values;
  for (const Shape& s : shapes) values.push_back(testing::RandomVector<float>(static_cast<size_t>(s.num_elements()), -100.f, 100.f));
  return MakeBatch<float>(shapes, values, "HWC");
}

TEST(Cast, CpuMatchesStaticCast) {
  const std::vector<Shape> shapes = {{3, 4, 2}, {5, 1, 2}, {2, 2, 2}};
  TensorListCPU in = RandomFloats(shapes);
  OpHarness h(OpSpec("cast", "c").AddInput("x").AddOutput("y").SetArg("dtype", DType::kInt16), Device::kCpu);
  h.SetInput(0, in);
  h.Run();
  const TensorListCPU out = h.OutputToHost(0);
  ASSERT_EQ(out.shapes(), shapes);
  EXPECT_EQ(out.dtype(), DType::kInt16);
  EXPECT_EQ(out.layout(), Layout("HWC"));
  for (int s = 0; s < 3; ++s) {
    for (int64_t j = 0; j < shapes[static_cast<size_t>(s)].num_elements(); ++j) {
      ASSERT_EQ(static_cast<const int16_t*>(out.raw_sample(s))[j],
                static_cast<int16_t>(static_cast<const float*>(in.raw_sample(s))[j]));
    }
  }
}

TEST(Cast, GpuMatchesCpu) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = {{7, 3}, {1, 3}, {64, 3}};
  TensorListCPU in = RandomFloats(shapes);
  OpSpec spec = OpSpec("cast", "c").AddInput("x").AddOutput("y").SetArg("dtype", DType::kInt32);
  OpHarness cpu(spec, Device::kCpu), gpu(spec, Device::kGpu);
  cpu.SetInput(0, in);
  gpu.SetInput(0, in);
  cpu.Run();
  cuda::Stream stream = cuda::Stream::Create();
  gpu.Run(stream.view());
  const TensorListCPU a = cpu.OutputToHost(0), b = gpu.OutputToHost(0);
  ASSERT_EQ(a.nbytes(), b.nbytes());
  for (int s = 0; s < 3; ++s) {
    ASSERT_EQ(std::memcmp(a.raw_sample(s), b.raw_sample(s), static_cast<size_t>(shapes[static_cast<size_t>(s)].num_elements()) * 4), 0);
  }
}

TEST(Random, CoinFlipFollowsPerSampleProbability) {
  OpHarness h(OpSpec("random.coin_flip", "coin").AddOutput("f").SetArg("shape", std::vector<int64_t>{4000}),
              Device::kCpu, 2);
  h.SetArgInput("probability", MakeBatch<float>({{}, {}}, {{0.1f}, {0.9f}}));
  h.set_seed(testing::RngSeed());
  h.Run();
  const TensorListCPU out = h.OutputToHost(0);
  for (int s = 0; s < 2; ++s) {
    const int32_t* v = static_cast<const int32_t*>(out.raw_sample(s));
    int ones = 0;
    for (int j = 0; j < 4000; ++j) {
      ASSERT_TRUE(v[j] == 0 || v[j] == 1);
      ones += v[j];
    }
    EXPECT_NEAR(ones / 4000.0, s == 0 ? 0.1 : 0.9, 0.03);
  }
}

TEST(Random, UniformIsReproducibleAndVariesByIteration) {
  const OpSpec spec = OpSpec("random.uniform", "u").AddOutput("v").SetArg("range", std::vector<double>{-3, 5}).SetArg(
      "shape", std::vector<int64_t>{3, 5});
  const auto run = [&](int64_t iteration, int threads) {
    OpHarness h(spec, Device::kCpu, 4);
    h.set_num_threads(threads);
    h.set_iteration(iteration);
    h.Run();
    const TensorListCPU out = h.OutputToHost(0);
    const float* p = static_cast<const float*>(out.raw_sample(0));
    std::vector<float> v;
    for (int s = 0; s < 4; ++s) {
      p = static_cast<const float*>(out.raw_sample(s));
      v.insert(v.end(), p, p + 15);
    }
    return v;
  };
  const std::vector<float> a = run(7, 1), b = run(7, 3), c = run(8, 2);
  EXPECT_EQ(a, b);  // thread count does not matter
  EXPECT_NE(a, c);  // the iteration does
  for (float x : a) {
    ASSERT_GE(x, -3.f);
    ASSERT_LT(x, 5.f);
  }
}

TEST(Random, GpuDrawsEqualCpuDraws) {
  CONVEYOR_REQUIRE_GPU();
  for (const char* op : {"random.uniform", "random.coin_flip"}) {
    SCOPED_TRACE(op);
    const OpSpec spec = OpSpec(op, "r").AddOutput("v").SetArg("shape", std::vector<int64_t>{1000});
    OpHarness cpu(spec, Device::kCpu, 5), gpu(spec, Device::kGpu, 5);
    for (OpHarness* h : {&cpu, &gpu}) {
      h->set_seed(testing::RngSeed());
      h->set_iteration(41);
    }
    cpu.Run();
    cuda::Stream stream = cuda::Stream::Create();
    gpu.Run(stream.view());
    const TensorListCPU a = cpu.OutputToHost(0), b = gpu.OutputToHost(0);
    for (int s = 0; s < 5; ++s) ASSERT_EQ(std::memcmp(a.raw_sample(s), b.raw_sample(s), 4000), 0) << "sample " << s;
  }
}

TEST(OpHarness, GpuRunNeedsAStream) {
  OpHarness h(OpSpec("random.uniform", "u").AddOutput("v"), Device::kGpu, 1);
  EXPECT_THAT(ErrorOf<InvalidArgument>([&] { h.Run(); }), HasSubstr("a GPU run needs a stream"));
  EXPECT_THAT(ErrorOf<SpecError>([] { OpHarness(OpSpec("to_host", "t").AddInput("x").AddOutput("y"), Device::kCpu); }),
              HasSubstr("not available on cpu"));
}

}  // namespace
}  // namespace conveyor
