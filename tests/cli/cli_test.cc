// `conveyor` usage errors, `validate` and `ops`: the real binary on real files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/cli/cli_runner.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// "file:line:col" of the first occurrence of `needle` in `text` (1-based), as the loader reports.
std::string Where(const std::string& file, const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  int line = 1, col = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

const char kGood[] = R"(pipeline:
  name: good
  batch_size: 2
ops:
  - op: random.uniform
    name: noise
    args: {range: [0, 1], shape: [2]}
    outputs: [noise]
outputs: [noise]
)";

const char kUnknownArg[] = R"(pipeline:
  name: bad
ops:
  - op: random.uniform
    name: noise
    args: {range: [0, 1], shpe: [2]}
    outputs: [noise]
outputs: [noise]
)";

const char kMissingInput[] = R"(pipeline:
  name: bad
ops:
  - op: cast
    inputs: [nothing]
    args: {dtype: int32}
    outputs: [x]
outputs: [x]
)";

TEST(CliUsage, NoCommandPrintsUsageAndExits2) {
  const CliResult r = RunConveyor({});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("Usage: conveyor"));
  EXPECT_THAT(r.err, HasSubstr("validate"));
  EXPECT_THAT(r.err, HasSubstr("preview"));
}

TEST(CliUsage, UnknownOptionExits2WithUsage) {
  const CliResult r = RunConveyor({"run", "x.yaml", "--itrations", "3"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--itrations"));
  EXPECT_THAT(r.err, HasSubstr("Usage: conveyor run"));
}

TEST(CliUsage, BadValuesExit2) {
  EXPECT_EQ(RunConveyor({"run", "x.yaml", "--iterations", "-3"}).status, 2);
  EXPECT_EQ(RunConveyor({"run", "x.yaml", "--device", "tpu"}).status, 2);
  EXPECT_EQ(RunConveyor({"run", "x.yaml", "--iterations", "2", "--epochs", "1"}).status, 2);
  EXPECT_EQ(RunConveyor({"preview", "x.yaml"}).status, 2);  // -o is required
  EXPECT_EQ(RunConveyor({"validate"}).status, 2);
}

TEST(CliUsage, UnknownCommandSuggestsOneAndExits2) {
  const CliResult r = RunConveyor({"runn", "x.yaml"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("conveyor: unknown command \"runn\"; did you mean \"run\"?"));
  EXPECT_THAT(r.err, HasSubstr("Usage: conveyor"));
}

TEST(CliUsage, BoundsAreStatedInTheMessage) {
  const CliResult repeats = RunConveyor({"bench", "x.yaml", "--repeats", "0"});
  EXPECT_EQ(repeats.status, 2);
  EXPECT_THAT(repeats.err, HasSubstr("--repeats: expected an integer >= 1, got \"0\""));
  EXPECT_THAT(repeats.err, HasSubstr("Usage: conveyor bench"));
  const CliResult text = RunConveyor({"bench", "x.yaml", "--iterations", "abc"});
  EXPECT_EQ(text.status, 2);
  EXPECT_THAT(text.err, HasSubstr("--iterations: expected an integer >= 1, got \"abc\""));
  const CliResult fraction = RunConveyor({"run", "x.yaml", "--epochs", "1.5"});
  EXPECT_EQ(fraction.status, 2);
  EXPECT_THAT(fraction.err, HasSubstr("--epochs: expected an integer >= 1, got \"1.5\""));
  const CliResult interval = RunConveyor({"run", "x.yaml", "--progress-interval", "-1"});
  EXPECT_EQ(interval.status, 2);
  EXPECT_THAT(interval.err, HasSubstr("--progress-interval: expected a number >= 0, got \"-1\""));
  EXPECT_EQ(RunConveyor({"bench", "x.yaml", "--warmup", "-1"}).status, 2);
  EXPECT_EQ(RunConveyor({"preview", "x.yaml", "-o", "g.png", "--samples", "0"}).status, 2);
  EXPECT_EQ(RunConveyor({"run", "a.yaml", "b.yaml"}).status, 2);  // one pipeline per run
}

TEST(CliUsage, UserErrorsAreOneLineAndExit1InEveryCommand) {
  const std::string dir = MakeTempDir("user_errors");
  for (const char* command : {"run", "bench", "preview"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args = {command, dir + "/none.yaml"};
    if (std::string(command) == "preview") args.insert(args.end(), {"-o", dir + "/g.png"});
    const CliResult r = RunConveyor(args);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "conveyor " + std::string(command) + ": error: " + dir + "/none.yaml: cannot open the pipeline file\n");
  }
  WriteText(dir + "/syntax.yaml", "pipeline: {name: x\nops: [\n");
  const CliResult syntax = RunConveyor({"run", dir + "/syntax.yaml"});
  EXPECT_EQ(syntax.status, 1);
  EXPECT_THAT(syntax.err, HasSubstr("conveyor run: error: " + dir + "/syntax.yaml:2:"));
  EXPECT_THAT(syntax.err, HasSubstr("YAML syntax error"));
  // A data folder that is not there: the reader node, its argument's position and the path.
  const CliResult data = RunConveyor({"run", "pipelines/image_classification_train.yaml", "--device", "cpu", "--set",
                                      "reader.file_root=" + dir + "/no_such_dir"});
  EXPECT_EQ(data.status, 1);
  EXPECT_THAT(data.err, HasSubstr("pipelines/image_classification_train.yaml:"));
  EXPECT_THAT(data.err, HasSubstr("(reader): file_root \"" + dir + "/no_such_dir\" does not exist"));
  EXPECT_THAT(data.err, Not(HasSubstr("terminate")));
}

TEST(CliUsage, HelpExits0) {
  const CliResult r = RunConveyor({"run", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("--save-outputs"));
}

TEST(CliValidate, GoodFileExits0) {
  const std::string dir = MakeTempDir("validate_good");
  WriteText(dir + "/good.yaml", kGood);
  const CliResult r = RunConveyor({"validate", dir + "/good.yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(dir + "/good.yaml: ok (1 ops, outputs: noise)"));
  EXPECT_EQ(r.err, "");
}

TEST(CliValidate, EveryFileReportedWithLineAndColumn) {
  const std::string dir = MakeTempDir("validate_bad");
  const std::string good = dir + "/good.yaml", arg = dir + "/arg.yaml", input = dir + "/input.yaml";
  const std::string syntax = dir + "/syntax.yaml", missing = dir + "/missing.yaml";
  WriteText(good, kGood);
  WriteText(arg, kUnknownArg);
  WriteText(input, kMissingInput);
  WriteText(syntax, "pipeline: {name: t\nops: [");
  const CliResult r = RunConveyor({"validate", arg, good, input, syntax, missing});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.out, HasSubstr(good + ": ok"));
  EXPECT_THAT(r.err, HasSubstr(Where(arg, kUnknownArg, "shpe") +
                               ": op \"random.uniform\" (noise): unknown argument \"shpe\"; did you mean \"shape\"?"));
  EXPECT_THAT(r.err, HasSubstr(Where(input, kMissingInput, "nothing") + ": op \"cast\""));
  EXPECT_THAT(r.err, HasSubstr("input \"nothing\" is not produced by any node"));
  EXPECT_THAT(r.err, HasSubstr(syntax + ":2:"));
  EXPECT_THAT(r.err, HasSubstr("YAML syntax error"));
  EXPECT_THAT(r.err, HasSubstr(missing + ": cannot open the pipeline file"));
  EXPECT_THAT(r.err, Not(HasSubstr("terminate")));
}

// A python_function's function cannot be checked by validate (the application registers it): the ok
// line names each one it needs and its node, so a user is not surprised by `conveyor run`.
TEST(CliValidate, NamesTheUserFunctionsAFileNeeds) {
  const std::string dir = MakeTempDir("validate_function");
  WriteText(dir + "/fn.yaml", R"(pipeline: {name: t, batch_size: 2, device: cpu}
ops:
  - op: random.uniform
    name: src
    args: {range: [0.0, 1.0], shape: [4]}
    outputs: [x]
  - op: python_function
    name: fn
    inputs: [x]
    args: {function: my_transform}
    outputs: [y]
outputs: [y]
)");
  const CliResult r = RunConveyor({"validate", dir + "/fn.yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(dir + "/fn.yaml: ok (2 ops, outputs: y); needs functions the application registers "
                               "before building it: \"my_transform\" (node \"fn\") (conveyor run cannot call user code)"));
}

TEST(CliValidate, ShippedPipelinesAreValid) {
  const CliResult r = RunConveyor({"validate", "pipelines/random_augment.yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(CliOps, ListsEveryOperatorWithDevices) {
  const CliResult r = RunConveyor({"ops"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cast "));
  EXPECT_THAT(r.out, HasSubstr("[cpu, gpu (capturable)]"));
  EXPECT_THAT(r.out, HasSubstr("readers.file "));
  EXPECT_THAT(r.out, HasSubstr("random.uniform "));
}

TEST(CliOps, OnePageHasArgumentsTypesDefaultsAndRanges) {
  const CliResult r = RunConveyor({"ops", "readers.file"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("devices:     cpu"));
  EXPECT_THAT(r.out, HasSubstr("capturable:  no"));
  EXPECT_THAT(r.out, HasSubstr("num_shards: int = 1, range >= 1"));
  EXPECT_THAT(r.out, HasSubstr("file_root: string = \"\", path (relative to the YAML file)"));
  const CliResult cast = RunConveyor({"ops", "cast"});
  EXPECT_THAT(cast.out, HasSubstr("dtype: dtype = required"));
  const CliResult coin = RunConveyor({"ops", "random.coin_flip"});
  EXPECT_THAT(coin.out, HasSubstr("probability: float = 0.5, range [0, 1], per-sample ($node)"));
}

TEST(CliOps, UnknownOperatorIsAUserError) {
  const CliResult r = RunConveyor({"ops", "random.unifrm"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("conveyor ops: error: unknown operator \"random.unifrm\"; did you mean \"random.uniform\"?"));
}

TEST(CliOps, PluginOperatorsJoinTheCatalogue) {
  const CliResult r = RunConveyor({"ops", "--plugin", "tests/cli/libcli_invert.so", "cli_example.invert"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("255 - x"));
  EXPECT_THAT(r.out, HasSubstr("origin:      plugin tests/cli/libcli_invert.so"));
  const CliResult list = RunConveyor({"ops", "--plugin", "tests/cli/libcli_invert.so"});
  EXPECT_THAT(list.out, HasSubstr("(plugin tests/cli/libcli_invert.so)"));
}

TEST(CliOps, MissingPluginIsAUserError) {
  const CliResult r = RunConveyor({"ops", "--plugin", "no/such/libplugin.so"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("conveyor ops: error:"));
  EXPECT_THAT(r.err, HasSubstr("no/such/libplugin.so"));
}

TEST(CliOps, MarkdownOfOneOperator) {
  const CliResult r = RunConveyor({"ops", "--markdown", "random.coin_flip"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("## random.coin_flip"));
  EXPECT_THAT(r.out, HasSubstr("| `probability` | float | `0.5` | [0, 1] | yes |"));
}

}  // namespace
}  // namespace conveyor::cli_test
