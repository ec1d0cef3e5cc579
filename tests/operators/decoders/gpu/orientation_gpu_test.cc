// adjust_orientation on the GPU backend: EXIF-turned JPEGs (tags 2-8) take the CPU path and are
// uploaded, so their pixels are the CPU backend's byte for byte, whole and in random-crop windows
// (drawn in the turned image, the same windows on both backends), and they are counted as CPU
// images; untagged and tag-1 JPEGs stay on nvJPEG (within gpu_cpu_compare.h's tolerance); with
// adjust_orientation false every JPEG is decoded as stored by nvJPEG. Skips without a GPU.
#include <gtest/gtest.h>

#include "core/cuda/stream.h"
#include "core/op/harness.h"
#include "operators/decoders/gpu_decoder.h"
#include "tests/operators/decoders/gpu/gpu_cpu_compare.h"
#include "tests/util/gpu_test.h"
#include "tools/testimages/exif_images.h"

namespace conveyor::testing {
namespace {

struct Files {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<int> orientations;  // the tag, 1 when there is none
};

// Tags 0 (none) to 8, at two sizes: 18 JPEGs, 14 of them turned.
Files OrientedFiles() {
  Files f;
  for (const auto& [h, w] : {std::pair{37, 53}, std::pair{120, 90}}) {
    for (int o = 0; o <= 8; ++o) {
      f.bytes.push_back(testimages::MakeOrientedJpeg(h, w, o, /*seed=*/o + w));
      f.orientations.push_back(o == 0 ? 1 : o);
    }
  }
  return f;
}

TensorListCPU Batch(const Files& files) {
  std::vector<Shape> shapes;
  for (const auto& b : files.bytes) shapes.push_back(Shape{static_cast<int64_t>(b.size())});
  return MakeBatch<uint8_t>(shapes, files.bytes);
}

OpSpec Decoder(const std::string& op, const std::string& color, bool adjust) {
  return OpSpec(op, "dec")
      .AddInput("encoded")
      .AddOutput("images")
      .SetArg("output_type", color)
      .SetArg("adjust_orientation", adjust);
}

TensorListCPU RunOn(const OpSpec& spec, Device device, const TensorListCPU& batch, int64_t iteration) {
  // The stream outlives the harness and the copy to the host (which reads on it).
  cuda::Stream stream = device == Device::kGpu ? cuda::Stream::Create() : cuda::Stream();
  OpHarness h(spec, device);
  h.set_num_threads(4);
  h.set_iteration(iteration);
  h.SetInput(0, batch);
  if (device == Device::kGpu) {
    h.Run(stream.view());
  } else {
    h.Run();
  }
  return h.OutputToHost(0);
}

void ExpectBackendsAgree(const OpSpec& spec, const Files& files, bool adjust, int64_t iteration, bool roi) {
  const TensorListCPU batch = Batch(files);
  const TensorListCPU cpu = RunOn(spec, Device::kCpu, batch, iteration);
  const TensorListCPU gpu = RunOn(spec, Device::kGpu, batch, iteration);
  const bool gray = spec.Arg<std::string>("output_type") == "GRAY";
  ASSERT_EQ(gpu.shapes(), cpu.shapes());
  for (int i = 0; i < gpu.num_samples(); ++i) {
    const int o = files.orientations[static_cast<size_t>(i)];
    const std::string what = spec.op() + " orientation " + std::to_string(o) + " sample " + std::to_string(i);
    // Turned images: the CPU path, the same code as the CPU backend.
    const DecodeTolerance tol = adjust && o != 1 ? DecodeTolerance{0, 0, 0} : ToleranceFor(batch, i, gray, roi);
    ExpectDecodedClose(gpu, cpu, i, tol, what);
  }
}

TEST(AdjustOrientationGpu, TurnedImagesGiveTheCpuBackendsPixels) {
  CONVEYOR_REQUIRE_GPU();
  const Files files = OrientedFiles();
  for (const char* color : {"RGB", "GRAY"}) {
    ExpectBackendsAgree(Decoder("decoders.image", color, true), files, true, 0, false);
    for (int64_t it = 0; it < 2; ++it) {
      ExpectBackendsAgree(Decoder("decoders.image_random_crop", color, true), files, true, it, true);
    }
  }
}

TEST(AdjustOrientationGpu, FalseDecodesAsStoredOnNvjpeg) {
  CONVEYOR_REQUIRE_GPU();
  const Files files = OrientedFiles();
  ExpectBackendsAgree(Decoder("decoders.image", "RGB", false), files, false, 0, false);
  const TensorListCPU gpu = RunOn(Decoder("decoders.image", "RGB", false), Device::kGpu, Batch(files), 0);
  for (int i = 0; i < gpu.num_samples(); ++i) {
    const auto& b = files.bytes[static_cast<size_t>(i)];
    const ops::ImageInfo info = ops::ParseImageInfo(b.data(), b.size());
    EXPECT_EQ(gpu.shape(i), (Shape{info.height, info.width, 3})) << i;
  }
}

TEST(AdjustOrientationGpu, TurnedImagesAreCountedAsCpuImages) {
  CONVEYOR_REQUIRE_GPU();
  const Files files = OrientedFiles();
  int turned = 0;
  for (int o : files.orientations) turned += o != 1;
  const ops::GpuDecoderCounters before = ops::ProcessGpuDecoderCounters();
  RunOn(Decoder("decoders.image", "RGB", true), Device::kGpu, Batch(files), 0);
  const ops::GpuDecoderCounters after = ops::ProcessGpuDecoderCounters();
  EXPECT_GE(after.images_cpu - before.images_cpu, turned);
}

}  // namespace
}  // namespace conveyor::testing
