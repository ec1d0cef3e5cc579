// jitter on the CPU: every output pixel equals the input pixel at the offset re-drawn in the test
// from Philox; offsets cover DALI's range and no more; mask and nDegree 0 pass samples through;
// draws change with the iteration; conformance (CPU cases).
#include <gtest/gtest.h>

#include <set>

#include "core/op/philox.h"
#include "tests/operators/geometry/geometry_conformance.h"

namespace conveyor::testing {
namespace {

constexpr uint64_t kHarnessSeed = 1234;  // OpHarness's default seed


// The offset (dx, dy) of pixel (x, y): draws 2p and 2p + 1 of the sample's sequence, p = y w + x,
// each u32 % (n + 1) - floor(n / 2).
std::pair<int64_t, int64_t> Offset(int s, int64_t iteration, int64_t w, int64_t x, int64_t y, int n) {
  Philox rng(kHarnessSeed, NodeId("jit"), static_cast<uint64_t>(iteration), static_cast<uint32_t>(s));
  rng.Seek(2 * static_cast<uint64_t>(y * w + x));
  const int64_t dx = static_cast<int64_t>(rng.NextU32() % static_cast<uint32_t>(n + 1)) - n / 2;
  const int64_t dy = static_cast<int64_t>(rng.NextU32() % static_cast<uint32_t>(n + 1)) - n / 2;
  return {dx, dy};
}

TensorListCPU RunAt(const OpSpec& spec, const TensorListCPU& in, int64_t iteration, const ArgInputs& args = {}) {
  OpHarness h(spec, Device::kCpu, in.num_samples());
  h.SetInput(0, in);
  for (const auto& [name, values] : args) h.SetArgInput(name, values);
  h.set_iteration(iteration);
  h.Run();
  return h.OutputToHost(0);
}

TEST(Jitter, EveryPixelComesFromItsDrawnOffset) {
  std::vector<Shape> shapes = RandomHwcShapes(3, 1, 30, 30, 3);
  shapes.push_back(Shape{1, 1, 3});
  shapes.push_back(Shape{2, 9, 3});
  const std::vector<int32_t> degrees = {2, 3, 7, 2, 5};
  for (DType type : {DType::kUInt8, DType::kFloat32, DType::kFloat16}) {
    const TensorListCPU in = RandomBatch(shapes, type, "HWC");
    const TensorListCPU out = RunAt(Jitter().SetArgInput("nDegree", "n"), in, 5, {{"nDegree", PerSampleScalars(degrees)}});
    for (int s = 0; s < in.num_samples(); ++s) {
      const int64_t h = in.shape(s)[0], w = in.shape(s)[1];
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          const auto [dx, dy] = Offset(s, 5, w, x, y, degrees[static_cast<size_t>(s)]);
          const int64_t sx = std::min(std::max(x + dx, int64_t{0}), w - 1), sy = std::min(std::max(y + dy, int64_t{0}), h - 1);
          for (int64_t c = 0; c < 3; ++c) {
            ASSERT_EQ(At(out, s, (y * w + x) * 3 + c), At(in, s, (sy * w + sx) * 3 + c))
                << DTypeName(type) << " sample " << s << " at (" << y << ", " << x << ")";
          }
        }
      }
    }
  }
}

// With distinct pixel values, each output pixel names its source: the offsets fill DALI's range
// [-floor(n / 2), n - floor(n / 2)] and stay inside it.
TEST(Jitter, OffsetsCoverDalisRangeAndNoMore) {
  constexpr int64_t kSide = 64;
  std::vector<float> index(kSide * kSide);
  for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<float>(i);
  const TensorListCPU in = MakeBatch<float>({Shape{kSide, kSide, 1}}, {index}, "HWC");
  for (const int n : {1, 2, 3, 6}) {
    const TensorListCPU out = RunAt(Jitter().SetArg("nDegree", n), in, 0);
    std::set<int64_t> xs, ys;
    for (int64_t y = n; y < kSide - n; ++y) {  // away from the clamped edges
      for (int64_t x = n; x < kSide - n; ++x) {
        const auto src = static_cast<int64_t>(At(out, 0, y * kSide + x));
        xs.insert(src % kSide - x);
        ys.insert(src / kSide - y);
      }
    }
    std::set<int64_t> want;
    for (int64_t d = -(n / 2); d <= n - n / 2; ++d) want.insert(d);
    EXPECT_EQ(xs, want) << "nDegree " << n;
    EXPECT_EQ(ys, want) << "nDegree " << n;
  }
}

TEST(Jitter, MaskZeroAndDegreeZeroPassThrough) {
  const TensorListCPU in = RandomBatch({Shape{12, 10, 3}, Shape{7, 7, 3}}, DType::kUInt8, "HWC");
  ExpectSameBytes(RunAt(Jitter().SetArg("nDegree", 0), in, 0), in, "nDegree 0");
  ExpectSameBytes(RunAt(Jitter().SetArg("mask", 0), in, 0), in, "mask 0");
  const TensorListCPU out = RunAt(Jitter().SetArgInput("mask", "m"), in, 0, {{"mask", PerSampleScalars<int32_t>({0, 1})}});
  EXPECT_EQ(SampleValues(out, 0), SampleValues(in, 0));
  EXPECT_NE(SampleValues(out, 1), SampleValues(in, 1));
}

TEST(Jitter, DrawsChangeWithTheIterationAndRepeatWithIt) {
  const TensorListCPU in = RandomBatch({Shape{20, 20, 3}}, DType::kUInt8, "HWC");
  EXPECT_EQ(SampleValues(RunAt(Jitter(), in, 3), 0), SampleValues(RunAt(Jitter(), in, 3), 0));
  EXPECT_NE(SampleValues(RunAt(Jitter(), in, 3), 0), SampleValues(RunAt(Jitter(), in, 4), 0));
}

TEST(Jitter, GrayImagesWithoutAChannelAxis) {
  const TensorListCPU in = RandomBatch({Shape{9, 11}}, DType::kUInt8, "HW");
  const TensorListCPU out = RunAt(Jitter(), in, 0);
  ASSERT_EQ(out.shape(0), (Shape{9, 11}));
  for (int64_t y = 0; y < 9; ++y) {
    for (int64_t x = 0; x < 11; ++x) {
      const auto [dx, dy] = Offset(0, 0, 11, x, y, 2);
      const int64_t sx = std::min<int64_t>(std::max<int64_t>(x + dx, 0), 10), sy = std::min<int64_t>(std::max<int64_t>(y + dy, 0), 8);
      ASSERT_EQ(At(out, 0, y * 11 + x), At(in, 0, sy * 11 + sx));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Jitter, OperatorConformance, ::testing::ValuesIn(ImageConformanceCases("jitter", Device::kCpu)),
                         CaseName);

}  // namespace
}  // namespace conveyor::testing
