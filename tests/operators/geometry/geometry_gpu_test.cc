// The GPU geometry operators against their CPU references, bit for bit (warp.h and jitter.h: the
// same float operations in the same order, unfused): fresh random images and per-sample
// parameters, every interpolation, border, dtype pair and channel count, edge sizes (1 x 1, odd,
// zero-sized samples and outputs, one large image), descriptors rewritten between runs of one
// harness; the GPU conformance cases. Tag gpu: every test skips without a GPU.
#include <gtest/gtest.h>

#include "tests/operators/geometry/geometry_conformance.h"

namespace conveyor::testing {
namespace {

void ExpectGpuEqualsCpu(const OpSpec& spec, const TensorListCPU& in, const ArgInputs& args, const std::string& what) {
  ExpectSameBytes(RunOp(spec, Device::kGpu, in, args), RunOp(spec, Device::kCpu, in, args), what);
}

// Edge shapes plus random ones, `channels` each.
std::vector<Shape> Shapes(int64_t channels) {
  std::vector<Shape> shapes = RandomHwcShapes(5, 1, 70, 90, channels);
  for (const Shape& s : {Shape{1, 1, channels}, Shape{0, 5, channels}, Shape{3, 1, channels}, Shape{33, 65, channels}}) {
    shapes.push_back(s);
  }
  return shapes;
}

TEST(WarpAffineGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  for (int64_t channels : {1, 3, 4, 8}) {
    const std::vector<Shape> shapes = Shapes(channels);
    std::vector<Matrix> ms;
    std::vector<std::vector<float>> sizes;
    for (const Shape& s : shapes) {
      std::vector<int64_t> out = RandomVector<int64_t>(2, 1, 80);
      if (sizes.size() == 2) out = {1, 1};  // a one-pixel output
      if (sizes.size() == 3) out = {0, 4};  // an empty output of a non-empty input
      sizes.push_back({static_cast<float>(out[0]), static_cast<float>(out[1])});
      ms.push_back(RandomMatrix(std::max<int64_t>(s[0], 1), std::max<int64_t>(s[1], 1), std::max<int64_t>(out[0], 1),
                                std::max<int64_t>(out[1], 1)));
    }
    std::vector<std::vector<float>> fills;
    for (size_t i = 0; i < shapes.size(); ++i) fills.push_back(RandomVector<float>(static_cast<size_t>(channels), 0.f, 255.f));
    const ArgInputs clamp_args = {{"matrix", PerSampleMatrices(ms)}, {"size", PerSampleLists(sizes)}};
    ArgInputs fill_args = clamp_args;
    fill_args.emplace("fill_value", PerSampleLists(fills));
    for (DType in_type : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU in = RandomHwc(shapes, in_type);
      for (const std::string out_type : {"same", "uint8", "float32"}) {
        for (const std::string interp : {"nearest", "linear", "cubic"}) {
          OpSpec spec = Warp(interp).SetArgInput("matrix", "m").SetArgInput("size", "s").SetArg("dtype", out_type);
          const std::string what = interp + " " + std::string(DTypeName(in_type)) + "->" + out_type + " c" + std::to_string(channels);
          ExpectGpuEqualsCpu(spec, in, clamp_args, what + " clamp");
          ExpectGpuEqualsCpu(OpSpec(spec).SetArgInput("fill_value", "f"), in, fill_args, what + " fill");
        }
      }
    }
  }
}

TEST(WarpAffineGpu, InverseMapFalseAndConstantMatrix) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU in = RandomHwc(Shapes(3), DType::kUInt8);
  const std::vector<double> forward = {0.8, -0.3, 4, 0.25, 1.2, -3};
  for (const std::string interp : {"nearest", "linear", "cubic"}) {
    ExpectGpuEqualsCpu(Warp(interp).SetArg("matrix", forward).SetArg("inverse_map", false), in, {}, interp + " forward");
    ExpectGpuEqualsCpu(Warp(interp).SetArg("matrix", forward).SetArg("fill_value", std::vector<double>{0}), in, {}, interp + " inverse");
  }
}

TEST(RotateGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  for (int64_t channels : {1, 3, 4}) {
    const std::vector<Shape> shapes = Shapes(channels);
    std::vector<float> angles = RandomVector<float>(shapes.size(), -360.f, 360.f);
    angles[0] = 90.f;   // quarter turns take the exact path of the same code
    angles[1] = -180.f;
    for (DType type : {DType::kUInt8, DType::kFloat32}) {
      const TensorListCPU in = RandomHwc(shapes, type);
      for (const std::string interp : {"nearest", "linear", "cubic"}) {
        for (const bool keep : {false, true}) {
          const OpSpec spec = Rotate(interp).SetArgInput("angle", "a").SetArg("keep_size", keep);
          const ArgInputs args = {{"angle", PerSampleScalars(angles)}};
          const std::string what = interp + (keep ? " keep " : " canvas ") + std::string(DTypeName(type)) + " c" + std::to_string(channels);
          ExpectGpuEqualsCpu(spec, in, args, what);
          ExpectGpuEqualsCpu(OpSpec(spec).SetArg("fill_value", std::vector<double>{17}), in, args, what + " fill");
        }
      }
    }
  }
}

TEST(RotateGpu, LargeImage) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU in = RandomBatch({Shape{1080, 1920, 3}, Shape{7, 5, 3}}, DType::kUInt8, "HWC");
  ExpectGpuEqualsCpu(Rotate().SetArgInput("angle", "a"), in, {{"angle", PerSampleScalars<float>({17.5f, -3.f})}}, "1080p");
}

TEST(JitterGpu, MatchesCpuBitExactly) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Shape> shapes = Shapes(3);
  const std::vector<int32_t> degrees = RandomVector<int32_t>(shapes.size(), 0, 9);
  std::vector<int32_t> mask = RandomVector<int32_t>(shapes.size(), 0, 1);
  mask[0] = 1;
  const ArgInputs args = {{"nDegree", PerSampleScalars(degrees)}, {"mask", PerSampleScalars(mask)}};
  const OpSpec spec = Jitter().SetArgInput("nDegree", "n").SetArgInput("mask", "m");
  for (DType type : {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    const TensorListCPU in = RandomHwc(shapes, type);
    for (int64_t iteration : {0, 7}) {
      OpHarness gpu(spec, Device::kGpu, in.num_samples()), cpu(spec, Device::kCpu, in.num_samples());
      for (OpHarness* h : {&gpu, &cpu}) {
        h->SetInput(0, in);
        for (const auto& [name, values] : args) h->SetArgInput(name, values);
        h->set_iteration(iteration);
      }
      cuda::Stream stream = cuda::Stream::Create();
      gpu.Run(stream.view());
      cpu.Run();
      ExpectSameBytes(gpu.OutputToHost(0), cpu.OutputToHost(0), std::string(DTypeName(type)) + " iteration " + std::to_string(iteration));
    }
  }
}

// One harness run twice with new per-sample matrices: the second run's descriptors must carry them.
TEST(WarpAffineGpu, DescriptorsFollowEachRun) {
  CONVEYOR_REQUIRE_GPU();
  const TensorListCPU in = RandomBatch({Shape{20, 30, 3}, Shape{11, 9, 3}}, DType::kUInt8, "HWC");
  const OpSpec spec = Warp().SetArgInput("matrix", "m");
  OpHarness gpu(spec, Device::kGpu, 2);
  gpu.SetInput(0, in);
  cuda::Stream stream = cuda::Stream::Create();
  for (int run = 0; run < 3; ++run) {
    const TensorListCPU ms = PerSampleMatrices({RandomMatrix(20, 30, 20, 30), RandomMatrix(11, 9, 11, 9)});
    gpu.SetArgInput("matrix", ms);
    gpu.Run(stream.view());
    ExpectSameBytes(gpu.OutputToHost(0), RunOp(spec, Device::kCpu, in, {{"matrix", ms}}), "run " + std::to_string(run));
  }
}

INSTANTIATE_TEST_SUITE_P(WarpAffineGpu, OperatorConformance,
                         ::testing::ValuesIn(ImageConformanceCases("warp_affine", Device::kGpu)), CaseName);
INSTANTIATE_TEST_SUITE_P(RotateGpu, OperatorConformance, ::testing::ValuesIn(ImageConformanceCases("rotate", Device::kGpu)),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(JitterGpu, OperatorConformance, ::testing::ValuesIn(ImageConformanceCases("jitter", Device::kGpu)),
                         CaseName);

}  // namespace
}  // namespace conveyor::testing
