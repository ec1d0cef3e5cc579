// Bad input that used to be accepted (issue 15): repeated YAML keys, a pipeline output listed
// twice, and argument errors found by operator constructors or at run time without a position.
// One test per message, on real files under testdata/ where the position matters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/yaml_loader.h"

namespace conveyor {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kData = "tests/reliability/testdata/";

// The error that loading `file`, building its graph and its operators throws (CPU only).
template <typename E = ConfigError>
std::string ErrorOf(const std::string& file) {
  try {
    Pipeline p(LoadPipelineFile(kData + file), {.has_gpu = false});
    p.Build();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << file << ": expected an error";
  return "";
}

// The same for YAML text (named "ops.yaml" in messages).
template <typename E = ConfigError>
std::string TextErrorOf(const std::string& yaml) {
  try {
    Pipeline p(ParsePipelineYaml(yaml, "ops.yaml"), {.has_gpu = false});
    p.Build();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << yaml << "\nexpected an error";
  return "";
}

// --- the same key twice ----------------------------------------------------------------------

TEST(DuplicateKeys, PipelineTwiceAtTheTopLevelNamesBothPositions) {
  EXPECT_EQ(ErrorOf("dup_pipeline.yaml"),
            kData + "dup_pipeline.yaml:6:1: duplicate key \"pipeline\" at the top level: first at " + kData +
                "dup_pipeline.yaml:2:1, again here; a key may appear once per map");
}

TEST(DuplicateKeys, ArgumentTwiceInArgs) {
  EXPECT_EQ(ErrorOf("dup_arg.yaml"), kData + "dup_arg.yaml:9:7: duplicate key \"range\" in ops[0].args: first at " +
                                         kData + "dup_arg.yaml:7:7, again here; a key may appear once per map");
}

TEST(DuplicateKeys, KeyTwiceInAnOpEntryAndInPipeline) {
  EXPECT_THAT(ErrorOf("dup_op_key.yaml"),
              AllOf(StartsWith(kData + "dup_op_key.yaml:7:54: duplicate key \"name\" in ops[0]: "),
                    HasSubstr("first at " + kData + "dup_op_key.yaml:7:26")));
  EXPECT_THAT(ErrorOf("dup_pipeline_key.yaml"),
              AllOf(StartsWith(kData + "dup_pipeline_key.yaml:5:3: duplicate key \"batch_size\" in pipeline: "),
                    HasSubstr("first at " + kData + "dup_pipeline_key.yaml:3:3")));
}

TEST(DuplicateKeys, DeeperMapsAndAliasesAreChecked) {
  // A map inside a list inside args: not our format's business, but still never silently dropped.
  EXPECT_THAT(TextErrorOf("pipeline: {device: cpu}\n"
                          "ops:\n"
                          "  - {op: random.uniform, outputs: [u], args: {shape: [{a: 1, a: 2}]}}\n"
                          "outputs: [u]\n"),
              StartsWith("ops.yaml:3:62: duplicate key \"a\" in ops[0].args.shape[0]: first at ops.yaml:3:56"));
  // An anchored map used twice is walked once: no false duplicate, and the real error is the next.
  EXPECT_THAT(TextErrorOf("pipeline: &p {device: cpu, batch_size: 2}\n"
                          "ops:\n"
                          "  - {op: random.uniform, name: u, args: {range: [2.0, 1.0]}, outputs: [u]}\n"
                          "outputs: [u]\n"
                          "x: *p\n"),
              HasSubstr("ops.yaml:5:1: unknown top-level key \"x\""));
  // Hostile nesting is refused before it can exhaust the stack.
  std::string deep = "pipeline: {device: cpu}\nops:\n  - {op: random.uniform, outputs: [u], args: {shape: ";
  for (int i = 0; i < 100; ++i) deep += "[";
  for (int i = 0; i < 100; ++i) deep += "]";
  EXPECT_THAT(TextErrorOf(deep + "}}\noutputs: [u]\n"),
              AllOf(StartsWith("ops.yaml:3:"), HasSubstr("nested more than 64 levels deep (at ops[0].args.shape[0][0]"),
                    HasSubstr("a pipeline file needs a few")));
  // Distinct keys that only look alike are fine.
  EXPECT_NO_THROW(ParsePipelineYaml("pipeline: {device: cpu}\nops:\n  - {op: random.uniform, outputs: [u]}\n"
                                    "outputs: [u]\n"));
}

// --- a pipeline output listed twice ----------------------------------------------------------

TEST(DuplicateOutputs, RefusedWithBothPositions) {
  EXPECT_EQ(ErrorOf("dup_output.yaml"), kData + "dup_output.yaml:7:11: pipeline output \"values\" is listed twice "
                                                "(first as outputs[0] at " +
                                            kData + "dup_output.yaml:6:11); list each output once");
}

TEST(DuplicateOutputs, RefusedForSpecsBuiltInCpp) {
  PipelineSpec spec;
  spec.device = DeviceRequest::kCpu;
  spec.ops.push_back(OpSpec("random.uniform", "u").AddOutput("u"));
  spec.outputs = {"u", "u"};
  EXPECT_THAT([&] { Graph::Build(spec, {.has_gpu = false}); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("pipeline output \"u\" is listed twice (first as outputs[0])")));
  spec.outputs = {"u"};
  EXPECT_NO_THROW(Graph::Build(spec, {.has_gpu = false}));
}

// --- argument errors found by operator constructors carry the argument's position ---------------

TEST(ArgumentPositions, UniformRangeReversed) {
  try {
    Pipeline p(LoadPipelineFile(kData + "uniform_reversed.yaml"), {.has_gpu = false});
    p.Build();
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.arg(), "range");
    EXPECT_EQ(std::string(e.what()), kData + "uniform_reversed.yaml:6:31: op \"random.uniform\" (u): range must be "
                                             "[lo, hi] with lo < hi");
  }
}

TEST(ArgumentPositions, UniformOneElementRange) {
  EXPECT_EQ(ErrorOf("uniform_one.yaml"),
            kData + "uniform_one.yaml:6:14: op \"random.uniform\" (u): range must be [lo, hi] with lo < hi");
}

// Several operators' constructor checks, each reported at its argument's value.
TEST(ArgumentPositions, ConstructorChecksOfSeveralOperators) {
  const std::string head =
      "pipeline: {device: cpu, batch_size: 2}\n"
      "ops:\n"
      "  - {op: external_source, name: src, args: {dtype: uint8, ndim: 3}, outputs: [images]}\n";
  struct Case {
    std::string node;  // line 4 of the file
    std::string arg;
    int column;
    std::string message;
  };
  const Case cases[] = {
      {"  - {op: random.normal, name: n, args: {dtype: int32}, outputs: [out]}", "dtype", 48,
       "op \"random.normal\" (n): argument \"dtype\": expected float32 or float16, got int32"},
      {"  - {op: crop_mirror_normalize, name: cmn, inputs: [images], args: {crop: [224]}, outputs: [out]}", "crop",
       75, "op \"crop_mirror_normalize\" (cmn): argument \"crop\": expected [h, w], got 1 values"},
      {"  - {op: crop_mirror_normalize, name: cmn, inputs: [images], args: {output_layout: WHC}, outputs: [out]}",
       "output_layout", 84, "argument \"output_layout\": expected CHW or HWC (FCHW or FHWC for clips), got WHC"},
      {"  - {op: random_resized_crop, name: rrc, inputs: [images], args: {size: [224, 224, 3]}, outputs: [out]}",
       "size", 73, "op \"random_resized_crop\" (rrc): size must be [h, w], got 3 values"},
      {"  - {op: transpose, name: t, inputs: [images], args: {perm: [0, 0, 1]}, outputs: [out]}", "perm", 61,
       "op \"transpose\" (t): argument \"perm\": expected a permutation of 0.."},
      {"  - {op: crop, name: c, inputs: [images], args: {crop: [2, 2], fill_values: []}, outputs: [out]}",
       "fill_values", 77, "op \"crop\" (c): fill_values must have 1 to "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.node);
    try {
      Pipeline p(ParsePipelineYaml(head + c.node + "\noutputs: [out]\n", "ops.yaml"), {.has_gpu = false});
      p.Build();
      ADD_FAILURE() << "expected an ArgumentError";
    } catch (const ArgumentError& e) {
      EXPECT_EQ(e.arg(), c.arg);
      EXPECT_THAT(e.what(), StartsWith("ops.yaml:4:" + std::to_string(c.column) + ": "));
      EXPECT_THAT(e.what(), HasSubstr(c.message));
    }
  }
}

TEST(ArgumentPositions, SpecsBuiltInCppGetTheArgumentNameWithoutAPosition) {
  PipelineSpec spec;
  spec.device = DeviceRequest::kCpu;
  spec.ops.push_back(OpSpec("random.uniform", "range").SetArg("range", std::vector<double>{3.0, 3.0}).AddOutput("u"));
  spec.outputs = {"u"};
  Pipeline p(spec, {.has_gpu = false});
  try {
    p.Build();
    FAIL() << "expected an ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.arg(), "range");
    EXPECT_EQ(std::string(e.what()), "op \"random.uniform\" (range): range must be [lo, hi] with lo < hi");
  }
}

// An argument checked only when data arrives (a per-sample value, or a value whose validity
// depends on the input) is reported by Outputs() with the iteration, the node and the position.
TEST(ArgumentPositions, RunTimeArgumentErrorsLeadWithThePosition) {
  Pipeline p(ParsePipelineYaml("pipeline: {device: cpu, batch_size: 3, prefetch_depth: 1}\n"
                               "ops:\n"
                               "  - {op: random.uniform, name: u, args: {shape: [5]}, outputs: [x]}\n"
                               "  - op: normalize\n"
                               "    name: norm\n"
                               "    inputs: [x]\n"
                               "    args: {mean: [0.5], std: [0.0]}\n"
                               "    outputs: [y]\n"
                               "outputs: [y]\n",
                               "ops.yaml"),
             {.has_gpu = false});
  p.Build();
  EXPECT_THAT([&] { p.Outputs(); },
              ::testing::ThrowsMessage<InvalidArgument>(AllOf(
                  StartsWith("ops.yaml:7:30: pipeline \"pipeline\": iteration 0: node \"norm\" (op \"normalize\"): "),
                  HasSubstr("argument \"std\": must be nonzero, got 0 for channel 0 at sample 0"))));
}

TEST(ArgumentPositions, PerSampleArgumentFedFromAnotherNode) {
  Pipeline p(ParsePipelineYaml("pipeline: {device: cpu, batch_size: 4, prefetch_depth: 1}\n"
                               "ops:\n"
                               "  - {op: random.uniform, name: s, args: {range: [-2.0, -1.0]}, outputs: [sd]}\n"
                               "  - {op: random.normal, name: n, args: {stddev: $sd}, outputs: [z]}\n"
                               "outputs: [z]\n",
                               "ops.yaml"),
             {.has_gpu = false});
  p.Build();
  EXPECT_THAT([&] { p.Outputs(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  AllOf(StartsWith("ops.yaml:4:49: pipeline \"pipeline\": iteration 0: node \"n\""),
                        HasSubstr("argument \"stddev\": expected a value >= 0, got -"))));
}

// A path argument whose file system check fails in the constructor points at the path.
TEST(ArgumentPositions, ReaderFileRootThatDoesNotExist) {
  EXPECT_THAT(TextErrorOf<ArgumentError>(
                  "pipeline: {device: cpu, batch_size: 2}\n"
                  "ops:\n"
                  "  - {op: readers.file, name: r, args: {file_root: no_such_folder}, outputs: [a, b]}\n"
                  "outputs: [a]\n"),
              AllOf(StartsWith("ops.yaml:3:51: op \"readers.file\" (r): file_root \""), HasSubstr("no_such_folder")));
}

}  // namespace
}  // namespace conveyor
