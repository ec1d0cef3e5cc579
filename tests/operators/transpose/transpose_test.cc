// transpose: hand-computed HWC→CHW and 2-D results, an N-d result against nested loops written
// here, layouts, every element size, errors, GPU vs CPU (bit-identical) over every kernel path,
// conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "operators/transpose/transpose.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

OpSpec Tr(std::vector<int64_t> perm) {
  return OpSpec("transpose", "t").AddInput("x").AddOutput("y").SetArg("perm", perm);
}

TEST(Transpose, HwcToChwByHand) {
  // in[h][w][c] = (h * 2 + w) * 3 + c on a 2x2x3 image: plane c holds c, c + 3, c + 6, c + 9.
  std::vector<uint8_t> v(12);
  std::iota(v.begin(), v.end(), 0);
  const TensorListCPU out = RunOp(Tr({2, 0, 1}), Device::kCpu, MakeBatch<uint8_t>({Shape{2, 2, 3}}, {v}, "HWC"));
  EXPECT_EQ(out.shape(0), (Shape{3, 2, 2}));
  EXPECT_EQ(out.layout(), Layout("CHW"));
  EXPECT_THAT(SampleValues(out, 0), ElementsAre(0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11));
}

TEST(Transpose, ChwToHwcAnd2dByHand) {
  const TensorListCPU m = RunOp(Tr({1, 0}), Device::kCpu, MakeBatch<float>({Shape{2, 3}}, {{1, 2, 3, 4, 5, 6}}));
  EXPECT_EQ(m.shape(0), (Shape{3, 2}));
  EXPECT_THAT(SampleValues(m, 0), ElementsAre(1, 4, 2, 5, 3, 6));
  // CHW 2 planes of 1x3 → HWC 1x3x2.
  const TensorListCPU hwc =
      RunOp(Tr({1, 2, 0}), Device::kCpu, MakeBatch<uint8_t>({Shape{2, 1, 3}}, {{1, 2, 3, 7, 8, 9}}, "CHW"));
  EXPECT_EQ(hwc.shape(0), (Shape{1, 3, 2}));
  EXPECT_EQ(hwc.layout(), Layout("HWC"));
  EXPECT_THAT(SampleValues(hwc, 0), ElementsAre(1, 7, 2, 8, 3, 9));
}

TEST(Transpose, FourDimsAgainstNestedLoops) {
  const Shape s{2, 3, 4, 5};
  const std::vector<int64_t> perm = {3, 1, 0, 2};
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  std::iota(v.begin(), v.end(), 100);
  const TensorListCPU out = RunOp(Tr(perm), Device::kCpu, MakeBatch<int32_t>({s}, {v}, "ABCD"));
  ASSERT_EQ(out.shape(0), (Shape{5, 3, 2, 4}));
  EXPECT_EQ(out.layout(), Layout("DBAC"));
  const int32_t* got = static_cast<const int32_t*>(out.raw_sample(0));
  int64_t e = 0;
  for (int64_t d = 0; d < 5; ++d)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t a = 0; a < 2; ++a)
        for (int64_t c = 0; c < 4; ++c, ++e) ASSERT_EQ(got[e], v[static_cast<size_t>(((a * 3 + b) * 4 + c) * 5 + d)]) << e;
}

TEST(Transpose, ElementSizes) {
  // [[a, b], [c, d]] → [[a, c], [b, d]] for 2-, 4- and 8-byte elements.
  const TensorListCPU h = RunOp(Tr({1, 0}), Device::kCpu, RandomBatch({Shape{2, 2}}, DType::kFloat16, ""));
  const TensorListCPU ht = RunOp(Tr({1, 0}), Device::kCpu, h);  // twice = identity
  ExpectSameBytes(RunOp(Tr({1, 0}), Device::kCpu, ht), h, "float16 twice");
  const TensorListCPU i64 = MakeBatch<int64_t>({Shape{2, 2}}, {{1LL << 40, 2, 3, -(1LL << 50)}});
  const TensorListCPU o = RunOp(Tr({1, 0}), Device::kCpu, i64);
  const int64_t* p = static_cast<const int64_t*>(o.raw_sample(0));
  EXPECT_THAT(std::vector<int64_t>(p, p + 4), ElementsAre(1LL << 40, 3, 2, -(1LL << 50)));
  const TensorListCPU d = MakeBatch<double>({Shape{1, 2}}, {{0.5, -7.25}});
  EXPECT_THAT(SampleValues(RunOp(Tr({1, 0}), Device::kCpu, d), 0), ElementsAre(0.5f, -7.25f));
}

TEST(Transpose, Layouts) {
  const TensorListCPU in = RandomBatch({Shape{2, 3, 1}}, DType::kUInt8, "HWC");
  EXPECT_EQ(RunOp(Tr({2, 0, 1}).SetArg("output_layout", std::string("XYZ")), Device::kCpu, in).layout(), Layout("XYZ"));
  EXPECT_EQ(RunOp(Tr({2, 0, 1}).SetArg("transpose_layout", false), Device::kCpu, in).layout(), Layout("HWC"));
  EXPECT_TRUE(RunOp(Tr({2, 0, 1}), Device::kCpu, RandomBatch({Shape{2, 3, 1}}, DType::kUInt8, "")).layout().empty());
}

TEST(Transpose, Errors) {
  const TensorListCPU hwc = RandomBatch({Shape{2, 3, 3}, Shape{4, 4}}, DType::kUInt8, "");
  EXPECT_THAT(RunError(Tr({0, 0, 1}), hwc),
              HasSubstr("op \"transpose\" (t): argument \"perm\": expected a permutation of 0..2 (at most 8 dims), "
                        "got [0, 0, 1]"));
  EXPECT_THAT(RunError(Tr({0, 3}), hwc), HasSubstr("expected a permutation of 0..1 (at most 8 dims), got [0, 3]"));
  EXPECT_THAT(RunError(Tr({1, 0, 2}), hwc),
              HasSubstr("op \"transpose\" (t): argument \"perm\": [1, 0, 2] permutes 3 dims, but input 0 sample 1 "
                        "has shape (4, 4) (2 dims)"));
  EXPECT_THAT(RunError(Tr({1, 0}).SetArg("output_layout", std::string("CHW")), hwc),
              HasSubstr("argument \"output_layout\": \"CHW\" has 3 letters, expected 2 (one per axis of perm)"));
  EXPECT_THAT(RunError(Tr({1, 0}), RandomBatch({Shape{2, 3}}, DType::kUInt8, "HWC")),
              HasSubstr("op \"transpose\" (t): input 0: layout HWC has 3 axes, perm [1, 0] permutes 2"));
}

// Random shapes of `ndim` dims with extents in [1, max] (some 1s, so axes collapse).
std::vector<Shape> RandomShapes(int n, int ndim, int64_t max) {
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    Shape s;
    for (int d = 0; d < ndim; ++d) s.push_back(RandomVector<int64_t>(1, 1, max)[0]);
    shapes.push_back(s);
  }
  return shapes;
}

// The kernels read only the plan (collapsed extents, input strides, kind): walking it on the host
// must reproduce the reference for every permutation of random shapes with collapsible axes.
TEST(Transpose, PlanReproducesReference) {
  int kinds[3] = {};
  for (int ndim = 1; ndim <= 5; ++ndim) {
    std::vector<int> perm(static_cast<size_t>(ndim));
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (const Shape& shape : RandomShapes(6, ndim, 4)) {
        const int64_t n = shape.num_elements();
        std::vector<int32_t> in(static_cast<size_t>(n)), want(in.size()), got(in.size(), -1);
        std::iota(in.begin(), in.end(), 0);
        ops::TransposeCpu(in.data(), want.data(), shape, perm, 4);
        const ops::TransposeSample p = ops::PlanTranspose(shape, perm);
        ASSERT_EQ(p.count, n);
        ++kinds[static_cast<int>(p.kind)];
        if (p.kind == ops::TransposeKind::kTranspose2d) {  // the tiled paths assume in = [rows, cols]
          ASSERT_EQ(p.ndim, 2);
          EXPECT_EQ(p.in_stride[0], 1);
          EXPECT_EQ(p.in_stride[1], p.out_shape[0]);
        }
        for (int64_t e = 0; e < n; ++e) {
          int64_t rem = e, src = 0;
          for (int d = p.ndim - 1; d >= 0; --d) {
            src += rem % p.out_shape[d] * p.in_stride[d];
            rem /= p.out_shape[d];
          }
          got[static_cast<size_t>(e)] = in[static_cast<size_t>(src)];
        }
        ASSERT_EQ(got, want) << "shape " << shape.ToString() << " ndim " << ndim;
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  EXPECT_GT(kinds[0], 0);
  EXPECT_GT(kinds[1], 0);
  EXPECT_GT(kinds[2], 0);
}

TEST(TransposeGpu, MatchesCpuOnEveryPath) {
  CONVEYOR_REQUIRE_GPU();
  // Channels 1..5 (narrow: HWC→CHW, CHW→HWC), 20 and 40 (wide tiles for every element size).
  for (int64_t c : {1, 3, 4, 5, 20, 40}) {
    const std::vector<Shape> hwc = RandomHwcShapes(5, 1, c > 5 ? 40 : 150, c > 5 ? 90 : 333, c);  // CPU time
    for (DType t : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64}) {
      const TensorListCPU in = RandomBatch(hwc, t, "HWC");
      for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{
               {2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {1, 0, 2}, {0, 1, 2}, {2, 1, 0}}) {
        const std::string what = std::string(DTypeName(t)) + " c=" + std::to_string(c) + " perm " +
                                 std::to_string(perm[0]) + std::to_string(perm[1]) + std::to_string(perm[2]);
        ExpectSameBytes(RunOp(Tr(perm), Device::kGpu, in), RunOp(Tr(perm), Device::kCpu, in), what);
      }
    }
    // CHW input (planes first) back to HWC: the narrow-rows path.
    const TensorListCPU chw = RunOp(Tr({2, 0, 1}), Device::kCpu, RandomBatch(hwc, DType::kUInt8, "HWC"));
    ExpectSameBytes(RunOp(Tr({1, 2, 0}), Device::kGpu, chw), RunOp(Tr({1, 2, 0}), Device::kCpu, chw),
                    "CHW -> HWC c=" + std::to_string(c));
  }
  // N-d (general path), 1..8 dims, random permutations, a zero-sized sample among them.
  for (int ndim = 1; ndim <= 8; ++ndim) {
    std::vector<Shape> shapes = RandomShapes(4, ndim, ndim > 5 ? 4 : 9);
    shapes.push_back(shapes[0]);
    shapes.back()[ndim - 1] = 0;
    std::vector<int64_t> perm(static_cast<size_t>(ndim));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937(static_cast<unsigned>(ndim)));
    for (DType t : {DType::kUInt8, DType::kFloat32, DType::kInt64}) {
      const TensorListCPU in = RandomBatch(shapes, t, "");
      ExpectSameBytes(RunOp(Tr(perm), Device::kGpu, in), RunOp(Tr(perm), Device::kCpu, in),
                      std::to_string(ndim) + "-d " + std::string(DTypeName(t)));
    }
  }
}

TEST(TransposeGpu, LargeImagesSpanManyTiles) {
  CONVEYOR_REQUIRE_GPU();
  // More rows than one block's tiles at every grid size, uneven tails on both sides.
  const TensorListCPU in = RandomBatch({Shape{517, 731, 3}, Shape{1, 1, 3}, Shape{1025, 67, 3}}, DType::kUInt8, "HWC");
  ExpectSameBytes(RunOp(Tr({2, 0, 1}), Device::kGpu, in), RunOp(Tr({2, 0, 1}), Device::kCpu, in), "HWC -> CHW");
  const TensorListCPU f = RandomBatch({Shape{1000, 999}, Shape{33, 31}}, DType::kFloat32, "HW");
  ExpectSameBytes(RunOp(Tr({1, 0}), Device::kGpu, f), RunOp(Tr({1, 0}), Device::kCpu, f), "wide 2-D");
}

INSTANTIATE_TEST_SUITE_P(
    Transpose, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Tr({2, 0, 1}), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Tr({2, 0, 1}), Device::kGpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu_f32_2d", Tr({1, 0}), Device::kGpu}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
