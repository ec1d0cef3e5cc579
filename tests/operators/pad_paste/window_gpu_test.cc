// pad, slice and paste on the GPU equal the CPU reference byte for byte (random images of varying
// sizes, every dtype, padding on every side, masks), and the conformance suite (CPU and GPU cases).
#include <gtest/gtest.h>

#include "tests/conformance/conformance.h"
#include "tests/operators/pad_paste/window_test_util.h"

namespace conveyor::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(
    Pad, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Unary("pad", "p").SetArg("axes", std::vector<int64_t>{2}), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Unary("pad", "p").SetArg("axes", std::vector<int64_t>{1})
                                                          .SetArg("align", std::vector<int64_t>{4}),
                                      Device::kGpu,
                                      DType::kFloat32, true, "HWC", 3}),
    CaseName);

INSTANTIATE_TEST_SUITE_P(
    Slice, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Unary("slice", "s").SetArg("rel_start", std::vector<double>{0.5, 0.5}),
                                      Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      // A fixed 3x3 shape padded out of bounds: a zero-sized sample gives a padded 3x3
                      // sample (DALI's semantics), not an empty one, so that case is off here.
                      ConformanceCase{"gpu_pad", Unary("slice", "s").SetArg("start", std::vector<double>{-1, -1})
                                                     .SetArg("shape", std::vector<double>{3, 3})
                                                     .SetArg("out_of_bounds_policy", "pad"),
                                      Device::kGpu, DType::kUInt8, true, "HWC", 3, 0, false}),
    CaseName);

INSTANTIATE_TEST_SUITE_P(
    Paste, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Unary("paste", "p").SetArg("ratio", 1.5)
                                                 .SetArg("fill_value", std::vector<double>{1}),
                                      Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Unary("paste", "p").SetArg("ratio", 2.0).SetArg("paste_x", 0.2)
                                                 .SetArg("fill_value", std::vector<double>{1, 2, 3}),
                                      Device::kGpu, DType::kFloat32, true, "HWC", 3}),
    CaseName);

// Random shapes with a zero-sized sample; every dtype; several channel counts.
TensorListCPU Mixed(DType t, int64_t channels) {
  std::vector<Shape> shapes = RandomShapes(7, 90, channels);
  shapes.push_back(Shape{0, 5, channels});
  return RandomImages(shapes, t);
}

TEST(WindowGpu, EqualsCpu) {
  CONVEYOR_REQUIRE_GPU();
  for (DType t : {DType::kUInt8, DType::kInt8, DType::kUInt16, DType::kInt16, DType::kInt32, DType::kFloat32}) {
    for (int64_t c : {1, 3, 4}) {
      const TensorListCPU in = Mixed(t, c);
      std::vector<std::vector<float>> start, shape, ratio, px;
      for (int s = 0; s < in.num_samples(); ++s) {
        start.push_back(RandomVector<float>(2, -20.f, 60.f));
        shape.push_back(RandomVector<float>(2, 0.f, 120.f));
        ratio.push_back({RandomVector<float>(1, 1.f, 2.5f)[0]});
        px.push_back({RandomVector<float>(1, 0.f, 1.f)[0]});
      }
      const std::vector<OpRun> runs = {
          {Unary("pad", "p").SetArg("axes", std::vector<int64_t>{0, 1}).SetArg("align", std::vector<int64_t>{8}), in},
          {Unary("pad", "p").SetArg("fill_value", 5.0), in},
          {Unary("slice", "s").SetArgInput("start", "a").SetArgInput("shape", "b").SetArg("out_of_bounds_policy", "pad")
               .SetArg("fill_values", std::vector<double>{9}),
           in, {{"start", ArgValues(start)}, {"shape", ArgValues(shape)}}},
          {Unary("slice", "s").SetArgInput("start", "a").SetArgInput("shape", "b")
               .SetArg("out_of_bounds_policy", "trim_to_shape"),
           in, {{"start", ArgValues(start)}, {"shape", ArgValues(shape)}}},
          {Unary("paste", "p").SetArgInput("ratio", "r").SetArgInput("paste_x", "x").SetArg("min_canvas_size", 50.0)
               .SetArg("fill_value", std::vector<double>{3}),
           in, {{"ratio", ArgValues(ratio, true)}, {"paste_x", ArgValues(px, true)}}},
      };
      for (const OpRun& r : runs) {
        EXPECT_EQ(CompareExact(RunOp(r, Device::kGpu), RunOp(r, Device::kCpu)), "")
            << r.spec.op() << " " << DTypeName(t) << " c=" << c << " seed " << RngSeed();
      }
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
