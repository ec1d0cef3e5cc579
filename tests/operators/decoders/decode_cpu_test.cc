// CPU decoding (decode_cpu.h) on the generated test set: PNG exact against the source samples,
// JPEG identical to TurboJPEG's tjDecompress2 and close to the encoded pixels (PSNR), window
// decoding against full decode + crop, and every decode error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "tests/operators/decoders/decode_reference.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using ops::CropWindow;
using ops::OutputColor;
using testimages::TestFile;

const std::vector<TestFile>& TestSet() {
  static const std::vector<TestFile> files = testimages::MakeTestSet();
  return files;
}

const TestFile& Find(const std::string& name) {
  for (const TestFile& f : TestSet()) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no test file " + name);
}

TEST(DecodeCpu, PngEqualsTheSourceSamples) {
  int checked = 0;
  for (const TestFile& f : TestSet()) {
    if (f.kind != TestFile::Kind::kPng) continue;
    for (OutputColor color : kAllColors) {
      SCOPED_TRACE(f.name + " " + ColorName(color));
      Pixels got;
      ASSERT_NO_THROW(got = DecodeOurs(f.bytes, color));
      const Pixels want = ExpectedPng(f.png, color);
      ASSERT_EQ(got.data.size(), want.data.size());
      const bool gray_from_color = color == OutputColor::kGray && f.png.color_type != 0 && f.png.color_type != 4;
      EXPECT_LE(MaxAbsDiff(got.data, want.data), gray_from_color ? 1 : 0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 15 * 3);
}

TEST(DecodeCpu, JpegIdenticalToTurboJpegAndCloseToTheSource) {
  int checked = 0;
  for (const TestFile& f : TestSet()) {
    if (f.kind != TestFile::Kind::kJpeg) continue;
    for (OutputColor color : kAllColors) {
      SCOPED_TRACE(f.name + " " + ColorName(color));
      const Pixels got = DecodeOurs(f.bytes, color);
      const Pixels want = TurboJpegDecode(f.bytes, color);
      ASSERT_EQ(got.height, f.image.height);
      ASSERT_EQ(got.width, f.image.width);
      EXPECT_EQ(got.data, want.data) << "max difference " << MaxAbsDiff(got.data, want.data);
      ++checked;
    }
    // Against the encoded pixels: lossy, but close (4:4:4 keeps full chroma; subsampled less so).
    if (f.image.width == 101) {  // tiny images of noise (17x9, 4000x3) lose too much to 4:2:0 to bound
      const Pixels rgb = DecodeOurs(f.bytes, f.subsampling == testimages::Subsampling::kGray ? OutputColor::kGray
                                                                                            : OutputColor::kRgb);
      const double psnr = Psnr(rgb.data, f.image.pixels);
      const double bound = f.subsampling == testimages::Subsampling::k444 && f.quality >= 95 ? 35.0 : 28.0;
      EXPECT_GT(psnr, bound) << f.name;
      RecordProperty(f.name + "_psnr", std::to_string(psnr));
    }
  }
  EXPECT_EQ(checked, 14 * 3);
}

// Windows of every kind: random, touching each edge, 1x1 at the corners, full-width bands.
std::vector<CropWindow> Windows(int64_t h, int64_t w, uint32_t seed) {
  std::vector<CropWindow> out = {{0, 0, h, w}, {0, 0, 1, 1}, {h - 1, w - 1, 1, 1}, {0, 0, h, 1}, {0, w - 1, h, 1},
                                 {h / 2, 0, (h + 1) / 2, w}};
  std::mt19937 rng(seed);
  for (int k = 0; k < 12; ++k) {
    const int64_t wh = std::uniform_int_distribution<int64_t>(1, h)(rng);
    const int64_t ww = std::uniform_int_distribution<int64_t>(1, w)(rng);
    out.push_back({std::uniform_int_distribution<int64_t>(0, h - wh)(rng),
                   std::uniform_int_distribution<int64_t>(0, w - ww)(rng), wh, ww});
  }
  return out;
}

// libjpeg-turbo's jpeg_crop_scanline decodes whole iMCU columns and jpeg_skip_scanlines whole
// iMCU rows, so the window's pixels come out of the same IDCT and upsampling as in a full decode:
// identical (checked here for every subsampling, progressive included, and for PNG).
TEST(DecodeCpu, WindowEqualsFullDecodeCropped) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int windows = 0;
  for (const TestFile& f : TestSet()) {
    if (f.kind == TestFile::Kind::kBroken) continue;
    for (OutputColor color : kAllColors) {
      const Pixels full = DecodeOurs(f.bytes, color);
      for (const CropWindow& w : Windows(full.height, full.width, seed)) {
        SCOPED_TRACE(f.name + " " + ColorName(color) + " window y " + std::to_string(w.y) + " x " + std::to_string(w.x) +
                     " h " + std::to_string(w.h) + " w " + std::to_string(w.w));
        const Pixels got = DecodeOurs(f.bytes, color, w);
        const Pixels want = Crop(full, w);
        ASSERT_EQ(got.data.size(), want.data.size());
        EXPECT_EQ(MaxAbsDiff(got.data, want.data), 0);
        ++windows;
      }
    }
  }
  EXPECT_GT(windows, 29 * 3 * 18 - 1);
}

TEST(DecodeCpu, EmptyWindowWritesNothing) {
  const TestFile& f = Find("jpeg_420_baseline_q95_101x75.jpg");
  const ops::ImageInfo info = ops::ParseImageInfo(f.bytes.data(), f.bytes.size());
  uint8_t canary = 0x5A;
  ops::DecodeImageCpu(f.bytes.data(), f.bytes.size(), info, OutputColor::kRgb, CropWindow{3, 3, 0, 5}, &canary);
  EXPECT_EQ(canary, 0x5A);
}

void ExpectDecodeError(const std::string& name, const std::string& message) {
  const TestFile& f = Find(name);
  EXPECT_THAT(
      [&] {
        const ops::ImageInfo info = ops::ParseImageInfo(f.bytes.data(), f.bytes.size());
        std::vector<uint8_t> out(static_cast<size_t>(info.height * info.width * 3));
        ops::DecodeImageCpu(f.bytes.data(), f.bytes.size(), info, OutputColor::kRgb, ops::FullWindow(info), out.data());
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)))
      << name;
}

TEST(DecodeCpu, Errors) {
  ExpectDecodeError("broken_jpeg_truncated.jpg", "truncated JPEG data (libjpeg: Premature end of JPEG file)");
  ExpectDecodeError("broken_jpeg_progressive_truncated.jpg", "truncated JPEG data");
  ExpectDecodeError("broken_jpeg_header_truncated.jpg", "truncated JPEG header");
  ExpectDecodeError("broken_jpeg_marker_in_entropy.jpg",
                    "corrupt JPEG data (libjpeg: Corrupt JPEG data: premature end of data segment)");
  ExpectDecodeError("broken_jpeg_bad_marker.jpg", "corrupt or unsupported JPEG (libjpeg: Unsupported marker type 0x02)");
  ExpectDecodeError("broken_jpeg_12bit.jpg", "unsupported JPEG: 12-bit samples (8-bit expected)");
  ExpectDecodeError("broken_png_truncated.png", "truncated PNG data");
  ExpectDecodeError("broken_png_corrupt_idat.png", "corrupt or unsupported PNG (libpng: ");
  ExpectDecodeError("broken_not_an_image.jpg", "not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with 3C 68 74 6D, 39 bytes)");
}

// No checksum in JPEG: flipped entropy bytes are caught only when they break the Huffman stream
// (a bad code, a marker, running out of data); otherwise the file decodes to other pixels. Either
// outcome is acceptable; a crash, a clean-looking result or another error is not.
TEST(DecodeCpu, EntropyDamageIsCaughtOrDecodesToOtherPixels) {
  const TestFile& f = Find("broken_jpeg_flipped_entropy.jpg");
  const Pixels clean = DecodeOurs(testimages::EncodeJpeg(testimages::MakePhotoLike(64, 96, 3, 777),
                                                         testimages::Subsampling::k420, 90, false),
                                  OutputColor::kRgb);
  try {
    const Pixels damaged = DecodeOurs(f.bytes, OutputColor::kRgb);
    ASSERT_EQ(damaged.data.size(), clean.data.size());
    EXPECT_NE(damaged.data, clean.data);
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("corrupt JPEG data (libjpeg: Corrupt JPEG data: "));
  }
}

TEST(DecodeCpu, WindowOutsideTheImageIsRejected) {
  const TestFile& f = Find("png_rgb_8bit_37x40.png");
  const ops::ImageInfo info = ops::ParseImageInfo(f.bytes.data(), f.bytes.size());
  std::vector<uint8_t> out(40 * 37 * 3);
  EXPECT_THAT([&] { ops::DecodeImageCpu(f.bytes.data(), f.bytes.size(), info, OutputColor::kRgb, {30, 0, 11, 37}, out.data()); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("crop window (y 30, x 0, h 11, w 37) outside the 37x40 image")));
}

TEST(DecodeCpu, OutputTypeNames) {
  EXPECT_EQ(ops::ParseOutputColor("BGR"), OutputColor::kBgr);
  EXPECT_EQ(ops::OutputChannels(OutputColor::kGray), 1);
  EXPECT_THAT([] { ops::ParseOutputColor("RBG"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("expected one of RGB, BGR, GRAY, got \"RBG\"")));
}

}  // namespace
}  // namespace conveyor::testing
