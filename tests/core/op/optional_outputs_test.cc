// OpSchema::OptionalOutput: schema checks, OpSpec::Validate's count and message, OutputSlot, and
// the catalogue's "(with ARG: true)" (readers.coco's DALI output sets are tested with the reader).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/op/registry.h"
#include "core/op/spec.h"

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
  return "(no error)";
}

const OpSchema& Schema() {
  static const OpSchema schema = [] {
    OpSchema s = OpSchema("testing.optional_outputs")
                     .Output("a", "Always.")
                     .OptionalOutput("b", "with_bc", "With with_bc.")
                     .Output("c", "Always, after b.")
                     .OptionalOutput("d", "with_bc")
                     .OptionalOutput("e", "with_e")
                     .Arg<bool>("with_bc", false, "B and d.")
                     .Arg<bool>("with_e", true, "E.")
                     .Backends({Device::kCpu});
    OpRegistry::Global().Register(s, [](const OpSpec&) -> std::unique_ptr<Operator> { return nullptr; });
    return s;
  }();
  return schema;
}

OpSpec Spec(std::vector<std::string> outputs) {
  Schema();
  OpSpec spec("testing.optional_outputs", "n");
  for (std::string& o : outputs) spec.AddOutput(std::move(o));
  return spec;
}

TEST(OptionalOutputs, SchemaNeedsAPlainBoolArgument) {
  const auto error = [](OpSchema s) { return ErrorOf<InvalidArgument>([&] { s.Backends({Device::kCpu}).Validate(); }); };
  EXPECT_THAT(error(OpSchema("x").OptionalOutput("o", "missing")),
              HasSubstr("op schema \"x\": OptionalOutput(\"o\", \"missing\") needs a bool argument of that name that "
                        "is not fed per sample"));
  EXPECT_THAT(error(OpSchema("x").OptionalOutput("o", "n").Arg<int>("n", 1, "")), HasSubstr("needs a bool argument"));
  EXPECT_THAT(error(OpSchema("x").OptionalOutput("o", "f").Arg<bool>("f", false, "", PerSample::kAllowed)),
              HasSubstr("not fed per sample"));
  EXPECT_THAT(error(OpSchema("x").OptionalOutput("o", "f").Arg<bool>("f", false, "").OutputPerEntryOf("l").Arg<
                    std::vector<std::string>>("l", {}, "")),
              HasSubstr("exactly one declared output (not an optional one)"));
  EXPECT_EQ(error(OpSchema("x").Output("a").OptionalOutput("o", "f").Arg<bool>("f", false, "")), "(no error)");
  EXPECT_TRUE(Schema().has_optional_outputs());
  EXPECT_THAT(Schema().Describe(), HasSubstr("  output b (with with_bc: true) — With with_bc.\n"));
}

TEST(OptionalOutputs, ValidateExpectsTheEnabledSetInDeclaredOrder) {
  EXPECT_NO_THROW(Spec({"a", "c", "e"}).Validate());  // defaults: with_e on
  EXPECT_NO_THROW(Spec({"a", "b", "c", "d", "e"}).SetArg("with_bc", true).Validate());
  EXPECT_NO_THROW(Spec({"a", "c"}).SetArg("with_e", false).Validate());
  // Three outputs but not the enabled ones: names are the spec's own, only the count is checked.
  EXPECT_NO_THROW(Spec({"a", "b", "c"}).Validate());
  EXPECT_EQ(ErrorOf<SpecError>([] { Spec({"a", "c"}).Validate(); }),
            "op \"testing.optional_outputs\" (n): expected 3 outputs (a, c, e), got 2; optional outputs follow their "
            "arguments: b and d need with_bc: true (it is false, the default); e needs with_e: true (it is true, the "
            "default)");
  OpSpec located = Spec({"a"}).SetArg("with_e", false);
  located.SetLocation("outputs", {"p.yaml", 4, 14});
  EXPECT_THAT(ErrorOf<SpecError>([&] { located.Validate(); }),
              HasSubstr("p.yaml:4:14: op \"testing.optional_outputs\" (n): expected 2 outputs (a, c), got 1; "
                        "optional outputs follow their arguments: b and d need with_bc: true (it is false, the "
                        "default); e needs with_e: true (it is false)"));
}

TEST(OptionalOutputs, OutputSlotsSkipDisabledOutputs) {
  const OpSpec on = Spec({"a", "b", "c", "d"}).SetArg("with_bc", true).SetArg("with_e", false);
  EXPECT_EQ(on.OutputSlot("a"), 0);
  EXPECT_EQ(on.OutputSlot("b"), 1);
  EXPECT_EQ(on.OutputSlot("c"), 2);
  EXPECT_EQ(on.OutputSlot("d"), 3);
  EXPECT_EQ(on.OutputSlot("e"), -1);
  const OpSpec off = Spec({"a", "c", "e"});
  EXPECT_EQ(off.OutputSlot("b"), -1);
  EXPECT_EQ(off.OutputSlot("c"), 1);
  EXPECT_EQ(off.OutputSlot("e"), 2);
  ASSERT_EQ(off.EnabledOutputs().size(), 3u);
  EXPECT_EQ(off.EnabledOutputs()[2]->name, "e");
  EXPECT_THAT(ErrorOf<InvalidArgument>([&] { off.OutputSlot("f"); }),
              HasSubstr("op \"testing.optional_outputs\" (n): the schema has no output \"f\""));
}

}  // namespace
}  // namespace conveyor
