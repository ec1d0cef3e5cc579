// resize on the GPU against the CPU reference: bit-identical (the kernel evaluates the same float
// expressions in the same order, without fused multiply-adds; see resample_math.h), on fresh
// random images of varying per-sample sizes, for every filter, dtype pair and antialias setting,
// and in the regimes that take other paths in the kernel: many tiles with ragged edges, large
// downscales (several row chunks per tile, more taps than the cached 16), 1..8 channels, and
// batches mixing 3-channel samples (one path) with others (the other).
#include <gtest/gtest.h>

#include <initializer_list>

#include "tests/operators/image_common/clip_testing.h"
#include "tests/operators/resize/image_test_util.h"

namespace conveyor::testing {
namespace {

OpSpec Resize() { return OpSpec("resize", "r").AddInput("x").AddOutput("y"); }

void ExpectGpuEqualsCpu(const OpSpec& spec, const TensorListCPU& in,
                        const std::vector<std::pair<std::string, TensorListCPU>>& args = {}) {
  const TensorListCPU cpu = RunOp({spec, in, args}, Device::kCpu);
  const TensorListCPU gpu = RunOp({spec, in, args}, Device::kGpu);
  EXPECT_EQ(CompareExact(gpu, cpu), "") << "seed " << RngSeed();
}

TEST(ResizeGpu, EqualsCpuForEveryFilterDtypeAndAntialias) {
  CONVEYOR_REQUIRE_GPU();
  for (const char* interp : {"nearest", "linear", "cubic"}) {
    for (bool aa : {true, false}) {
      for (DType in_dtype : {DType::kUInt8, DType::kFloat32}) {
        for (const char* out_dtype : {"same", "uint8", "float32"}) {
          SCOPED_TRACE(std::string(interp) + " antialias " + std::to_string(aa) + " " + std::string(DTypeName(in_dtype)) +
                       " -> " + out_dtype);
          const TensorListCPU in = RandomImages(VaryingShapes(6, 120, 150, 3), in_dtype);
          ExpectGpuEqualsCpu(Resize()
                                 .SetArg("resize_shorter", 45.0)
                                 .SetArg("interp_type", interp)
                                 .SetArg("antialias", aa)
                                 .SetArg("dtype", out_dtype),
                             in);
        }
      }
    }
  }
}

TEST(ResizeGpu, EqualsCpuWithPerSampleSizesUpAndDown) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU in = RandomImages(VaryingShapes(5, 90, 90, 3), DType::kUInt8);
  std::vector<std::vector<float>> sizes;
  for (int i = 0; i < 5; ++i) sizes.push_back({float(RandomVector<int>(1, 1, 200)[0]), float(RandomVector<int>(1, 1, 200)[0])});
  ExpectGpuEqualsCpu(Resize().SetArgInput("size", "sizes"), in, {{"size", ArgValues(sizes)}});
}

TEST(ResizeGpu, EqualsCpuOnLargeDownscalesAndManyTaps) {
  CONVEYOR_REQUIRE_GPU();
  // 1200 rows -> 16: one 16-row tile needs all 1200 input rows (several chunks) and ~150 cubic taps.
  for (const char* interp : {"linear", "cubic"}) {
    const TensorListCPU in = RandomImages({{1200, 40, 3}, {37, 900, 3}, {640, 480, 3}}, DType::kUInt8);
    ExpectGpuEqualsCpu(Resize().SetArg("size", std::vector<double>{16, 8}).SetArg("interp_type", interp), in);
  }
}

// Resizes of the given uint8 RGB photos to 224 x 224 with each filter, to uint8 and float32.
void ExpectPhotoResizesEqualCpu(const std::vector<Shape>& shapes, std::initializer_list<const char*> interps,
                                bool antialias) {
  for (const char* interp : interps) {
    for (const char* out_dtype : {"uint8", "float32"}) {
      SCOPED_TRACE(std::string(interp) + " -> " + out_dtype);
      const TensorListCPU in = RandomImages(shapes, DType::kUInt8);
      ExpectGpuEqualsCpu(Resize()
                             .SetArg("size", std::vector<double>{224, 224})
                             .SetArg("interp_type", interp)
                             .SetArg("antialias", antialias)
                             .SetArg("dtype", out_dtype),
                         in);
    }
  }
}

// Photo-sized antialiased downscales (the benchmark's 375x500 -> 224 and its neighbours): the
// kernel's exact-taps path (every column and row of a tile padded to the tile's largest tap count,
// lists at the right and bottom edges started earlier) against the reference, bit for bit.
TEST(ResizeGpu, EqualsCpuOnPhotoSizedAntialiasedDownscales) {
  CONVEYOR_REQUIRE_GPU();
  ExpectPhotoResizesEqualCpu({{375, 500, 3}, {500, 375, 3}, {333, 499, 3}, {230, 1000, 3}, {17, 9, 3}},
                             {"linear", "cubic", "nearest"}, true);
}

// Photo-sized resizes without antialias (the two-tap kernel): its staged path for uint8 RGB linear
// (each tile's input footprint copied to shared memory with aligned 16-byte loads, taps read from
// there), the direct path for footprints too large to stage (230x1000: 4.5x across) and for
// nearest, and upscales. Samples start at unaligned addresses (packed back to back), and the last
// tiles' footprints end at their image's last byte (vectors past it assembled byte by byte).
TEST(ResizeGpu, EqualsCpuOnPhotoSizedResizesWithoutAntialias) {
  CONVEYOR_REQUIRE_GPU();
  ExpectPhotoResizesEqualCpu(
      {{375, 500, 3}, {500, 375, 3}, {333, 499, 3}, {230, 1000, 3}, {17, 9, 3}, {101, 67, 3}, {224, 224, 3}},
      {"linear", "nearest"}, false);
}

TEST(ResizeGpu, EqualsCpuForOneToEightChannels) {
  CONVEYOR_REQUIRE_GPU();
  for (int c : {1, 2, 4, 5, 8}) {
    SCOPED_TRACE(c);
    const TensorListCPU in = RandomImages(VaryingShapes(4, 70, 70, c), DType::kUInt8);
    ExpectGpuEqualsCpu(Resize().SetArg("size", std::vector<double>{33, 47}).SetArg("interp_type", "cubic"), in);
  }
}

// 3-channel samples and others in one batch: each of the two kernels takes its own samples.
TEST(ResizeGpu, EqualsCpuForMixedChannelCountsInOneBatch) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Shape> shapes;
  for (int c : {3, 1, 3, 4, 3, 2}) shapes.push_back(VaryingShapes(1, 90, 90, c)[0]);
  for (const char* interp : {"linear", "cubic"}) {
    SCOPED_TRACE(interp);
    const TensorListCPU in = RandomImages(shapes, DType::kUInt8);
    ExpectGpuEqualsCpu(Resize().SetArg("size", std::vector<double>{29, 41}).SetArg("interp_type", interp), in);
  }
}

TEST(ResizeGpu, EqualsCpuOnTheBenchmarkShapeWithAZeroSizedSample) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU in = RandomImages({{375, 500, 3}, {0, 500, 3}, {500, 375, 3}}, DType::kUInt8);
  ExpectGpuEqualsCpu(Resize().SetArg("size", std::vector<double>{224, 224}), in);
  ExpectGpuEqualsCpu(Resize().SetArg("size", std::vector<double>{224, 224}).SetArg("antialias", false), in);
}

// FHWC clips (each clip's frames share its size; tiles of all frames in one index space): bit for
// bit the CPU for each kernel path — the two-tap kernel's staged uint8 RGB path and its direct
// and generic-channel paths, the tiled kernel's exact-taps, unrolled and chunked paths — with
// mixed frame counts (0 and 1 included), per-sample sizes and one frame past the image's last byte
// (its staged vectors clipped to the frame, not the clip).
TEST(ResizeGpu, ClipsEqualCpuOnEveryKernelPath) {
  CONVEYOR_REQUIRE_GPU();
  struct Case {
    const char* interp;
    bool antialias;
    int channels;
    int max_hw;
  };
  for (const Case& c : {Case{"linear", false, 3, 300}, Case{"nearest", false, 3, 200}, Case{"linear", false, 1, 120},
                        Case{"linear", true, 3, 300}, Case{"cubic", true, 3, 200}, Case{"cubic", true, 4, 120}}) {
    SCOPED_TRACE(std::string(c.interp) + (c.antialias ? " antialias " : " ") + std::to_string(c.channels) + " channels");
    const TensorListCPU clips =
        RandomClips({3, 1, 5, 0, 2, 4}, RandomFrameShapes(6, 8, c.max_hw, c.channels), DType::kUInt8);
    std::vector<std::vector<float>> sizes;
    for (int i = 0; i < clips.num_samples(); ++i) {
      sizes.push_back({float(RandomVector<int>(1, 1, 160)[0]), float(RandomVector<int>(1, 1, 160)[0])});
    }
    ExpectGpuEqualsCpu(Resize().SetArgInput("size", "s").SetArg("interp_type", c.interp).SetArg("antialias", c.antialias),
                       clips, {{"size", ArgValues(sizes)}});
  }
  // Large downscales (row chunks, more taps than cached) and float32 in and out.
  const TensorListCPU big = RandomClips({2, 3}, {{900, 40, 3}, {37, 700, 3}}, DType::kFloat32);
  ExpectGpuEqualsCpu(Resize().SetArg("size", std::vector<double>{16, 8}).SetArg("interp_type", "cubic"), big);
}

// A second run with smaller images in the same harness reuses the descriptors and the output
// buffer (the capture-replay situation: shapes change within capacity).
TEST(ResizeGpu, SecondRunWithOtherShapesInSameHarness) {
  CONVEYOR_REQUIRE_GPU();
  const OpSpec spec = Resize().SetArg("resize_longer", 64.0);
  OpHarness h(spec, Device::kGpu, 3);
  cuda::Stream stream = cuda::Stream::Create();
  for (int round = 0; round < 3; ++round) {
    const TensorListCPU in = RandomImages(VaryingShapes(3, 300 - 100 * round, 200, 3), DType::kUInt8);
    h.SetInput(0, in);
    h.Run(stream.view());
    EXPECT_EQ(CompareExact(h.OutputToHost(0), RunOp({spec, in}, Device::kCpu)), "") << "round " << round;
  }
}

}  // namespace
}  // namespace conveyor::testing
