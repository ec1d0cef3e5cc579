// decoders.image and decoders.image_random_crop through OpHarness: mixed batches against the
// independent references, the random windows (the sample's Philox stream, DALI's semantics),
// every error with its node and sample, the YAML checks, and the conformance suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/op/harness.h"
#include "core/pipeline/yaml_loader.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/decoders/decode_reference.h"
#include "tools/testimages/format_images.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using ops::CropWindow;
using ops::OutputColor;
using testimages::TestFile;

std::vector<TestFile> GoodFiles() {
  std::vector<TestFile> out;
  for (TestFile& f : testimages::MakeTestSet()) {
    if (f.kind != TestFile::Kind::kBroken) out.push_back(std::move(f));
  }
  return out;
}

TensorListCPU EncodedBatch(const std::vector<std::vector<uint8_t>>& files) {
  std::vector<Shape> shapes;
  for (const auto& f : files) shapes.push_back(Shape{static_cast<int64_t>(f.size())});
  return MakeBatch<uint8_t>(shapes, files);
}

std::vector<std::vector<uint8_t>> BytesOf(const std::vector<TestFile>& files) {
  std::vector<std::vector<uint8_t>> out;
  for (const TestFile& f : files) out.push_back(f.bytes);
  return out;
}

// The reference decode of one test file (TurboJPEG or the PNG source samples).
Pixels Reference(const TestFile& f, OutputColor color) {
  return f.kind == TestFile::Kind::kPng ? ExpectedPng(f.png, color) : TurboJpegDecode(f.bytes, color);
}
int Tolerance(const TestFile& f, OutputColor color) {
  const bool gray_from_color_png = f.kind == TestFile::Kind::kPng && color == OutputColor::kGray &&
                                   f.png.color_type != 0 && f.png.color_type != 4;
  return gray_from_color_png ? 1 : 0;  // libpng's fixed-point Rec. 601 weights
}

std::vector<uint8_t> SampleBytes(const TensorListCPU& list, int i) {
  const auto* p = static_cast<const uint8_t*>(list.raw_sample(i));
  return std::vector<uint8_t>(p, p + list.shape(i).num_elements());
}

OpSpec Decoder(const std::string& op, const std::string& output_type) {
  return OpSpec(op, "dec").AddInput("encoded").AddOutput("images").SetArg("output_type", output_type);
}

TEST(DecodersImage, MixedBatchMatchesTheReferences) {
  const std::vector<TestFile> files = GoodFiles();
  for (OutputColor color : kAllColors) {
    SCOPED_TRACE(ColorName(color));
    OpHarness h(Decoder("decoders.image", ColorName(color)), Device::kCpu);
    h.set_num_threads(4);
    h.SetInput(0, EncodedBatch(BytesOf(files)));
    h.Run();
    const TensorListCPU out = h.OutputToHost(0);
    ASSERT_EQ(out.num_samples(), static_cast<int>(files.size()));
    EXPECT_EQ(out.dtype(), DType::kUInt8);
    EXPECT_EQ(out.layout(), Layout("HWC"));
    for (int i = 0; i < out.num_samples(); ++i) {
      const Pixels want = Reference(files[static_cast<size_t>(i)], color);
      ASSERT_EQ(out.shape(i), (Shape{want.height, want.width, ops::OutputChannels(color)})) << files[i].name;
      EXPECT_LE(MaxAbsDiff(SampleBytes(out, i), want.data), Tolerance(files[static_cast<size_t>(i)], color))
          << files[static_cast<size_t>(i)].name;
    }
  }
}

TEST(DecodersImageRandomCrop, WindowsFollowTheSampleStreamAndMatchFullDecodeCropped) {
  std::vector<TestFile> files;
  for (TestFile& f : GoodFiles()) {
    if (f.image.width == 101 || f.png.width == 37) files.push_back(std::move(f));  // big enough to crop
  }
  ASSERT_GE(files.size(), 15u);
  OpHarness h(Decoder("decoders.image_random_crop", "RGB"), Device::kCpu);
  h.set_num_threads(3);
  h.SetInput(0, EncodedBatch(BytesOf(files)));
  const ops::RandomCropParams params;  // the schema's defaults
  std::vector<std::vector<Shape>> shapes_per_iteration;
  for (int64_t it = 0; it < 4; ++it) {
    h.set_iteration(it);
    h.Run();
    const TensorListCPU out = h.OutputToHost(0);
    shapes_per_iteration.push_back(out.shapes());
    for (int i = 0; i < out.num_samples(); ++i) {
      const TestFile& f = files[static_cast<size_t>(i)];
      const Pixels full = Reference(f, OutputColor::kRgb);
      Philox rng = h.workspace().Rng(i);
      const CropWindow w = ops::DrawRandomCropWindow(rng, full.height, full.width, params);
      ASSERT_EQ(out.shape(i), (Shape{w.h, w.w, 3})) << f.name << " iteration " << it;
      EXPECT_EQ(MaxAbsDiff(SampleBytes(out, i), Crop(full, w).data), 0) << f.name << " iteration " << it;
      const double area = static_cast<double>(w.h * w.w) / static_cast<double>(full.height * full.width);
      EXPECT_GE(area, 0.06) << f.name;  // 0.08 before rounding w and h to whole pixels
    }
  }
  EXPECT_NE(shapes_per_iteration[0], shapes_per_iteration[1]) << "windows must change between iterations";
}

TEST(DecodersImageRandomCrop, ArgumentsShapeTheWindow) {
  const TestFile f = GoodFiles()[0];
  ASSERT_EQ(f.image.width, 101);
  // A full-area window with aspect exactly 101:75 is the whole image.
  OpHarness h(Decoder("decoders.image_random_crop", "GRAY")
                  .SetArg("random_area", std::vector<double>{1.0, 1.0})
                  .SetArg("random_aspect_ratio", std::vector<double>{101.0 / 75, 101.0 / 75}),
              Device::kCpu);
  h.SetInput(0, EncodedBatch({f.bytes}));
  h.Run();
  EXPECT_EQ(h.OutputToHost(0).shape(0), (Shape{75, 101, 1}));
}

void ExpectRunError(const OpSpec& spec, const TensorListCPU& input, const std::string& message) {
  EXPECT_THAT(
      [&] {
        OpHarness h(spec, Device::kCpu);
        h.set_num_threads(2);
        h.SetInput(0, input);
        h.Run();
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
}

TEST(DecodersImage, ErrorsNameTheNodeAndTheSample) {
  const auto set = testimages::MakeTestSet();
  const auto bytes = [&](const std::string& name) {
    for (const TestFile& f : set) {
      if (f.name == name) return f.bytes;
    }
    ADD_FAILURE() << name;
    return std::vector<uint8_t>{};
  };
  const auto good = bytes("jpeg_420_baseline_q95_101x75.jpg");
  const OpSpec spec = Decoder("decoders.image", "RGB");
  ExpectRunError(spec, EncodedBatch({good, good, bytes("broken_not_an_image.jpg")}),
                 "op \"decoders.image\" (dec): sample 2 of 3: not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with 3C 68 74 6D, 39 bytes)");
  ExpectRunError(spec, EncodedBatch({good, bytes("broken_jpeg_truncated.jpg")}),
                 "op \"decoders.image\" (dec): sample 1 of 2: truncated JPEG data: the file ends after ");
  // Structure is checked in Setup (image_check.h); damage that keeps the structure is libjpeg's to find.
  ExpectRunError(spec, EncodedBatch({bytes("broken_jpeg_marker_in_entropy.jpg"), good}),
                 "sample 0 of 2: corrupt JPEG data (libjpeg: Corrupt JPEG data: premature end of data segment)");
  ExpectRunError(spec, EncodedBatch({good, bytes("broken_jpeg_bad_marker.jpg")}),
                 "sample 1 of 2: corrupt JPEG data: FF 02 at offset ");
  ExpectRunError(spec, EncodedBatch({bytes("broken_png_truncated.png")}), "sample 0 of 1: truncated PNG data");
  ExpectRunError(spec, EncodedBatch({bytes("broken_jpeg_12bit.jpg")}),
                 "sample 0 of 1: unsupported JPEG: 12-bit samples (8-bit expected)");
  ExpectRunError(spec, EncodedBatch({good, {}}),
                 "op \"decoders.image\" (dec): sample 1 of 2: empty input (0 bytes): expected an encoded image (JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000)");
  // The lowest failing sample is reported, whichever thread parsed it first.
  ExpectRunError(spec, EncodedBatch({good, {}, {1, 2, 3}, {}}), "sample 1 of 4: empty input");
  ExpectRunError(Decoder("decoders.image_random_crop", "BGR"), EncodedBatch({good, bytes("broken_jpeg_truncated.jpg")}),
                 "op \"decoders.image_random_crop\" (dec): sample 1 of 2: truncated JPEG data");
  // A frame header claiming more than max_pixels (default 2^28), or more than the file can hold,
  // fails in Setup, before the output (12.9 GB, 30 MB here) is allocated — on either backend, which
  // share Setup. Every format: max_pixels_test.
  ExpectRunError(Decoder("decoders.image_random_crop", "RGB"),
                 EncodedBatch({good, testimages::ForgeDeclaredSize(good, 65535, 65535)}),
                 "op \"decoders.image_random_crop\" (dec): sample 1 of 2: JPEG frame header claims 65535x65535 "
                 "(4294836225 pixels), more than max_pixels (268435456): a forged or damaged header, or raise "
                 "max_pixels");
  ExpectRunError(spec, EncodedBatch({good, testimages::ForgeDeclaredSize(good, 5000, 2000)}),
                 "op \"decoders.image\" (dec): sample 1 of 2: JPEG frame header claims 5000x2000 (");
  ExpectRunError(spec, MakeBatch<uint8_t>({Shape{2, 3}}, {{1, 2, 3, 4, 5, 6}}),
                 "sample 0 of 1: expected a 1-D sample of encoded bytes, got shape (2, 3)");
}

TEST(DecodersImage, NonByteInputIsRejected) {
  EXPECT_THAT(
      [] {
        OpHarness h(Decoder("decoders.image", "RGB"), Device::kCpu);
        h.SetInput(0, MakeBatch<float>({Shape{4}}, {{1, 2, 3, 4}}));
        h.Run();
      },
      ::testing::Throws<Error>(::testing::Property(&Error::what, HasSubstr("uint8"))));
}

TEST(DecodersImage, ArgumentErrors) {
  EXPECT_THAT([] { OpHarness h(Decoder("decoders.image_random_crop", "RGB")
                                   .SetArg("random_area", std::vector<double>{0.5, 0.2}), Device::kCpu); },
              ::testing::Throws<Error>(::testing::Property(
                  &Error::what, HasSubstr("random_area must be [lo, hi] with 0 < lo <= hi <= 1, got [0.5, 0.2]"))));
  const std::string yaml =
      "pipeline: {name: d, batch_size: 2, device: cpu}\n"
      "ops:\n  - op: external_source\n    name: src\n    outputs: [jpegs]\n"
      "  - op: decoders.image\n    name: dec\n    inputs: [jpegs]\n    args: {output_type: RBG}\n"
      "    outputs: [images]\noutputs: [images]\n";
  EXPECT_THAT([&] { ParsePipelineYaml(yaml, "decode.yaml"); },
              ::testing::Throws<Error>(::testing::Property(
                  &Error::what, HasSubstr("expected one of RGB, BGR, GRAY, got \"RBG\"; did you mean \"RGB\"?"))));
}

using testing::OperatorConformance;
INSTANTIATE_TEST_SUITE_P(
    Decoders, OperatorConformance,
    ::testing::Values(
        ConformanceCase{"image_cpu", Decoder("decoders.image", "RGB"), Device::kCpu, DType::kUInt8, true, "HW", 0, 0,
                        /*zero_sized_samples=*/false},
        ConformanceCase{"image_random_crop_cpu", Decoder("decoders.image_random_crop", "GRAY"), Device::kCpu,
                        DType::kUInt8, true, "HW", 0, 0, /*zero_sized_samples=*/false}),
    CaseName);
// zero_sized_samples is off: the suite feeds random bytes, and a decoder rejects anything that is
// not an encoded image (an empty sample included) by contract — see ErrorsNameTheNodeAndTheSample.

}  // namespace
}  // namespace conveyor::testing
