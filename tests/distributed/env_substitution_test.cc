// `${VAR}` / `${VAR:-default}` in YAML scalars, as one file serving every rank uses them: the
// substituted text is typed by the field or argument; an unset variable without default names the
// variable at file:line:col; a substituted value of the wrong type names the variable and value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"
#include "core/pipeline/yaml_loader.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;

// Line 1 the pipeline section, line 3 the reader (columns as written).
const char* kRankYaml =
    "pipeline: {name: ranks, batch_size: 2, device: cpu, device_id: \"${LOCAL_RANK:-0}\"}\n"
    "ops:\n"
    "  - {op: readers.file, name: reader, outputs: [d, l], args: {files: [a], shard_id: \"${RANK:-0}\", "
    "num_shards: \"${WORLD_SIZE:-1}\", random_shuffle: \"${SHUFFLE:-false}\"}}\n"
    "outputs: [d]\n";

class EnvSubstitution : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"LOCAL_RANK", "RANK", "WORLD_SIZE", "SHUFFLE"}) ::unsetenv(v);
  }
  void TearDown() override { SetUp(); }
  static std::string ErrorOf(const std::string& yaml) {
    try {
      ParsePipelineYaml(yaml);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected an error for:\n" << yaml;
    return "";
  }
};

TEST_F(EnvSubstitution, DefaultsWhenUnsetValuesWhenSet) {
  PipelineSpec spec = ParsePipelineYaml(kRankYaml);
  EXPECT_EQ(spec.device_id, 0);
  EXPECT_EQ(spec.ops[0].Arg<int64_t>("shard_id"), 0);
  EXPECT_EQ(spec.ops[0].Arg<int64_t>("num_shards"), 1);
  EXPECT_FALSE(spec.ops[0].Arg<bool>("random_shuffle"));
  ::setenv("LOCAL_RANK", "3", 1);
  ::setenv("RANK", "11", 1);
  ::setenv("WORLD_SIZE", "16", 1);
  ::setenv("SHUFFLE", "true", 1);
  spec = ParsePipelineYaml(kRankYaml);
  EXPECT_EQ(spec.device_id, 3);
  EXPECT_EQ(spec.ops[0].Arg<int64_t>("shard_id"), 11);
  EXPECT_EQ(spec.ops[0].Arg<int64_t>("num_shards"), 16);
  EXPECT_TRUE(spec.ops[0].Arg<bool>("random_shuffle"));
  // An empty variable counts as unset (the default applies), as in the shell's ${VAR:-x}.
  ::setenv("RANK", "", 1);
  EXPECT_EQ(ParsePipelineYaml(kRankYaml).ops[0].Arg<int64_t>("shard_id"), 0);
}

TEST_F(EnvSubstitution, UnsetWithoutDefaultNamesTheVariableAndPosition) {
  EXPECT_THAT(ErrorOf("pipeline: {name: x, device_id: \"${LOCAL_RANK}\"}\nops: [{op: random.uniform}]\n"),
              HasSubstr("<string>:1:32: pipeline.device_id: environment variable LOCAL_RANK is not set and "
                        "\"${LOCAL_RANK}\" has no default (write ${LOCAL_RANK:-value})"));
  EXPECT_THAT(ErrorOf("ops:\n  - {op: readers.file, args: {files: [a], shard_id: \"${RANK}\"}}\n"),
              HasSubstr("<string>:2:53: op \"readers.file\" (readers.file_0): argument \"shard_id\": environment "
                        "variable RANK is not set"));
}

TEST_F(EnvSubstitution, WrongTypeAfterSubstitutionNamesTheVariableAndValue) {
  ::setenv("LOCAL_RANK", "gpu1", 1);
  EXPECT_THAT(ErrorOf(kRankYaml), HasSubstr("<string>:1:64: pipeline.device_id: expected an integer, got \"gpu1\" "
                                            "(from \"${LOCAL_RANK:-0}\": LOCAL_RANK is \"gpu1\")"));
  ::unsetenv("LOCAL_RANK");
  ::setenv("LOCAL_RANK", "-1", 1);
  EXPECT_THAT(ErrorOf(kRankYaml), HasSubstr("pipeline.device_id: expected a value >= 0, got -1 (from "
                                            "\"${LOCAL_RANK:-0}\": LOCAL_RANK is \"-1\")"));
  ::unsetenv("LOCAL_RANK");
  ::setenv("RANK", "0x1", 1);
  EXPECT_THAT(ErrorOf(kRankYaml), HasSubstr("argument \"shard_id\": expected int, got \"0x1\" (from \"${RANK:-0}\": "
                                            "RANK is \"0x1\")"));
  ::unsetenv("RANK");
  ::setenv("SHUFFLE", "maybe", 1);
  EXPECT_THAT(ErrorOf(kRankYaml), HasSubstr("argument \"random_shuffle\": expected bool (true or false), got "
                                            "\"maybe\" (from \"${SHUFFLE:-false}\": SHUFFLE is \"maybe\")"));
  // A bad default is named as the default.
  EXPECT_THAT(ErrorOf("pipeline: {batch_size: \"${BS:-lots}\"}\nops: [{op: random.uniform}]\n"),
              HasSubstr("pipeline.batch_size: expected an integer, got \"lots\" (from \"${BS:-lots}\": BS is unset, "
                        "default \"lots\")"));
}

}  // namespace
}  // namespace conveyor
