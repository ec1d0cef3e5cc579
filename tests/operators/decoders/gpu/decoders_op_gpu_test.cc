// decoders.image and decoders.image_random_crop with device gpu through OpHarness, against the same
// operators on the CPU: the test-image library's files (JPEG baseline/progressive × every
// subsampling, grayscale, odd sizes; PNG gray 1-16 bit, gray+alpha, RGB, RGBA, 16-bit, palette,
// Adam7 — PNGs take the GPU backend's CPU path) plus fresh photo-like JPEGs of random sizes, for
// RGB/BGR/GRAY; the random-crop windows (identical shapes for the same seed and iteration); the
// hw_decoder_load argument at both ends; work on the given stream only; errors with node and
// sample; and the conformance suite's GPU cases. Tolerances: gpu_cpu_compare.h. Outputs are
// poisoned by OpHarness before every run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/op/harness.h"
#include "operators/decoders/gpu_decoder.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/decoders/gpu/gpu_cpu_compare.h"
#include "tests/util/gpu_test.h"
#include "tests/util/test_kernels.h"
#include "tools/testimages/format_images.h"
#include "tools/testimages/test_images.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using testimages::Subsampling;
using testimages::TestFile;

struct Encoded {
  std::string name;
  std::vector<uint8_t> bytes;
};

// The library's good files; with `min_side`, only those whose both sides reach it (to crop).
std::vector<Encoded> LibraryFiles(int min_side = 0) {
  std::vector<Encoded> out;
  for (TestFile& f : testimages::MakeTestSet()) {
    if (f.kind == TestFile::Kind::kBroken) continue;
    const int h = f.kind == TestFile::Kind::kPng ? f.png.height : f.image.height;
    const int w = f.kind == TestFile::Kind::kPng ? f.png.width : f.image.width;
    if (std::min(h, w) < min_side) continue;
    out.push_back({f.name, std::move(f.bytes)});
  }
  return out;
}

// Fresh photo-like JPEGs of random sizes, subsamplings and modes (seeded from the test's Rng).
std::vector<Encoded> RandomPhotos(int count) {
  const Subsampling subs[] = {Subsampling::k444, Subsampling::k422, Subsampling::k420, Subsampling::kGray};
  std::uniform_int_distribution<int> side(16, 420), pick(0, 3), quality(70, 98), coin(0, 1);
  std::vector<Encoded> out;
  for (int i = 0; i < count; ++i) {
    const int h = side(Rng()), w = side(Rng());
    const Subsampling sub = subs[pick(Rng())];
    const bool progressive = coin(Rng()) == 1;
    const testimages::Image8 img = testimages::MakePhotoLike(h, w, sub == Subsampling::kGray ? 1 : 3, Rng()());
    out.push_back({"photo_" + std::to_string(w) + "x" + std::to_string(h) + "_" + testimages::SubsamplingName(sub) +
                       (progressive ? "_progressive" : "_baseline") + ".jpg",
                   testimages::EncodeJpeg(img, sub, quality(Rng()), progressive)});
  }
  return out;
}

TensorListCPU Batch(const std::vector<Encoded>& files) {
  std::vector<Shape> shapes;
  std::vector<std::vector<uint8_t>> bytes;
  for (const Encoded& f : files) {
    shapes.push_back(Shape{static_cast<int64_t>(f.bytes.size())});
    bytes.push_back(f.bytes);
  }
  return MakeBatch<uint8_t>(shapes, bytes);
}

OpSpec Decoder(const std::string& op, const std::string& output_type) {
  return OpSpec(op, "dec").AddInput("encoded").AddOutput("images").SetArg("output_type", output_type);
}

// The CPU backend's output for `spec` on `batch` at `iteration` (the reference).
TensorListCPU RunCpu(const OpSpec& spec, const TensorListCPU& batch, int64_t iteration = 0) {
  OpHarness h(spec, Device::kCpu);
  h.set_num_threads(4);
  h.set_iteration(iteration);
  h.SetInput(0, batch);
  h.Run();
  return h.OutputToHost(0);
}

// Every sample of `gpu` against `cpu` within its tolerance, and the list's dtype and layout.
// `roi`: decoders.image_random_crop's windows (see gpu_cpu_compare.h on window edges).
void ExpectBatchClose(const TensorListCPU& gpu, const TensorListCPU& cpu, const TensorListCPU& encoded,
                      const std::vector<Encoded>& files, bool gray, const std::string& what, bool roi = false) {
  ASSERT_EQ(gpu.num_samples(), static_cast<int>(files.size())) << what;
  ASSERT_EQ(gpu.shapes(), cpu.shapes()) << what;
  EXPECT_EQ(gpu.dtype(), DType::kUInt8);
  EXPECT_EQ(gpu.layout(), Layout("HWC"));
  for (int i = 0; i < gpu.num_samples(); ++i) {
    ExpectDecodedClose(gpu, cpu, i, ToleranceFor(encoded, i, gray, roi), what + " " + files[static_cast<size_t>(i)].name);
  }
}

TEST(DecodersImageGpu, MatchesTheCpuBackendOnEveryKindOfFile) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Encoded> files = LibraryFiles();
  for (Encoded& f : RandomPhotos(10)) files.push_back(std::move(f));
  for (const char* color : {"RGB", "BGR", "GRAY"}) {
    SCOPED_TRACE(color);
    const OpSpec spec = Decoder("decoders.image", color);
    cuda::Stream stream = cuda::Stream::Create();
    OpHarness gpu(spec, Device::kGpu);
    gpu.set_num_threads(4);
    // Twice, the second time in reverse order: per-slot state reused, nothing stale shows.
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<Encoded> order = files;
      if (pass == 1) std::reverse(order.begin(), order.end());
      const TensorListCPU batch = Batch(order);
      gpu.set_iteration(pass);
      gpu.SetInput(0, batch);
      gpu.Run(stream.view());
      const TensorListCPU got = gpu.OutputToHost(0);
      const bool gray = std::string(color) == "GRAY";
      for (int i = 0; i < got.num_samples(); ++i) {  // the whole image, from its header
        const std::vector<uint8_t>& bytes = order[static_cast<size_t>(i)].bytes;
        const ops::ImageInfo info = ops::ParseImageInfo(bytes.data(), bytes.size());
        EXPECT_EQ(got.shape(i), (Shape{info.height, info.width, gray ? 1 : 3})) << order[static_cast<size_t>(i)].name;
      }
      ExpectBatchClose(got, RunCpu(spec, batch), batch, order, gray, std::string(color) + " pass " + std::to_string(pass));
    }
  }
}

// hw_decoder_load 0 sends every JPEG to the CUDA backend, 1 every JPEG the engines accept to them.
TEST(DecodersImageGpu, HwDecoderLoadAtBothEndsStillMatches) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Encoded> files = RandomPhotos(12);
  const TensorListCPU batch = Batch(files);
  const TensorListCPU cpu = RunCpu(Decoder("decoders.image", "RGB"), batch);
  for (double load : {0.0, 1.0}) {
    const OpSpec spec = Decoder("decoders.image", "RGB").SetArg("hw_decoder_load", load);
    cuda::Stream stream = cuda::Stream::Create();
    OpHarness gpu(spec, Device::kGpu);
    gpu.set_num_threads(4);
    gpu.SetInput(0, batch);
    gpu.Run(stream.view());
    ExpectBatchClose(gpu.OutputToHost(0), cpu, batch, files, false, "hw_decoder_load " + std::to_string(load));
  }
}

// shared_state_threshold reaches the decoder: with every JPEG on the CUDA backend and a threshold
// of one pixel, each JPEG of the batch decodes on the shared states, pixels as the CPU backend's.
TEST(DecodersImageGpu, SharedStateThresholdPutsTheLargerImagesOnSharedStates) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Encoded> files = RandomPhotos(12);
  const TensorListCPU batch = Batch(files);
  const TensorListCPU cpu = RunCpu(Decoder("decoders.image", "RGB"), batch);
  const OpSpec spec =
      Decoder("decoders.image", "RGB").SetArg("hw_decoder_load", 0.0).SetArg("shared_state_threshold", int64_t{1});
  cuda::Stream stream = cuda::Stream::Create();
  OpHarness gpu(spec, Device::kGpu);
  gpu.set_num_threads(4);
  const ops::GpuDecoderCounters before = ops::ProcessGpuDecoderCounters();
  gpu.SetInput(0, batch);
  gpu.Run(stream.view());
  ExpectBatchClose(gpu.OutputToHost(0), cpu, batch, files, false, "shared_state_threshold 1");
  const ops::GpuDecoderCounters after = ops::ProcessGpuDecoderCounters();
  EXPECT_EQ(after.images_cuda_shared - before.images_cuda_shared, after.images_cuda - before.images_cuda);
  EXPECT_EQ(after.images_cuda - before.images_cuda, static_cast<int64_t>(files.size()));
}

TEST(DecodersImageRandomCropGpu, SameWindowsAsTheCpuAndPixelsWithinTolerance) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Encoded> files = LibraryFiles(/*min_side=*/9);
  for (Encoded& f : RandomPhotos(10)) files.push_back(std::move(f));
  const TensorListCPU batch = Batch(files);
  for (const char* color : {"RGB", "GRAY"}) {
    const OpSpec spec = Decoder("decoders.image_random_crop", color);
    cuda::Stream stream = cuda::Stream::Create();
    OpHarness gpu(spec, Device::kGpu);
    gpu.set_num_threads(3);
    gpu.SetInput(0, batch);
    std::vector<Shape> first_shapes;
    for (int64_t it = 0; it < 3; ++it) {
      const std::string what = std::string(color) + " iteration " + std::to_string(it);
      gpu.set_iteration(it);
      gpu.Run(stream.view());
      const TensorListCPU got = gpu.OutputToHost(0);
      const TensorListCPU want = RunCpu(spec, batch, it);
      ExpectBatchClose(got, want, batch, files, std::string(color) == "GRAY", what, /*roi=*/true);
      for (int i = 0; i < got.num_samples(); ++i) {  // a window, not the whole image, most of the time
        const ops::ImageInfo info =
            ops::ParseImageInfo(files[static_cast<size_t>(i)].bytes.data(), files[static_cast<size_t>(i)].bytes.size());
        EXPECT_LE(got.shape(i)[0], info.height) << what;
        EXPECT_LE(got.shape(i)[1], info.width) << what;
      }
      if (it == 0) first_shapes = got.shapes();
      if (it > 0) {
        EXPECT_NE(got.shapes(), first_shapes) << "windows must change between iterations";
      }
    }
  }
}

// Every format the decoders take beside JPEG (TIFF, WebP, PNM, BMP, JPEG 2000, and CMYK JPEG) takes
// the GPU backend's CPU path (decode, upload), JPEG 2000 nvJPEG2000 where the machine has it,
// mixed with photos the GPU decodes: byte for byte the CPU backend's pixels (lossy JPEG 2000 on
// nvJPEG2000 within kJpeg2000Lossy), whole and in random-crop windows, for RGB and GRAY.
TEST(DecodersImageGpu, EveryOtherFormatGivesTheCpuBackendsPixels) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Encoded> files;
  std::vector<bool> exact;  // the formats' files: byte-exact; the photos: within tolerance
  std::vector<bool> lossy_jpeg2000;
  for (testimages::FormatFile& f : testimages::MakeFormatTestSet()) {
    lossy_jpeg2000.push_back(f.format == "JPEG2000" && f.min_psnr > 0);
    files.push_back({f.name, std::move(f.bytes)});
    exact.push_back(!lossy_jpeg2000.back());
  }
  for (Encoded& f : RandomPhotos(6)) {
    files.push_back(std::move(f));
    exact.push_back(false);
    lossy_jpeg2000.push_back(false);
  }
  const TensorListCPU batch = Batch(files);
  for (const char* op : {"decoders.image", "decoders.image_random_crop"}) {
    for (const char* color : {"RGB", "GRAY"}) {
      const OpSpec spec = Decoder(op, color);
      cuda::Stream stream = cuda::Stream::Create();
      OpHarness gpu(spec, Device::kGpu);
      gpu.set_num_threads(4);
      gpu.SetInput(0, batch);
      for (int64_t it = 0; it < 2; ++it) {
        const std::string what = std::string(op) + " " + color + " iteration " + std::to_string(it);
        gpu.set_iteration(it);
        gpu.Run(stream.view());
        const TensorListCPU got = gpu.OutputToHost(0);
        const TensorListCPU want = RunCpu(spec, batch, it);
        ASSERT_EQ(got.shapes(), want.shapes()) << what;
        for (int i = 0; i < got.num_samples(); ++i) {
          const size_t bytes = static_cast<size_t>(got.shape(i).num_elements());
          const auto* g = static_cast<const uint8_t*>(got.raw_sample(i));
          const auto* w = static_cast<const uint8_t*>(want.raw_sample(i));
          if (exact[static_cast<size_t>(i)]) {
            EXPECT_TRUE(std::equal(g, g + bytes, w)) << what << " " << files[static_cast<size_t>(i)].name;
          } else if (lossy_jpeg2000[static_cast<size_t>(i)]) {
            ExpectDecodedClose(got, want, i, kJpeg2000Lossy, what + " " + files[static_cast<size_t>(i)].name);
          } else {
            ExpectDecodedClose(got, want, i,
                               ToleranceFor(batch, i, std::string(color) == "GRAY",
                                            std::string(op) == "decoders.image_random_crop"),
                               what + " " + files[static_cast<size_t>(i)].name);
          }
        }
      }
    }
  }
}

TEST(DecodersImageGpu, SmallestImagesAlone) {
  CONVEYOR_REQUIRE_GPU();
  std::vector<Encoded> files;
  for (Encoded& f : LibraryFiles()) {
    if (f.name.find("_1x1.") != std::string::npos) files.push_back(std::move(f));
  }
  ASSERT_GE(files.size(), 3u);  // JPEG 4:2:0, JPEG 4:4:4 progressive, PNG RGB
  const TensorListCPU batch = Batch(files);
  const OpSpec spec = Decoder("decoders.image", "BGR");
  cuda::Stream stream = cuda::Stream::Create();
  OpHarness gpu(spec, Device::kGpu);
  gpu.SetInput(0, batch);
  gpu.Run(stream.view());
  const TensorListCPU got = gpu.OutputToHost(0);
  for (int i = 0; i < got.num_samples(); ++i) EXPECT_EQ(got.shape(i), (Shape{1, 1, 3}));
  ExpectBatchClose(got, RunCpu(spec, batch), batch, files, false, "1x1");
}

// Bad files fail in Setup, shared by both backends: the GPU backend names the node and sample too.
TEST(DecodersImageGpu, ErrorsNameTheNodeAndTheSample) {
  CONVEYOR_REQUIRE_GPU();
  std::map<std::string, std::vector<uint8_t>> set;
  for (TestFile& f : testimages::MakeTestSet()) set[f.name] = std::move(f.bytes);
  const Encoded good{"good", set.at("jpeg_420_baseline_q95_101x75.jpg")};
  const auto expect_error = [&](const std::string& op, std::vector<Encoded> files, const std::string& message) {
    EXPECT_THAT(
        [&] {
          cuda::Stream stream = cuda::Stream::Create();
          OpHarness h(Decoder(op, "RGB"), Device::kGpu);
          h.set_num_threads(2);
          h.SetInput(0, Batch(files));
          h.Run(stream.view());
          h.OutputToHost(0);
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
  };
  expect_error("decoders.image", {good, good, {"html", set.at("broken_not_an_image.jpg")}},
               "op \"decoders.image\" (dec): sample 2 of 3: not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with 3C 68 74 6D, 39 bytes)");
  expect_error("decoders.image", {{"12bit", set.at("broken_jpeg_12bit.jpg")}, good},
               "op \"decoders.image\" (dec): sample 0 of 2: unsupported JPEG: 12-bit samples (8-bit expected)");
  expect_error("decoders.image_random_crop", {good, {"empty", {}}},
               "op \"decoders.image_random_crop\" (dec): sample 1 of 2: empty input (0 bytes)");
  expect_error("decoders.image", {good, {"header", set.at("broken_jpeg_header_truncated.jpg")}},
               "op \"decoders.image\" (dec): sample 1 of 2: truncated JPEG header");
}

// max_pixels on the GPU backend (Setup, shared with the CPU backend, refuses before the device
// output is allocated): a JPEG (nvJPEG's path) and a PNG (the CPU path + upload) one pixel over
// the limit are refused naming the node, sample, file, size and limit, and decode at exactly it;
// a JPEG whose frame header claims 65535x65535 (12.9 GB of device memory, issue 35) is refused at
// the default limit.
TEST(DecodersImageGpu, MaxPixelsRefusesBeforeAllocating) {
  CONVEYOR_REQUIRE_GPU();
  std::map<std::string, std::vector<uint8_t>> set;
  for (TestFile& f : testimages::MakeTestSet()) set[f.name] = std::move(f.bytes);
  const auto run = [&](const std::string& op, const std::vector<uint8_t>& bytes, const std::string& name,
                       std::optional<int64_t> max_pixels) -> std::string {
    try {
      cuda::Stream stream = cuda::Stream::Create();
      OpSpec spec = Decoder(op, "RGB");
      if (max_pixels) spec.SetArg("max_pixels", *max_pixels);
      OpHarness h(spec, Device::kGpu);
      h.set_num_threads(2);
      TensorListCPU batch = Batch({{"good", set.at("jpeg_420_baseline_q90_1x1.jpg")}, {name, bytes}});
      batch.set_sources({SampleSource{"/d/tiny.jpg", -1}, SampleSource{"/d/" + name, -1}});
      h.SetInput(0, batch);
      h.Run(stream.view());
      h.OutputToHost(0);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "";
  };
  const std::tuple<std::string, std::string, int64_t, int64_t> files[] = {
      {"jpeg_420_baseline_q95_101x75.jpg", "JPEG frame", 101, 75}, {"png_rgb_8bit_37x40.png", "PNG", 37, 40}};
  for (const auto& [name, header, width, height] : files) {
    const int64_t pixels = width * height;
    for (const std::string op : {"decoders.image", "decoders.image_random_crop"}) {
      SCOPED_TRACE(name + " " + op);
      EXPECT_EQ(run(op, set.at(name), name, pixels - 1),
                "op \"" + op + "\" (dec): sample 1 of 2 (file \"/d/" + name + "\"): " + header + " header claims " +
                    std::to_string(width) + "x" + std::to_string(height) + " (" + std::to_string(pixels) +
                    " pixels), more than max_pixels (" + std::to_string(pixels - 1) +
                    "): a forged or damaged header, or raise max_pixels");
      EXPECT_EQ(run(op, set.at(name), name, pixels), "");
    }
  }
  const std::vector<uint8_t> forged = testimages::ForgeDeclaredSize(set.at("jpeg_420_baseline_q95_101x75.jpg"), 65535, 65535);
  EXPECT_EQ(run("decoders.image", forged, "forged.jpg", std::nullopt),
            "op \"decoders.image\" (dec): sample 1 of 2 (file \"/d/forged.jpg\"): JPEG frame header claims 65535x65535 "
            "(4294836225 pixels), more than max_pixels (268435456): a forged or damaged header, or raise max_pixels");
}

// The suite's stream check feeds random bytes, which decoders reject; this is the same check on
// real images: with the legacy default stream busy for ~1 s, the decode (nvJPEG calls, worker
// streams, uploads) completes, so none of it waits behind the legacy stream. Run per path (engines
// only, CUDA backend only, the automatic mix) so a failure names the path; the message also says
// whether the host blocked inside Run (a synchronizing call) or the GPU work queued behind the
// legacy stream (a blocking stream or a null-stream call).
class DecodersStream : public ::testing::TestWithParam<double> {};

TEST_P(DecodersStream, RunsOnTheGivenStreamOnly) {
  CONVEYOR_REQUIRE_GPU();
  CONVEYOR_SKIP_UNDER_SANITIZER();
  std::vector<Encoded> files = RandomPhotos(8);
  for (Encoded& f : LibraryFiles()) {
    if (f.name.find("png_rgb_8bit_37x40.png") != std::string::npos) files.push_back(std::move(f));  // CPU path
  }
  const TensorListCPU batch = Batch(files);
  OpSpec spec = Decoder("decoders.image", "RGB");
  if (GetParam() >= 0) spec.SetArg("hw_decoder_load", GetParam());
  cuda::Stream stream = cuda::Stream::Create();
  OpHarness gpu(spec, Device::kGpu);
  gpu.set_num_threads(4);
  gpu.SetInput(0, batch);
  // Warm-up: nvJPEG states, workers and pools of both of the decoder's slots (iterations alternate
  // between them), so the checked call is a steady-state one.
  for (int64_t iteration : {0, 1}) {
    gpu.set_iteration(iteration);
    gpu.Run(stream.view());
    stream.Synchronize();
  }
  SpinGpu(1000.0, cuda::StreamView::Legacy());
  gpu.set_iteration(2);
  const auto run_start = std::chrono::steady_clock::now();
  gpu.Run(stream.view());
  const double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - run_start).count();
  const bool spin_running_after_run = !cuda::StreamView::Legacy().Query();
  const TensorListCPU got = gpu.OutputToHost(0);
  const bool spin_running_after_copy = !cuda::StreamView::Legacy().Query();
  cuda::StreamView::Legacy().Synchronize();
  // nvJPEG's hardware backend cuMemFree-s internal buffers after its batched calls (CUPTI trace,
  // docs/decoding_measurements.md "What the transfers wait for"), and a cuMemFree waits for all device work,
  // the legacy stream's included: a path that uses the engines may block here now and then, which
  // is nvJPEG's, not ours (printed, not failed). The CUDA backend's path never may.
  const bool uses_engines = GetParam() != 0.0;
  if (uses_engines && (!spin_running_after_run || !spin_running_after_copy)) {
    std::cout << "hw_decoder_load " << GetParam() << ": waited for the legacy stream (Run took " << run_ms
              << " ms): nvJPEG's hardware backend freed memory during the call\n";
  } else {
    EXPECT_TRUE(spin_running_after_run) << "hw_decoder_load " << GetParam()
                                        << ": Run blocked the host until the legacy stream drained (Run took "
                                        << run_ms << " ms)";
    EXPECT_TRUE(spin_running_after_copy) << "hw_decoder_load " << GetParam()
                                         << ": the decode's GPU work waited behind the legacy stream";
  }
  ExpectBatchClose(got, RunCpu(spec, batch), batch, files, false, "beside a busy legacy stream");
}

// -1: automatic mix; 0: CUDA backend only; 1: engines only (where the GPU has them).
INSTANTIATE_TEST_SUITE_P(Paths, DecodersStream, ::testing::Values(-1.0, 0.0, 1.0),
                         [](const ::testing::TestParamInfo<double>& p) {
                           return p.param < 0 ? std::string("auto") : p.param == 0 ? std::string("cuda") : "engines";
                         });

INSTANTIATE_TEST_SUITE_P(
    DecodersGpu, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"image_gpu", Decoder("decoders.image", "BGR"), Device::kGpu, DType::kUInt8, true, "HW", 0, 0,
                        /*zero_sized_samples=*/false, /*random_data=*/false},
        ConformanceCase{"image_random_crop_gpu", Decoder("decoders.image_random_crop", "RGB"), Device::kGpu,
                        DType::kUInt8, true, "HW", 0, 0, /*zero_sized_samples=*/false, /*random_data=*/false}),
    CaseName);
// zero_sized_samples and random_data are off: the suite feeds random bytes, and a decoder rejects
// anything that is not an encoded image by contract (ErrorsNameTheNodeAndTheSample above); the
// YAML round trip and the empty batch run, and RunsOnTheGivenStreamOnly is the stream check.

}  // namespace
}  // namespace conveyor::testing
