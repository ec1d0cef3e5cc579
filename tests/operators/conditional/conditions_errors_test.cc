// Every refusal of a node condition, one test per message, on real files under testdata/: the
// position of the node's enable:/probability: (or its value), the node, what was expected and
// what arrived. The static ones come from the loader or Graph::Build; dtype, layout, ndim and a
// mask of unknown shape from the first batch (select's Setup), through Pipeline::Outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/yaml_loader.h"
#include "tests/operators/resize/image_test_util.h"

namespace conveyor {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kData = "tests/operators/conditional/testdata/";

// The message of the ConfigError that loading `file` and building its graph throws.
std::string BuildError(const std::string& file, bool has_gpu = false) {
  try {
    Graph::Build(LoadPipelineFile(kData + file), {.has_gpu = has_gpu});
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << file << ": expected an error";
  return "";
}

// The message of the error the first batch of `file` fails with (images fed to "in", and
// `mask` to "m" when given).
std::string FirstBatchError(const std::string& file, std::optional<TensorListCPU> mask = std::nullopt,
                            Layout layout = "HWC") {
  Pipeline p = Pipeline::FromFile(kData + file, {.has_gpu = false});
  p.Feed("in", testing::RandomImages({Shape{6, 5, 3}, Shape{4, 7, 3}}, DType::kUInt8, layout));
  if (mask) p.Feed("m", *mask);
  try {
    p.Build();
    p.Outputs();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << file << ": expected an error";
  return "";
}

TEST(ConditionErrors, BothKeys) {
  EXPECT_THAT(BuildError("both_keys.yaml"),
              HasSubstr("both_keys.yaml:9:5: op \"flip\" (fl): give enable: or probability:, not both (enable: at " +
                        kData + "both_keys.yaml:8:13)"));
}

TEST(ConditionErrors, ProbabilityOutOfRange) {
  EXPECT_THAT(BuildError("probability_range.yaml"),
              HasSubstr("probability_range.yaml:8:18: op \"flip\" (fl): probability: expected a value in [0, 1], "
                        "got 1.5"));
}

TEST(ConditionErrors, ProbabilityNotANumber) {
  EXPECT_THAT(BuildError("probability_not_number.yaml"),
              HasSubstr("probability_not_number.yaml:8:18: op \"flip\" (fl): probability: expected a number in "
                        "[0, 1], got \"often\""));
}

TEST(ConditionErrors, EnableNotAReference) {
  EXPECT_THAT(BuildError("enable_not_reference.yaml"),
              HasSubstr("enable_not_reference.yaml:8:13: op \"flip\" (fl): enable: expected $NAME, a node's "
                        "per-sample bool or integer output (enable: $coin), got \"c\""));
}

TEST(ConditionErrors, SeveralOutputs) {
  EXPECT_THAT(BuildError("several_outputs.yaml"),
              HasSubstr("several_outputs.yaml:8:5: op \"letterbox\" (fl): probability: unselected samples pass the "
                        "node's first input through unchanged, so the node must have one output; it has 2 (boxed, "
                        "transform)"));
}

TEST(ConditionErrors, NoInput) {
  EXPECT_THAT(BuildError("no_input.yaml"),
              HasSubstr("no_input.yaml:8:5: op \"random.uniform\" (fl): probability: unselected samples pass the "
                        "node's first input through unchanged, but op \"random.uniform\" (fl) has no input"));
}

TEST(ConditionErrors, FirstInputReadOnTheHost) {
  EXPECT_THAT(BuildError("host_input.yaml"),
              HasSubstr("host_input.yaml:8:5: op \"decoders.image\" (fl): probability: unselected samples pass the "
                        "node's first input through unchanged, but op \"decoders.image\" reads its first input "
                        "(\"x\") on the host as another kind of data than it outputs"));
}

TEST(ConditionErrors, TransferOp) {
  EXPECT_THAT(BuildError("transfer_op.yaml", /*has_gpu=*/true),
              HasSubstr("transfer_op.yaml:9:5: op \"to_host\" (fl): probability: unselected samples pass the node's "
                        "first input through unchanged, but op \"to_host\" moves its data to the host"));
}

TEST(ConditionErrors, EnableNotProduced) {
  EXPECT_THAT(BuildError("enable_unknown.yaml"),
              HasSubstr("enable_unknown.yaml:8:13: op \"flip\" (fl): enable: \"$cn\" is not produced by any node; "
                        "did you mean \"$c\"?"));
}

TEST(ConditionErrors, EnableIsTheNodesOwnOutput) {
  EXPECT_THAT(BuildError("enable_own_output.yaml"),
              HasSubstr("enable_own_output.yaml:8:13: op \"flip\" (fl): enable: \"$f\" is the node's own output"));
}

TEST(ConditionErrors, EnableProducedOnTheGpu) {
  EXPECT_THAT(BuildError("enable_on_gpu.yaml", /*has_gpu=*/true),
              HasSubstr("enable_on_gpu.yaml:9:13: op \"flip\" (fl): enable: \"$g\" is produced on the GPU by op "
                        "\"random.coin_flip\" (gcoin); the mask is read on the host (run that node on cpu)"));
}

TEST(ConditionErrors, EnableDeclaredNotAScalar) {
  EXPECT_THAT(BuildError("enable_shape.yaml"),
              HasSubstr("enable_shape.yaml:9:13: op \"flip\" (fl): enable: \"$cs\" must be one bool or integer per "
                        "sample, but op \"random.coin_flip\" (coins) draws shape [2] per sample"));
  EXPECT_THAT(BuildError("enable_float_feed.yaml"),
              HasSubstr("enable_float_feed.yaml:9:13: op \"flip\" (fl): enable: \"$mask\" must be one bool or "
                        "integer per sample, but op \"external_source\" (m) declares dtype: float32"));
}

TEST(ConditionErrors, NodeChangesTheDtype) {
  EXPECT_THAT(FirstBatchError("dtype_changes.yaml"),
              AllOf(HasSubstr("node \"fl.select\" (op \"select\")"),
                    HasSubstr("dtype_changes.yaml:8:5: op \"cast\" (fl): probability: unselected samples pass input "
                              "\"x\" through unchanged, so the node's output must keep its dtype; output \"f\" has "
                              "float32, the input uint8")));
}

TEST(ConditionErrors, NodeChangesTheLayout) {
  EXPECT_THAT(FirstBatchError("layout_changes.yaml"),
              HasSubstr("layout_changes.yaml:8:5: op \"transpose\" (fl): probability: unselected samples pass input "
                        "\"x\" through unchanged, so the node's output must keep its layout; output \"f\" has layout "
                        "CHW, the input layout HWC"));
}

TEST(ConditionErrors, NodeChangesTheNdim) {
  EXPECT_THAT(FirstBatchError("ndim_changes.yaml", std::nullopt, Layout()),
              HasSubstr("ndim_changes.yaml:7:5: op \"reshape\" (fl): probability: unselected samples pass input \"x\" "
                        "through unchanged, so the node's output must keep its ndim; output \"f\" has 1 (sample 0: "
                        "(90,)), the input 3 ((6, 5, 3))"));
}

TEST(ConditionErrors, MaskOfAnotherShapeArrives) {
  // external_source with ndim -1 declares nothing: the mask is checked on every batch.
  const TensorListCPU mask = MakeBatch<int32_t>({Shape{}, Shape{2}}, {{1}, {0, 1}});
  EXPECT_THAT(FirstBatchError("mask_not_scalar.yaml", mask),
              HasSubstr("mask_not_scalar.yaml:9:5: op \"flip\" (fl): enable: \"$mask\" must be one bool or integer "
                        "per sample; sample 1 is int32 (2,)"));
}

}  // namespace
}  // namespace conveyor
