// The YAML loader and Graph::Build: one test per error message, on real files under testdata/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/yaml_loader.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;

const std::string kData = "tests/core/pipeline/testdata/";

// The message of the error that loading `file` and building its graph throws.
template <typename E = ConfigError>
std::string ErrorOf(const std::string& file, std::optional<bool> has_gpu = false) {
  try {
    Graph::Build(LoadPipelineFile(kData + file), {.has_gpu = has_gpu});
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << file << ": expected an error";
  return "";
}

TEST(YamlLoader, LoadsEveryField) {
  ::unsetenv("CONVEYOR_TEST_NAME");
  const PipelineSpec spec = LoadPipelineFile(kData + "valid.yaml");
  EXPECT_EQ(spec.name, "valid_pipeline");
  EXPECT_EQ(spec.batch_size, 8);
  EXPECT_EQ(spec.device, DeviceRequest::kAuto);
  EXPECT_EQ(spec.device_id, 0);
  EXPECT_EQ(spec.num_threads, 3);
  EXPECT_EQ(spec.prefetch_depth, 2);
  EXPECT_EQ(spec.seed, 1234u);
  EXPECT_TRUE(spec.graph_capture);
  ASSERT_EQ(spec.ops.size(), 4u);
  const OpSpec& reader = spec.ops[0];
  // Paths resolve against the file's folder.
  EXPECT_EQ(reader.Arg<std::string>("file_root"), kData + "data/samples");
  EXPECT_EQ(reader.Arg<std::string>("output_type"), "BGR");
  EXPECT_TRUE(reader.Arg<bool>("random_shuffle"));
  EXPECT_EQ(spec.ops[1].name(), "random.coin_flip_1");  // unnamed: op and position
  EXPECT_FLOAT_EQ(spec.ops[1].Arg<float>("probability"), 0.25f);
  const OpSpec& flip = spec.ops[2];
  EXPECT_EQ(flip.arg_inputs().at("horizontal"), "flip");
  EXPECT_EQ(flip.Arg<std::vector<double>>("mean"), (std::vector<double>{123.675, 116.28, 103.53}));
  EXPECT_EQ(flip.Arg<DType>("dtype"), DType::kFloat16);
  EXPECT_EQ(flip.device(), DeviceRequest::kGpu);
  EXPECT_EQ(spec.outputs, (std::vector<std::string>{"images", "labels"}));
  EXPECT_EQ(flip.Location("args.horizontal").line, 24);
}

TEST(YamlLoader, SubstitutesEnvironment) {
  ::setenv("CONVEYOR_TEST_NAME", "from_env", 1);
  EXPECT_EQ(LoadPipelineFile(kData + "valid.yaml").name, "from_env");
  ::unsetenv("CONVEYOR_TEST_NAME");
  EXPECT_EQ(SubstituteEnv("a${CONVEYOR_TEST_NAME:-x}b$${literal}", "here"), "axb${literal}");
  EXPECT_THAT(ErrorOf("env_unset.yaml"),
              HasSubstr("env_unset.yaml:2:15: pipeline.batch_size: environment variable "
                        "CONVEYOR_TEST_SURELY_UNSET_VAR is not set"));
}

TEST(YamlLoader, RoundTripsThroughYaml) {
  const PipelineSpec spec = LoadPipelineFile(kData + "valid.yaml");
  const std::string text = ToYaml(spec);
  const PipelineSpec again = ParsePipelineYaml(text, "<round trip>");
  EXPECT_EQ(again, spec) << text;
  EXPECT_EQ(ToYaml(again), text);
}

// cpu_stage_thread: auto unless set (and then not written back: checkpoints fingerprint ToYaml's
// text), true and false round-trip; anything else is refused at its file:line:col.
TEST(YamlLoader, CpuStageThreadIsTrueFalseOrAuto) {
  using StageThread = PipelineSpec::StageThread;
  const std::string head = "pipeline: {name: p, batch_size: 2, cpu_stage_thread: ";
  const std::string tail = "}\nops:\n  - {op: random.coin_flip, name: c, outputs: [f]}\noutputs: [f]\n";
  const PipelineSpec unset = ParsePipelineYaml("pipeline: {name: p, batch_size: 2" + tail);
  EXPECT_EQ(unset.cpu_stage_thread, StageThread::kAuto);
  EXPECT_EQ(ParsePipelineYaml(head + "auto" + tail), unset);
  EXPECT_EQ(ToYaml(unset).find("cpu_stage_thread"), std::string::npos);
  for (const auto& [text, value] : {std::pair{"true", StageThread::kOn}, std::pair{"false", StageThread::kOff}}) {
    const PipelineSpec set = ParsePipelineYaml(head + text + tail);
    EXPECT_EQ(set.cpu_stage_thread, value) << text;
    EXPECT_EQ(ParsePipelineYaml(ToYaml(set), "<round trip>"), set) << ToYaml(set);
  }
  try {
    ParsePipelineYaml(head + "sometimes" + tail, "stage.yaml");
    ADD_FAILURE() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("stage.yaml:1:54: pipeline.cpu_stage_thread: expected true, false or auto, got "
                                    "\"sometimes\""));
  }
}

TEST(YamlLoader, RoundTripKeepsAwkwardStrings) {
  PipelineSpec spec = LoadPipelineFile(kData + "valid.yaml");
  // Strings YAML would misread, a literal "${", and one that looks like an argument input.
  spec.ops[0].SetArg("file_root", std::string("/tmp/${HOME}: yes, #not a comment"));
  spec.ops[0].SetArg("output_type", std::string("GRAY"));
  spec.name = "$flip";
  const PipelineSpec again = ParsePipelineYaml(ToYaml(spec), "<round trip>");
  EXPECT_EQ(again, spec) << ToYaml(spec);
}

TEST(YamlErrors, SyntaxError) {
  EXPECT_THAT(ErrorOf("syntax_error.yaml"), HasSubstr("syntax_error.yaml:4:"));
  EXPECT_THAT(ErrorOf("syntax_error.yaml"), HasSubstr("YAML syntax error"));
}

// Found by fuzz/yaml_graph: a "${}" (no variable, no ":-") left in a value that does not parse
// threw std::out_of_range while the error note was written.
TEST(YamlErrors, EmptyVariableInAValueThatDoesNotParse) {
  try {
    ParsePipelineYaml("#g\npipeline:\n batch_size: '${T]:-${} '\n", "fuzzed.yaml");
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("fuzzed.yaml:3:"));
    EXPECT_THAT(e.what(), HasSubstr("pipeline.batch_size"));
    EXPECT_THAT(e.what(), HasSubstr("T] is unset, default \"${\", ${} is unset)"));
  }
}

TEST(YamlErrors, UnknownTopLevelKey) {
  EXPECT_THAT(ErrorOf("unknown_top_level_key.yaml"),
              HasSubstr("unknown_top_level_key.yaml:3:1: unknown top-level key \"opts\"; did you mean \"ops\"?"));
}

TEST(YamlErrors, UnknownOpKey) {
  EXPECT_THAT(ErrorOf("unknown_op_key.yaml"),
              HasSubstr("unknown_op_key.yaml:3:5: unknown key in op entry \"agrs\"; did you mean \"args\"?"));
}

TEST(YamlErrors, UnknownOperator) {
  EXPECT_THAT(ErrorOf("unknown_op.yaml"),
              HasSubstr("unknown_op.yaml:4:9: op \"random.coinflip\" (random.coinflip_0): unknown operator "
                        "\"random.coinflip\"; did you mean \"random.coin_flip\"?"));
}

TEST(YamlErrors, UnknownArgument) {
  EXPECT_THAT(ErrorOf("unknown_argument.yaml"),
              HasSubstr("unknown_argument.yaml:7:57: op \"test.flip\" (flip): unknown argument \"horizonal\"; did "
                        "you mean \"horizontal\"?"));
}

TEST(YamlErrors, WrongType) {
  EXPECT_THAT(ErrorOf("wrong_type.yaml"),
              HasSubstr("wrong_type.yaml:5:20: op \"random.coin_flip\" (coin): argument \"probability\": expected "
                        "float, got \"often\""));
}

TEST(YamlErrors, ValueOutOfRange) {
  EXPECT_THAT(ErrorOf("out_of_range.yaml"),
              HasSubstr("out_of_range.yaml:5:20: op \"random.coin_flip\" (coin): argument \"probability\": "
                        "expected a value in [0, 1], got 1.5"));
}

TEST(YamlErrors, ValueNotAChoice) {
  EXPECT_THAT(ErrorOf("bad_choice.yaml"),
              HasSubstr("bad_choice.yaml:4:42: op \"test.reader\" (reader): argument \"output_type\": expected one "
                        "of RGB, BGR, GRAY, got \"RBG\"; did you mean \"RGB\"?"));
}

TEST(YamlErrors, MissingRequiredArgument) {
  EXPECT_THAT(ErrorOf("missing_required.yaml"),
              HasSubstr("missing_required.yaml:4:11: op \"test.reader\" (reader): missing required argument "
                        "\"file_root\" (string)"));
}

TEST(YamlErrors, ArgumentNotPerSample) {
  EXPECT_THAT(ErrorOf("not_per_sample.yaml"),
              HasSubstr("not_per_sample.yaml:9:19: op \"cast\" (caster): argument \"dtype\" cannot be fed per sample "
                        "(\"$flip\")"));
}

TEST(GraphErrors, UnknownInputName) {
  EXPECT_THAT(ErrorOf("unknown_input.yaml"),
              HasSubstr("unknown_input.yaml:7:14: op \"copy\" (copier): input \"imagse\" is not produced by any "
                        "node; did you mean \"images\"?"));
}

TEST(GraphErrors, CycleIsNamed) {
  EXPECT_THAT(ErrorOf("cycle.yaml"), HasSubstr("the graph has a cycle: "));
  EXPECT_THAT(ErrorOf("cycle.yaml"), HasSubstr("a -> b -> c -> a"));
  EXPECT_THAT(ErrorOf("cycle.yaml"), HasSubstr("cycle.yaml:4:13: op \"copy\" (a)"));
}

TEST(GraphErrors, DuplicateOutputName) {
  EXPECT_THAT(ErrorOf("duplicate_output.yaml"),
              HasSubstr("duplicate_output.yaml:7:15: op \"random.uniform\" (second): duplicate output name "
                        "\"values\": also produced by op \"random.uniform\" (first) at "));
}

TEST(GraphErrors, DuplicateNodeName) {
  EXPECT_THAT(ErrorOf("duplicate_node.yaml"),
              HasSubstr("duplicate_node.yaml:6:11: op \"random.uniform\" (gen): duplicate node name \"gen\""));
}

TEST(GraphErrors, OpNotAvailableOnDevice) {
  EXPECT_THAT(ErrorOf("device_unavailable.yaml"),
              HasSubstr("device_unavailable.yaml:4:13: op \"test.reader\" (reader): not available on gpu (it runs "
                        "on: cpu)"));
}

TEST(GraphErrors, GpuOnlyOpInCpuPipeline) {
  EXPECT_THAT(ErrorOf("through_to_host.yaml", false), HasSubstr("device: gpu, but no CUDA device is usable"));
  PipelineSpec spec = LoadPipelineFile(kData + "through_to_host.yaml");
  spec.device = DeviceRequest::kCpu;
  try {
    Graph::Build(spec, {.has_gpu = true});
    ADD_FAILURE() << "expected an error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("through_to_host.yaml:10:13: op \"to_host\" (download): not available on cpu"));
  }
}

TEST(GraphErrors, PluginFailure) {
  const std::string message = ErrorOf<PluginError>("plugin_missing.yaml");
  EXPECT_THAT(message, HasSubstr("plugin_missing.yaml:4:5: plugin "));
  EXPECT_THAT(message, HasSubstr("plugins/libdoes_not_exist.so: file not found"));
}

TEST(GraphErrors, GpuToCpuEdgeNeedsTransfer) {
  EXPECT_THAT(ErrorOf("gpu_to_cpu.yaml", true),
              HasSubstr("gpu_to_cpu.yaml:11:14: op \"cast\" (narrow): input \"on_gpu\" is produced on the GPU by op "
                        "\"random.uniform\" (source) but read on the host; data flows back only through a transfer "
                        "op (to_host)"));
}

TEST(GraphErrors, ArgumentInputFromGpu) {
  EXPECT_THAT(ErrorOf("gpu_arg_input.yaml", true), HasSubstr("argument \"horizontal\" is fed from \"flip\""));
  EXPECT_THAT(ErrorOf("gpu_arg_input.yaml", true), HasSubstr("per-sample arguments are read on the host"));
}

TEST(GraphErrors, MissingPipelineOutput) {
  EXPECT_THAT(ErrorOf("missing_pipeline_output.yaml"),
              HasSubstr("missing_pipeline_output.yaml:4:11: pipeline output \"valeus\" is not produced by any node; "
                        "did you mean \"values\"?"));
}

TEST(Graph, TransferOpAllowsGpuToCpu) {
  const Graph g = Graph::Build(LoadPipelineFile(kData + "through_to_host.yaml"), {.has_gpu = true});
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.node("download").output_devices[0], Device::kCpu);
  EXPECT_EQ(g.node("narrow").inputs[0].data_device, Device::kCpu);
  EXPECT_TRUE(g.StagedEdges().empty());
}

TEST(Graph, GpuOnlyOpWithoutDeviceRunsOnTheGpu) {
  const PipelineSpec spec = LoadPipelineFile(kData + "to_host_default_device.yaml");
  EXPECT_EQ(spec.ops[1].device(), DeviceRequest::kGpu);
  const Graph g = Graph::Build(spec, {.has_gpu = true});
  EXPECT_EQ(g.node("download").device, Device::kGpu);
  EXPECT_EQ(g.node("download").output_devices[0], Device::kCpu);
  EXPECT_EQ(ParsePipelineYaml(ToYaml(spec), "<round trip>"), spec);  // the round trip keeps it
}

TEST(Graph, PlacesNodesAndMarksStagedEdgesWithGpu) {
  const Graph g = Graph::Build(LoadPipelineFile(kData + "valid.yaml"), {.has_gpu = true});
  EXPECT_EQ(g.device(), Device::kGpu);
  EXPECT_EQ(g.node("reader").device, Device::kCpu);
  EXPECT_EQ(g.node("random.coin_flip_1").device, Device::kCpu);
  EXPECT_EQ(g.node("flip").device, Device::kGpu);
  EXPECT_EQ(g.node("to_float").device, Device::kGpu);  // auto → gpu
  EXPECT_TRUE(g.node("flip").capturable());
  const GraphEdge& in = g.node("flip").inputs[0];
  EXPECT_TRUE(in.staged());
  EXPECT_EQ(g.nodes()[static_cast<size_t>(in.producer)].name(), "reader");
  ASSERT_EQ(g.node("flip").arg_inputs.size(), 1u);
  EXPECT_EQ(g.node("flip").arg_inputs[0].arg, "horizontal");
  EXPECT_EQ(g.StagedEdges(), (std::vector<std::pair<int, int>>{{g.node("flip").index, 0}}));
  EXPECT_FALSE(g.node("to_float").inputs[0].staged());
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_EQ(g.outputs()[0].device, Device::kGpu);
  EXPECT_EQ(g.outputs()[1].device, Device::kCpu);
}

TEST(Graph, FallsBackToCpuWithoutGpu) {
  const Graph g = Graph::Build(LoadPipelineFile(kData + "valid.yaml"), {.has_gpu = false});
  EXPECT_EQ(g.device(), Device::kCpu);
  for (const GraphNode& n : g.nodes()) EXPECT_EQ(n.device, Device::kCpu) << n.name();
  EXPECT_TRUE(g.StagedEdges().empty());
}

TEST(Graph, TopologicalOrderAndConsumers) {
  // Written consumers-first: the graph must still put producers first.
  const PipelineSpec spec = ParsePipelineYaml(R"(
ops:
  - {op: cast, name: last, inputs: [mid], args: {dtype: int32}, outputs: [out]}
  - {op: copy, name: middle, inputs: [src], outputs: [mid]}
  - {op: random.uniform, name: first, outputs: [src]}
outputs: [out]
)");
  const Graph g = Graph::Build(spec, {.has_gpu = false});
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0].name(), "first");
  EXPECT_EQ(g.nodes()[1].name(), "middle");
  EXPECT_EQ(g.nodes()[2].name(), "last");
  EXPECT_EQ(g.nodes()[0].consumers[0], (std::vector<std::pair<int, int>>{{1, 0}}));
  EXPECT_EQ(g.nodes()[2].inputs[0].producer, 1);
  EXPECT_EQ(g.outputs()[0].node, 2);
  // The factory instantiates the node's operator.
  EXPECT_NE(g.nodes()[1].CreateOperator(), nullptr);
}

TEST(Pipelines, ExamplesLoadAndBuild) {
  for (const auto& entry : std::filesystem::directory_iterator("pipelines")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    const PipelineSpec spec = LoadPipelineFile(entry.path().string());
    EXPECT_FALSE(Graph::Build(spec, {.has_gpu = false}).nodes().empty());
    EXPECT_EQ(ParsePipelineYaml(ToYaml(spec)), spec);
  }
}

}  // namespace
}  // namespace conveyor
