// warp_affine on the CPU: exact cases (identity, integer translations, their borders), random
// per-sample matrices against the independent reference of geometry_testing.h for every
// interpolation, border and dtype pair, inverse_map, size, edge sizes; conformance (CPU cases).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/operators/geometry/geometry_conformance.h"

namespace conveyor::testing {
namespace {

const Matrix kIdentity = {1, 0, 0, 0, 1, 0};

TEST(WarpAffine, IdentityReturnsTheInputExactly) {
  const std::vector<Shape> shapes = {Shape{1, 1, 3}, Shape{7, 5, 3}, Shape{16, 33, 3}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC");
    for (const std::string interp : {"nearest", "linear", "cubic"}) {
      for (const bool fill : {false, true}) {
        OpSpec spec = Warp(interp).SetArg("matrix", Values(kIdentity));
        if (fill) spec.SetArg("fill_value", std::vector<double>{7});
        ExpectSameBytes(RunOp(spec, Device::kCpu, in), in, interp + (fill ? " fill" : " clamp"));
      }
    }
  }
}

TEST(WarpAffine, IntegerTranslationShiftsExactly) {
  // Output (y, x) reads input (y + dy, x + dx): a shift by (-dx, -dy); the rest is fill or edge.
  const TensorListCPU in = RandomBatch({Shape{9, 12, 3}}, DType::kFloat32, "HWC");
  for (const std::string interp : {"nearest", "linear", "cubic"}) {
    for (const auto& [dx, dy] : std::vector<std::pair<int, int>>{{3, -2}, {-5, 4}, {0, 8}, {11, 0}}) {
      const Matrix m = {1, 0, static_cast<double>(dx), 0, 1, static_cast<double>(dy)};
      const TensorListCPU filled = RunOp(Warp(interp).SetArg("matrix", Values(m)).SetArg("fill_value", std::vector<double>{-1, -2, -3}), Device::kCpu, in);
      const TensorListCPU clamped = RunOp(Warp(interp).SetArg("matrix", Values(m)), Device::kCpu, in);
      for (int y = 0; y < 9; ++y) {
        for (int x = 0; x < 12; ++x) {
          const int sy = y + dy, sx = x + dx;
          const bool inside = sy >= 0 && sy < 9 && sx >= 0 && sx < 12;
          const int cy = std::min(std::max(sy, 0), 8), cx = std::min(std::max(sx, 0), 11);
          for (int c = 0; c < 3; ++c) {
            const int64_t j = (y * 12 + x) * 3 + c;
            ASSERT_EQ(At(filled, 0, j), inside ? At(in, 0, (sy * 12 + sx) * 3 + c) : -1.f - c) << interp << " " << dx << "," << dy;
            ASSERT_EQ(At(clamped, 0, j), At(in, 0, (cy * 12 + cx) * 3 + c)) << interp << " " << dx << "," << dy;
          }
        }
      }
    }
  }
}

// Random per-sample matrices and sizes against the reference, for every interpolation, border,
// dtype pair and channel count.
TEST(WarpAffine, RandomMatricesMatchTheReference) {
  for (int64_t channels : {1, 3, 4, 8}) {
    std::vector<Shape> shapes = RandomHwcShapes(3, 1, 40, 40, channels);
    shapes.push_back(Shape{1, 1, channels});
    shapes.push_back(Shape{5, 3, channels});
    std::vector<Matrix> ms;
    std::vector<std::vector<double>> sizes;
    for (const Shape& s : shapes) {
      const std::vector<int64_t> out = RandomVector<int64_t>(2, 1, 30);
      sizes.push_back({static_cast<double>(out[0]), static_cast<double>(out[1])});
      ms.push_back(RandomMatrix(s[0], s[1], out[0], out[1]));
    }
    std::vector<std::vector<float>> size_values;
    for (const auto& v : sizes) size_values.push_back({static_cast<float>(v[0]), static_cast<float>(v[1])});
    for (const auto& [in_type, out_type] : std::vector<std::pair<DType, DType>>{
             {DType::kUInt8, DType::kUInt8}, {DType::kFloat32, DType::kFloat32}, {DType::kUInt8, DType::kFloat32},
             {DType::kFloat32, DType::kUInt8}}) {
      const TensorListCPU in = RandomBatch(shapes, in_type, "HWC", -20.f, 300.f);
      for (const std::string interp : {"nearest", "linear", "cubic"}) {
        for (const std::vector<double>& fill : {std::vector<double>{}, std::vector<double>{42.0}}) {
          OpSpec spec = Warp(interp).SetArgInput("matrix", "m").SetArgInput("size", "s")
                            .SetArg("dtype", std::string(out_type == DType::kUInt8 ? "uint8" : "float32"));
          if (!fill.empty()) spec.SetArg("fill_value", fill);
          const TensorListCPU out = RunOp(spec, Device::kCpu, in, {{"matrix", PerSampleMatrices(ms)}, {"size", PerSampleLists(size_values)}});
          ASSERT_EQ(out.dtype(), out_type);
          for (int s = 0; s < in.num_samples(); ++s) {
            ASSERT_EQ(out.shape(s), (Shape{static_cast<int64_t>(sizes[s][0]), static_cast<int64_t>(sizes[s][1]), channels}));
            ExpectWarpMatches(in, out, s, AsFloat(ms[static_cast<size_t>(s)]), interp, fill,
                              interp + (fill.empty() ? " clamp " : " fill ") + std::string(DTypeName(in_type)) + "->" +
                                  std::string(DTypeName(out_type)) + " c" + std::to_string(channels));
          }
        }
      }
    }
  }
}

TEST(WarpAffine, InverseMapFalseTakesTheForwardMatrix) {
  const TensorListCPU in = RandomBatch({Shape{21, 17, 3}, Shape{8, 30, 3}}, DType::kFloat32, "HWC", 0.f, 100.f);
  const std::vector<Matrix> out_to_in = {RandomMatrix(21, 17, 21, 17), RandomMatrix(8, 30, 8, 30)};
  std::vector<Matrix> in_to_out;
  for (const Matrix& m : out_to_in) in_to_out.push_back(Inverse(m));
  const TensorListCPU out = RunOp(Warp().SetArgInput("matrix", "m").SetArg("inverse_map", false), Device::kCpu, in,
                                  {{"matrix", PerSampleMatrices(in_to_out)}});
  // The operator inverts the float32 forward matrix in double; so does the reference here.
  for (int s = 0; s < 2; ++s) ExpectWarpMatches(in, out, s, Inverse(AsFloat(in_to_out[s])), "linear", {}, "inverse_map false");
}

TEST(WarpAffine, SizeAndFillPerSample) {
  const TensorListCPU in = RandomBatch({Shape{6, 6, 2}, Shape{3, 9, 2}}, DType::kUInt8, "HWC");
  // Scale by 2 (output -> input halves), so the output doubles the image; constant size for both.
  const Matrix half = {0.5, 0, 0, 0, 0.5, 0};
  const TensorListCPU out = RunOp(Warp("nearest").SetArg("matrix", Values(half)).SetArg("size", std::vector<double>{12.4, 11.6})
                                      .SetArgInput("fill_value", "f"),
                                  Device::kCpu, in, {{"fill_value", PerSampleLists<float>({{1, 2}, {200}})}});
  ASSERT_EQ(out.shape(0), (Shape{12, 12, 2}));
  ASSERT_EQ(out.shape(1), (Shape{12, 12, 2}));
  for (int s = 0; s < 2; ++s) ExpectWarpMatches(in, out, s, half, "nearest", s == 0 ? std::vector<double>{1, 2} : std::vector<double>{200}, "size");
  EXPECT_EQ(At(out, 1, (11 * 12 + 0) * 2 + 1), 200.f);  // row 11 reads row 5.75 of a 3-row image: fill
}

TEST(WarpAffine, EmptySamplesStayEmpty) {
  const TensorListCPU in = RandomHwc({Shape{0, 4, 3}, Shape{2, 2, 3}, Shape{5, 0, 3}}, DType::kUInt8);
  const TensorListCPU out = RunOp(Warp().SetArg("matrix", Values(kIdentity)).SetArg("size", std::vector<double>{4, 4}), Device::kCpu, in);
  EXPECT_EQ(out.shape(0), (Shape{0, 0, 3}));
  EXPECT_EQ(out.shape(1), (Shape{4, 4, 3}));
  EXPECT_EQ(out.shape(2), (Shape{0, 0, 3}));
  // A zero size gives an empty output too.
  EXPECT_EQ(RunOp(Warp().SetArg("matrix", Values(kIdentity)).SetArg("size", std::vector<double>{0, 3}), Device::kCpu, in).shape(1),
            (Shape{0, 3, 3}));
}

TEST(WarpAffine, DaliInterpNamesAreAccepted) {
  const TensorListCPU in = RandomBatch({Shape{9, 7, 3}}, DType::kUInt8, "HWC");
  const Matrix m = RandomMatrix(9, 7, 9, 7);
  for (const auto& [dali, ours] : std::vector<std::pair<std::string, std::string>>{
           {"INTERP_NN", "nearest"}, {"INTERP_LINEAR", "linear"}, {"INTERP_CUBIC", "cubic"}}) {
    ExpectSameBytes(RunOp(Warp(dali).SetArg("matrix", Values(m)), Device::kCpu, in),
                    RunOp(Warp(ours).SetArg("matrix", Values(m)), Device::kCpu, in), dali);
  }
}

INSTANTIATE_TEST_SUITE_P(WarpAffine, OperatorConformance,
                         ::testing::ValuesIn(ImageConformanceCases("warp_affine", Device::kCpu)), CaseName);

}  // namespace
}  // namespace conveyor::testing
