// Every error of pad, slice and paste: the message names the op and node, the sample, what was
// expected and what arrived.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operators/pad_paste/window_test_util.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

std::string ConstructionError(const OpSpec& spec) {
  try {
    OpHarness h(spec, Device::kCpu);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(WindowErrors, Pad) {
  const TensorListCPU img = RandomImages({{4, 5, 3}, {3, 3, 3}}, DType::kUInt8);
  EXPECT_THAT(ConstructionError(Unary("pad", "p").SetArg("axes", std::vector<int64_t>{3})),
              HasSubstr("op \"pad\" (p): axes: axis 3 is out of range for HWC samples (0 = H, 1 = W, 2 = C)"));
  EXPECT_THAT(ConstructionError(Unary("pad", "p").SetArg("axes", std::vector<int64_t>{1, 1})),
              HasSubstr("op \"pad\" (p): axes: axis 1 is given twice"));
  EXPECT_THAT(ErrorOf({Unary("pad", "p").SetArg("axes", std::vector<int64_t>{0, 1})
                           .SetArg("shape", std::vector<int64_t>{4, 4, 4}), img}),
              HasSubstr("op \"pad\" (p): sample 0: shape has 3 values, expected 2 (one per axis of axes)"));
  EXPECT_THAT(ErrorOf({Unary("pad", "p").SetArg("axes", std::vector<int64_t>{0, 1}).SetArgInput("align", "a"), img,
                       {{"align", ArgValues({{2}, {1, 2, 3}})}}}),
              HasSubstr("op \"pad\" (p): sample 1: align has 3 values, expected 1 or 2 (one per axis of axes)"));
  EXPECT_THAT(ErrorOf({Unary("pad", "p").SetArgInput("align", "a"), img, {{"align", ArgValues({{2}, {0}})}}}),
              HasSubstr("op \"pad\" (p): sample 1: align must be >= 1, got 0"));
  EXPECT_THAT(ErrorOf({Unary("pad", "p").SetArg("fill_value", 256.0), img}),
              HasSubstr("op \"pad\" (p): sample 0: fill_value[0] = 256: expected an integer in [0, 255] for uint8"));
  EXPECT_THAT(ErrorOf({Unary("pad", "p").SetArg("fill_value", 0.5), RandomImages({{2, 2, 1}}, DType::kInt32)}),
              HasSubstr("op \"pad\" (p): sample 0: fill_value[0] = 0.5: expected an integer in [-2147483648, "
                        "2147483647] for int32"));
  EXPECT_THAT(ErrorOf({Unary("pad", "p"), RandomImages({{3, 3}}, DType::kUInt8, "HW")}),
              HasSubstr("op \"pad\" (p): input 0: expected layout HWC, got HW"));
  EXPECT_THAT(ErrorOf({Unary("pad", "p"), RandomImages({{3, 3, 1}}, DType::kFloat16)}),
              HasSubstr("op \"pad\" (p): input 0: expected dtype"));
}

TEST(WindowErrors, Slice) {
  const TensorListCPU img = RandomImages({{4, 5, 3}, {3, 3, 3}}, DType::kUInt8);
  EXPECT_THAT(ErrorOf({Unary("slice", "s").SetArg("start", std::vector<double>{1, 1})
                           .SetArg("shape", std::vector<double>{3, 3}), img}),
              HasSubstr("op \"slice\" (s): sample 1: the slice W [1, 4), H [1, 4) does not fit the sample of shape "
                        "(3, 3, 3); use out_of_bounds_policy: pad or trim_to_shape"));
  EXPECT_THAT(ErrorOf({Unary("slice", "s").SetArg("rel_start", std::vector<double>{-0.5, 0}), img}),
              HasSubstr("op \"slice\" (s): sample 0: the slice W [-3, 5), H [0, 4) does not fit the sample of shape "
                        "(4, 5, 3)"));
  EXPECT_THAT(ErrorOf({Unary("slice", "s").SetArg("start", std::vector<double>{1}), img}),
              HasSubstr("op \"slice\" (s): sample 0: start has 1 values, expected 2 (one per axis of axes)"));
  EXPECT_THAT(ErrorOf({Unary("slice", "s").SetArg("shape", std::vector<double>{-1, 2}), img}),
              HasSubstr("op \"slice\" (s): sample 0: the window along axis 1 ends (-1) before it starts (0)"));
  EXPECT_THAT(ConstructionError(Unary("slice", "s").SetArg("shape", std::vector<double>{1, 1})
                                    .SetArg("rel_end", std::vector<double>{1, 1})),
              HasSubstr("op \"slice\" (s): give at most one of \"shape\" and \"rel_end\""));
  EXPECT_THAT(ConstructionError(Unary("slice", "s").SetArg("axes", std::vector<int64_t>{0, 0})),
              HasSubstr("op \"slice\" (s): axes: expected distinct axes of HWC samples (0 = H, 1 = W, 2 = C), got 0 "
                        "twice"));
  EXPECT_THAT(ErrorOf({Unary("slice", "s").SetArg("out_of_bounds_policy", "pad")
                           .SetArg("fill_values", std::vector<double>{1, 2}), img}),
              HasSubstr("op \"slice\" (s): sample 0: fill_values has 2 values, the output has 3 channels (give 1 or 3)"));
  EXPECT_THAT(ErrorOf({Unary("slice", "s").SetArg("out_of_bounds_policy", "pad")
                           .SetArg("fill_values", std::vector<double>{-1}), img}),
              HasSubstr("op \"slice\" (s): sample 0: fill_values[0] = -1: expected an integer in [0, 255] for uint8"));
}

TEST(WindowErrors, Paste) {
  const TensorListCPU img = RandomImages({{4, 5, 3}, {3, 3, 3}}, DType::kUInt8);
  const OpSpec paste = Unary("paste", "p").SetArg("fill_value", std::vector<double>{0});
  EXPECT_THAT(ErrorOf({OpSpec(paste).SetArgInput("ratio", "r"), img, {{"ratio", ArgValues({{2}, {0.5}}, true)}}}),
              HasSubstr("op \"paste\" (p): sample 1: argument \"ratio\": expected a finite value >= 1, got 0.5"));
  EXPECT_THAT(ErrorOf({OpSpec(paste).SetArg("ratio", 2.0).SetArgInput("paste_x", "x"), img,
                       {{"paste_x", ArgValues({{0.5}, {1.5}}, true)}}}),
              HasSubstr("op \"paste\" (p): sample 1: argument \"paste_x\": expected a value in [0, 1], got 1.5"));
  EXPECT_THAT(ErrorOf({Unary("paste", "p").SetArg("ratio", 2.0).SetArg("fill_value", std::vector<double>{1, 2}), img}),
              HasSubstr("op \"paste\" (p): sample 0: fill_value has 2 values, the output has 3 channels (give 1 or 3)"));
  EXPECT_THAT(ErrorOf({Unary("paste", "p").SetArg("ratio", 2.0).SetArg("fill_value", std::vector<double>{1e40}),
                       RandomImages({{2, 2, 1}}, DType::kFloat32)}),
              HasSubstr("op \"paste\" (p): sample 0: fill_value[0] = 1e+40: expected a finite value for float32"));
  EXPECT_THAT(ConstructionError(Unary("paste", "p").SetArg("fill_value", std::vector<double>{0})),
              HasSubstr("ratio"));
}

}  // namespace
}  // namespace conveyor::testing
