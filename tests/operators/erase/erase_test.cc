// erase: CPU results against a per-pixel membership test over the regions as given (absolute,
// normalized, centered), per-sample regions and fills, errors, GPU vs CPU (bit-identical),
// conformance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/cuda/device.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/image_common/image_testing.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

OpSpec Erase() { return OpSpec("erase", "er").AddInput("x").AddOutput("y"); }

struct Box {
  double y, x, h, w;  // pixels
};

// Every element: the fill when its pixel lies in a box (y <= py < y + h, x <= px < x + w).
void ExpectErased(const TensorListCPU& in, const TensorListCPU& out, int s, const std::vector<Box>& boxes,
                  const std::vector<float>& fill) {
  const Shape& shape = in.shape(s);
  const int64_t w = shape[1], c = shape.ndim() == 3 ? shape[2] : 1;
  for (int64_t p = 0; p < shape[0] * w; ++p) {
    const double py = static_cast<double>(p / w), px = static_cast<double>(p % w);
    bool inside = false;
    for (const Box& b : boxes) inside |= py >= b.y && py < b.y + b.h && px >= b.x && px < b.x + b.w;
    for (int64_t k = 0; k < c; ++k) {
      const float want = inside ? fill[fill.size() == 1 ? 0 : static_cast<size_t>(k)] : At(in, s, p * c + k);
      ASSERT_EQ(At(out, s, p * c + k), want) << "sample " << s << " pixel " << p << " channel " << k;
    }
  }
}

TEST(Erase, PerSampleRegionsAndFills) {
  const TensorListCPU in = RandomBatch({Shape{20, 30, 3}, Shape{15, 10, 3}, Shape{8, 8, 3}}, DType::kUInt8, "HWC");
  const ArgInputs args = {
      {"anchor", PerSampleLists<float>({{2, 3, 10, 20}, {-3, 5}, {4, 4}})},
      {"shape", PerSampleLists<float>({{5, 4, 30, 30}, {6, 100}, {0, 3}})},  // an empty region erases nothing
      {"fill_value", PerSampleLists<float>({{7}, {1, 2, 3}, {9}})}};
  const TensorListCPU out =
      RunOp(Erase().SetArgInput("anchor", "a").SetArgInput("shape", "s").SetArgInput("fill_value", "f"), Device::kCpu, in, args);
  ExpectErased(in, out, 0, {{2, 3, 5, 4}, {10, 20, 30, 30}}, {7});
  ExpectErased(in, out, 1, {{-3, 5, 6, 100}}, {1, 2, 3});
  ExpectErased(in, out, 2, {}, {9});
}

// HWC -> CHW through the transpose operator (its layout follows the permutation).
TensorListCPU ToChw(const TensorListCPU& hwc) {
  return RunOp(OpSpec("transpose", "t").AddInput("x").AddOutput("y").SetArg("perm", std::vector<int64_t>{2, 0, 1}),
               Device::kCpu, hwc);
}

// CHW input (crop_mirror_normalize's default output, where timm erases): the same regions and fills
// per channel plane as on the HWC image, on both backends.
TEST(Erase, ChwEqualsHwcTransposed) {
  const std::vector<Shape> shapes = RandomHwcShapes(4, 1, 30, 50, 3);
  std::vector<std::vector<float>> anchors, sizes, fills;
  for (int s = 0; s < 4; ++s) {
    anchors.push_back(RandomVector<float>(4, -5.f, 30.f));
    sizes.push_back(RandomVector<float>(4, 0.f, 25.f));
    fills.push_back(RandomVector<float>(3, 0.f, 255.f));
  }
  const ArgInputs args = {
      {"anchor", PerSampleLists(anchors)}, {"shape", PerSampleLists(sizes)}, {"fill_value", PerSampleLists(fills)}};
  const OpSpec spec = Erase().SetArgInput("anchor", "a").SetArgInput("shape", "s").SetArgInput("fill_value", "f");
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU hwc = RandomBatch(shapes, type, "HWC");
    const TensorListCPU chw = ToChw(hwc);
    ASSERT_EQ(std::string(chw.layout().str()), "CHW");
    const TensorListCPU want = ToChw(RunOp(spec, Device::kCpu, hwc, args));
    ExpectSameBytes(RunOp(spec, Device::kCpu, chw, args), want, "cpu " + std::string(DTypeName(type)));
    if (cuda::HasCudaDevice()) {
      ExpectSameBytes(RunOp(spec, Device::kGpu, chw, args), want, "gpu " + std::string(DTypeName(type)));
    }
  }
}

TEST(Erase, NormalizedAndCentered) {
  const TensorListCPU in = RandomBatch({Shape{20, 40, 1}}, DType::kFloat32, "HWC");
  // Normalized: anchor (0.25, 0.5) of (20, 40) = (5, 20), shape (0.5, 0.25) = (10, 10).
  ExpectErased(in,
               RunOp(Erase().SetArg("anchor", std::vector<double>{0.25, 0.5}).SetArg("shape", std::vector<double>{0.5, 0.25})
                         .SetArg("normalized", true).SetArg("fill_value", std::vector<double>{-1}), Device::kCpu, in),
               0, {{5, 20, 10, 10}}, {-1});
  // Centered: center (10, 10), shape (4, 6): rows 8..11, columns 7..12.
  ExpectErased(in,
               RunOp(Erase().SetArg("anchor", std::vector<double>{10, 10}).SetArg("shape", std::vector<double>{4, 6})
                         .SetArg("centered_anchor", true), Device::kCpu, in),
               0, {{8, 7, 4, 6}}, {0});
  // HW images.
  const TensorListCPU hw = RandomBatch({Shape{6, 7}}, DType::kFloat32, "HW");
  ExpectErased(hw, RunOp(Erase().SetArg("anchor", std::vector<double>{1, 1}).SetArg("shape", std::vector<double>{2, 3}), Device::kCpu, hw),
               0, {{1, 1, 2, 3}}, {0});
}

TEST(Erase, Errors) {
  const TensorListCPU two = RandomBatch({Shape{4, 4, 3}, Shape{4, 4, 3}}, DType::kUInt8, "HWC");
  EXPECT_THAT(RunError(Erase().SetArgInput("shape", "s"), two, {{"shape", PerSampleLists<float>({{1, 1}, {1, 1, 1}})}}),
              HasSubstr("op \"erase\" (er): arguments \"anchor\" and \"shape\": expected 2 values (y, x and h, w) per region, "
                        "as many in each, got 3 and 3 at sample 1"));
  EXPECT_THAT(RunError(Erase().SetArg("anchor", std::vector<double>{0, 0}).SetArg("shape", std::vector<double>{1, -1}), two),
              HasSubstr("op \"erase\" (er): argument \"shape\": expected a value >= 0, got -1 at sample 0"));
  EXPECT_THAT(RunError(Erase().SetArg("shape", std::vector<double>(34, 1.0)), two),
              HasSubstr("argument \"shape\": expected at most 16 regions, got 17 at sample 0"));
  EXPECT_THAT(RunError(Erase().SetArg("fill_value", std::vector<double>{1, 2}), two),
              HasSubstr("op \"erase\" (er): argument \"fill_value\": expected 1 value or 1 per channel (3, at most 4), got 2 at sample 0"));
  EXPECT_THAT(RunError(Erase(), RandomBatch({Shape{2, 3, 4, 4}}, DType::kUInt8, "FHWC")),
              HasSubstr("op \"erase\" (er): input 0: expected layout HWC or CHW or HW, got FHWC"));
}

TEST(EraseGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = RandomHwcShapes(5, 1, 100, 200, 3);
  std::vector<std::vector<float>> anchors, sizes;
  for (int s = 0; s < 5; ++s) {
    anchors.push_back(RandomVector<float>(6, -10.f, 90.f));
    sizes.push_back(RandomVector<float>(6, 0.f, 60.f));
  }
  const ArgInputs args = {{"anchor", PerSampleLists(anchors)}, {"shape", PerSampleLists(sizes)}};
  for (DType type : {DType::kUInt8, DType::kFloat32}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC");
    const OpSpec spec = Erase().SetArgInput("anchor", "a").SetArgInput("shape", "s").SetArg("fill_value", std::vector<double>{1, 2, 3});
    ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args), std::string(DTypeName(type)));
  }
}

OpSpec Box2() {
  return Erase().SetArg("anchor", std::vector<double>{1, 1}).SetArg("shape", std::vector<double>{2, 2}).SetArg("fill_value", std::vector<double>{5});
}

INSTANTIATE_TEST_SUITE_P(
    Erase, OperatorConformance,
    ::testing::Values(ConformanceCase{"cpu", Box2(), Device::kCpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu", Box2(), Device::kGpu, DType::kUInt8, true, "HWC", 3},
                      ConformanceCase{"gpu_f32", Box2(), Device::kGpu, DType::kFloat32, true, "HWC", 3}),
    CaseName);

}  // namespace
}  // namespace conveyor::testing
