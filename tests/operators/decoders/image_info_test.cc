// Header parsing (image_info.h) against the generator's known sizes and variants, and every
// header error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "operators/common/image_formats.h"
#include "operators/decoders/image_info.h"
#include "tools/testimages/format_images.h"
#include "tools/testimages/test_images.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;
using testimages::Subsampling;
using testimages::TestFile;

ChromaSubsampling Expected(Subsampling s) {
  switch (s) {
    case Subsampling::k444: return ChromaSubsampling::k444;
    case Subsampling::k422: return ChromaSubsampling::k422;
    case Subsampling::k420: return ChromaSubsampling::k420;
    case Subsampling::kGray: return ChromaSubsampling::kGray;
  }
  return ChromaSubsampling::kNone;
}

TEST(ImageInfo, MatchesWhatTheGeneratorEncoded) {
  int jpegs = 0, pngs = 0;
  for (const TestFile& f : testimages::MakeTestSet()) {
    if (f.kind == TestFile::Kind::kBroken) continue;
    SCOPED_TRACE(f.name);
    const ImageInfo info = ParseImageInfo(f.bytes.data(), f.bytes.size());
    if (f.kind == TestFile::Kind::kJpeg) {
      EXPECT_EQ(info.format, ImageFormat::kJpeg);
      EXPECT_EQ(info.height, f.image.height);
      EXPECT_EQ(info.width, f.image.width);
      EXPECT_EQ(info.components, f.subsampling == Subsampling::kGray ? 1 : 3);
      EXPECT_EQ(info.subsampling, Expected(f.subsampling));
      EXPECT_EQ(info.progressive, f.progressive);
      ++jpegs;
    } else {
      EXPECT_EQ(info.format, ImageFormat::kPng);
      EXPECT_EQ(info.height, f.png.height);
      EXPECT_EQ(info.width, f.png.width);
      EXPECT_EQ(info.color_type, f.png.color_type);
      EXPECT_EQ(info.bit_depth, f.png.bit_depth);
      EXPECT_EQ(info.interlaced, f.png.interlaced);
      ++pngs;
    }
  }
  EXPECT_EQ(jpegs, 14);
  EXPECT_EQ(pngs, 15);
}

TEST(ImageInfo, Describe) {
  const auto jpeg = testimages::EncodeJpeg(testimages::MakePhotoLike(375, 500, 3, 1), Subsampling::k420, 90, true);
  EXPECT_EQ(ParseImageInfo(jpeg.data(), jpeg.size()).Describe(), "JPEG 500x375, 3 components, 4:2:0, progressive");
  testimages::PngSource s = testimages::MakePngSource(9, 17, 6, 16, 2);
  const auto png = testimages::EncodePng(s);
  EXPECT_EQ(ParseImageInfo(png.data(), png.size()).Describe(), "PNG 17x9, RGBA, 16-bit");
}

void ExpectError(const std::vector<uint8_t>& bytes, const std::string& message) {
  EXPECT_THAT([&] { ParseImageInfo(bytes.data(), bytes.size()); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
}

// The frame header (SOF) of a baseline JPEG: its offset.
size_t SofOffset(const std::vector<uint8_t>& jpeg) {
  for (size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) return i;
  }
  ADD_FAILURE() << "no SOF0";
  return 0;
}

// The layouts the GPU decoder trusts to its engines without nvJPEG's check: baseline (SOF0) gray,
// 4:4:4, 4:2:2 and 4:2:0 with unit chroma factors, from a real encoder; not progressive, not SOF1,
// not luma 4x2 nor chroma 2x2 (a 4:2:0 ratio from unusual factors).
TEST(ImageInfo, JpegCommonLayoutIsBaselineWithTheCommonSamplingFactors) {
  const auto photo = testimages::MakePhotoLike(61, 83, 3, 7);
  const auto gray = testimages::MakePhotoLike(61, 83, 1, 7);
  for (Subsampling ss : {Subsampling::k444, Subsampling::k422, Subsampling::k420, Subsampling::kGray}) {
    const auto baseline = testimages::EncodeJpeg(ss == Subsampling::kGray ? gray : photo, ss, 90, false);
    const auto progressive = testimages::EncodeJpeg(ss == Subsampling::kGray ? gray : photo, ss, 90, true);
    EXPECT_TRUE(ParseImageInfo(baseline.data(), baseline.size()).jpeg_common_layout) << static_cast<int>(ss);
    EXPECT_FALSE(ParseImageInfo(progressive.data(), progressive.size()).jpeg_common_layout) << static_cast<int>(ss);
  }
  const auto jpeg = testimages::EncodeJpeg(photo, Subsampling::k420, 90, false);
  const size_t sof = SofOffset(jpeg);
  auto extended = jpeg;
  extended[sof + 1] = 0xC1;  // SOF1: extended sequential, same layout
  const ImageInfo ext = ParseImageInfo(extended.data(), extended.size());
  EXPECT_EQ(ext.subsampling, ChromaSubsampling::k420);
  EXPECT_FALSE(ext.jpeg_common_layout);
  // Component factors at sof + 11 (luma), + 14, + 17: luma 4x4 over chroma 2x2 is still 4:2:0.
  auto unusual = jpeg;
  ASSERT_EQ(unusual[sof + 11], 0x22);
  unusual[sof + 11] = 0x44;
  unusual[sof + 14] = 0x22;
  unusual[sof + 17] = 0x22;
  const ImageInfo odd = ParseImageInfo(unusual.data(), unusual.size());
  EXPECT_EQ(odd.subsampling, ChromaSubsampling::k420);
  EXPECT_FALSE(odd.jpeg_common_layout);
  EXPECT_TRUE(ParseImageInfo(jpeg.data(), jpeg.size()).jpeg_common_layout);
}

TEST(ImageInfo, Errors) {
  ExpectError({}, "empty input (0 bytes): expected an encoded image (JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000)");
  const std::string html = "<html>";
  ExpectError(std::vector<uint8_t>(html.begin(), html.end()), "not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with 3C 68 74 6D, 6 bytes)");
  ExpectError({0xFF}, "not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with FF, 1 bytes)");

  const auto jpeg = testimages::EncodeJpeg(testimages::MakePhotoLike(20, 30, 3, 3), Subsampling::k420, 90, false);
  const size_t sof = SofOffset(jpeg);
  ExpectError(std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + static_cast<long>(sof) + 6),
              "truncated JPEG header: frame header (SOF) cut off");
  ExpectError(std::vector<uint8_t>(jpeg.begin(), jpeg.begin() + 30), "truncated JPEG header");
  auto bad = jpeg;
  bad[sof + 1] = 0xC3;
  ExpectError(bad, "unsupported JPEG: lossless (SOF marker 0xC3)");
  bad = jpeg;
  bad[sof + 1] = 0xC5;
  ExpectError(bad, "unsupported JPEG: hierarchical (SOF marker 0xC5)");
  bad = jpeg;
  bad[sof + 4] = 12;
  ExpectError(bad, "unsupported JPEG: 12-bit samples (8-bit expected)");
  bad = jpeg;
  bad[sof + 5] = bad[sof + 6] = 0;
  ExpectError(bad, "unsupported JPEG: height defined by a DNL marker");
  bad = jpeg;
  bad[sof + 11] = 0x51;  // component 0's sampling factors 5x1
  ExpectError(bad, "malformed JPEG header: component 0 sampling factors 5x1");
  bad = jpeg;
  bad[sof + 9] = 2;  // 2 components
  ExpectError(bad, "unsupported JPEG: 2 components (1, 3 or 4 (CMYK/YCCK) expected)");
  const std::vector<uint8_t> scan_first = {0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02};
  ExpectError(scan_first, "malformed JPEG header: a scan before the frame header (SOF)");

  const auto png = testimages::EncodePng(testimages::MakePngSource(4, 4, 2, 8, 5));
  ExpectError(std::vector<uint8_t>(png.begin(), png.begin() + 20), "truncated PNG header: 20 bytes (33 needed for IHDR)");
  bad = png;
  bad[24] = 3;  // RGB with bit depth 3
  ExpectError(bad, "malformed PNG header: colour type 2 with bit depth 3");
  bad = png;
  bad[12] = 'X';
  ExpectError(bad, "malformed PNG header: the first chunk is not a 13-byte IHDR");
  bad = png;
  bad[16] = bad[17] = bad[18] = bad[19] = 0;
  ExpectError(bad, "malformed PNG header: size 0x4");
}

}  // namespace
}  // namespace conveyor::ops

namespace conveyor::ops {
namespace {

// A frame header's size is checked against max_pixels, then against the file, before anything is
// allocated for the image: a real 500x375 JPEG whose SOF is rewritten to claim 65535x65535 (12.9 GB
// of RGB output) is refused by the default limit, and with the limit raised by the file's size,
// both sizes named; the same file with its true size, and every real file of the test set, still
// parse.
TEST(ImageInfo, ForgedJpegFrameSizeIsRefusedBeforeAllocation) {
  std::vector<uint8_t> jpeg =
      testimages::EncodeJpeg(testimages::MakePhotoLike(375, 500, 3, 7), Subsampling::k420, 90, false);
  EXPECT_EQ(ParseImageInfo(jpeg.data(), jpeg.size()).width, 500);
  size_t sof = 0;
  for (size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) {
      sof = i;
      break;
    }
  }
  ASSERT_GT(sof, 0u);
  for (size_t k = 5; k <= 8; ++k) jpeg[sof + k] = 0xFF;  // height, width: 65535
  EXPECT_THAT([&] { ParseImageInfo(jpeg.data(), jpeg.size()); },
              ::testing::ThrowsMessage<InvalidArgument>(::testing::HasSubstr(
                  "JPEG frame header claims 65535x65535 (4294836225 pixels), more than max_pixels (268435456): a "
                  "forged or damaged header, or raise max_pixels")));
  try {
    ParseImageInfo(jpeg.data(), jpeg.size(), int64_t{1} << 40);
    FAIL() << "accepted a 65535x65535 frame header in " << jpeg.size() << " bytes";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("JPEG frame header claims 65535x65535"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("but the file has " + std::to_string(jpeg.size()) + " bytes"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("forged or damaged header"));
  }
  // Progressive and grayscale files of every size in the test set are far above the bound.
  for (const testimages::TestFile& f : testimages::MakeTestSet()) {
    if (f.kind == testimages::TestFile::Kind::kBroken) continue;
    EXPECT_NO_THROW(ParseImageInfo(f.bytes.data(), f.bytes.size())) << f.name;
  }
}

// Every format readers.file serves by default (image_formats.h) is one the header parser, and so
// the decoders, take: a real file of each parses as that format.
TEST(ImageInfo, EveryFormatTheReadersServeIsParsed) {
  std::map<std::string, int> parsed;
  for (const testimages::TestFile& f : testimages::MakeTestSet()) {
    if (f.kind == testimages::TestFile::Kind::kBroken) continue;
    const std::string d = ParseImageInfo(f.bytes.data(), f.bytes.size()).Describe();
    ++parsed[d.substr(0, d.find(' '))];
  }
  for (const testimages::FormatFile& f : testimages::MakeFormatTestSet()) {
    ++parsed[ImageFormatName(ParseImageInfo(f.bytes.data(), f.bytes.size()).format)];
  }
  EXPECT_EQ(parsed.size(), DecodableImageFormats().size()) << "a parsed format that readers.file does not serve";
  for (const ImageFormatFiles& f : DecodableImageFormats()) EXPECT_GT(parsed[f.format], 0) << f.format;
}

TEST(ImageInfo, ForgedPngSizeIsRefusedBeforeAllocation) {
  std::vector<uint8_t> png = testimages::EncodePng(testimages::MakePngSource(40, 37, 2, 8, 3));
  ASSERT_EQ(ParseImageInfo(png.data(), png.size()).width, 37);
  const uint8_t big[4] = {0x00, 0x01, 0x86, 0xA0};  // 100000
  std::copy(big, big + 4, png.begin() + 16);
  std::copy(big, big + 4, png.begin() + 20);
  EXPECT_THAT([&] { ParseImageInfo(png.data(), png.size()); },
              ::testing::ThrowsMessage<InvalidArgument>(::testing::HasSubstr(
                  "PNG header claims 100000x100000 (10000000000 pixels), more than max_pixels (268435456)")));
  try {
    ParseImageInfo(png.data(), png.size(), int64_t{1} << 40);
    FAIL() << "accepted a 100000x100000 IHDR in " << png.size() << " bytes";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("PNG header claims 100000x100000"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("but the file has " + std::to_string(png.size()) + " bytes"));
  }
}

}  // namespace
}  // namespace conveyor::ops
