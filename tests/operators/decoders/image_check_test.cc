// CheckEncodedImage (image_check.h) on the test-image library: every good file passes; a file cut
// at any point is found; any single flipped byte of a PNG is found (CRC); broken JPEG markers are
// found; damage that keeps the JPEG structure passes (the decoder's to find).
#include "operators/decoders/image_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "tools/testimages/test_images.h"

namespace conveyor::ops {
namespace {

using testimages::TestFile;
using ::testing::HasSubstr;

std::string Check(const std::vector<uint8_t>& b) { return CheckEncodedImage(b.data(), b.size()); }

const std::vector<TestFile>& Set() {
  static const std::vector<TestFile> set = testimages::MakeTestSet();
  return set;
}

const std::vector<uint8_t>& Bytes(const std::string& name) {
  for (const TestFile& f : Set()) {
    if (f.name == name) return f.bytes;
  }
  throw std::runtime_error("no test file " + name);
}

TEST(ImageCheck, EveryGoodFilePasses) {
  int checked = 0;
  for (const TestFile& f : Set()) {
    if (f.kind == TestFile::Kind::kBroken) continue;
    EXPECT_EQ(Check(f.bytes), "") << f.name;
    ++checked;
  }
  EXPECT_GT(checked, 20);
  // Trailing bytes after EOI / IEND are accepted: real files carry them.
  std::vector<uint8_t> trailer = Bytes("jpeg_420_baseline_q95_101x75.jpg");
  trailer.insert(trailer.end(), {0, 1, 2, 0xFF});
  EXPECT_EQ(Check(trailer), "");
}

TEST(ImageCheck, EveryTruncationIsFound) {
  for (const TestFile& f : Set()) {
    if (f.kind == TestFile::Kind::kBroken || f.bytes.size() > 20000) continue;
    const size_t step = std::max<size_t>(1, f.bytes.size() / 97);
    for (size_t keep = 0; keep < f.bytes.size(); keep += step) {
      const std::vector<uint8_t> cut(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(keep));
      EXPECT_NE(Check(cut), "") << f.name << " cut to " << keep << " of " << f.bytes.size() << " bytes";
    }
    const std::vector<uint8_t> last(f.bytes.begin(), f.bytes.end() - 1);
    EXPECT_NE(Check(last), "") << f.name << " without its last byte";
  }
  EXPECT_THAT(Check(Bytes("broken_jpeg_truncated.jpg")), HasSubstr("truncated JPEG data: the file ends after "));
  EXPECT_THAT(Check(Bytes("broken_jpeg_truncated.jpg")), HasSubstr("(no end-of-image marker FF D9)"));
  EXPECT_THAT(Check(Bytes("broken_jpeg_progressive_truncated.jpg")), HasSubstr("truncated JPEG data"));
  EXPECT_THAT(Check(Bytes("broken_png_truncated.png")), HasSubstr("truncated PNG data: the file ends after "));
}

TEST(ImageCheck, AnyFlippedPngByteIsFound) {
  int pngs = 0;
  for (const TestFile& f : Set()) {
    if (f.kind != TestFile::Kind::kPng || f.bytes.size() > 4000 || pngs == 3) continue;
    ++pngs;
    for (size_t i = 8; i < f.bytes.size(); ++i) {
      std::vector<uint8_t> b = f.bytes;
      b[i] ^= 0x10;
      EXPECT_NE(Check(b), "") << f.name << " byte " << i;
    }
  }
  EXPECT_EQ(pngs, 3);
  EXPECT_THAT(Check(Bytes("broken_png_corrupt_idat.png")),
              HasSubstr("corrupt PNG data: CRC mismatch in chunk \"IDAT\""));
}

TEST(ImageCheck, BrokenJpegStructureIsFound) {
  EXPECT_THAT(Check(Bytes("broken_jpeg_bad_marker.jpg")), HasSubstr("corrupt JPEG data: FF 02 at offset "));
  EXPECT_THAT(Check(Bytes("broken_not_an_image.jpg")), HasSubstr("not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with 3C 68 74 6D"));
  EXPECT_THAT(Check(Bytes("broken_jpeg_header_truncated.jpg")), HasSubstr("truncated JPEG header"));
  EXPECT_THAT(Check(Bytes("broken_jpeg_12bit.jpg")), HasSubstr("unsupported JPEG: 12-bit samples"));
  EXPECT_THAT(Check({}), HasSubstr("empty input"));
  // A segment whose length runs past the end, a length below 2, EOI before any scan.
  std::vector<uint8_t> jpeg = Bytes("jpeg_420_baseline_q95_101x75.jpg");
  size_t sos = 0;
  for (size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA) {
      sos = i;
      break;
    }
  }
  ASSERT_GT(sos, 0u);
  std::vector<uint8_t> b = jpeg;
  b[sos + 2] = 0x00, b[sos + 3] = 0x01;
  EXPECT_THAT(Check(b),
              HasSubstr("corrupt JPEG data: segment FF DA at offset " + std::to_string(sos) + " has length 1"));
  b = jpeg;
  b[sos + 1] = 0xD9;
  EXPECT_THAT(Check(b), HasSubstr("corrupt JPEG data: end of image (FF D9) at offset " + std::to_string(sos) +
                                  " before any scan"));
  // A frame header claiming more than the file holds: found by the check, so on_error: skip skips
  // it on both backends before anything is allocated for it.
  b = jpeg;
  for (size_t i = 2; i + 8 < b.size(); ++i) {
    if (b[i] == 0xFF && b[i + 1] == 0xC0) {
      for (size_t k = 5; k <= 8; ++k) b[i + k] = 0xFF;
      break;
    }
  }
  EXPECT_THAT(Check(b), HasSubstr("JPEG frame header claims 65535x65535 (4294836225 pixels), more than max_pixels"));
  EXPECT_THAT(CheckEncodedImage(b.data(), b.size(), int64_t{1} << 40),
              HasSubstr("blocks, at least "));
}

// JPEG has no checksum: damage inside the entropy-coded data that keeps the structure (fill bytes
// and a restart marker) passes the check; libjpeg finds it while decoding (decode_cpu_test), or it
// decodes to wrong pixels. Flipped bytes that happen to form a marker inside the scan are found.
TEST(ImageCheck, EntropyDamageIsFoundOnlyWhereItBreaksTheStructure) {
  EXPECT_EQ(Check(Bytes("broken_jpeg_marker_in_entropy.jpg")), "");
  EXPECT_THAT(Check(Bytes("broken_jpeg_flipped_entropy.jpg")), HasSubstr("is not a JPEG marker"));
}

}  // namespace
}  // namespace conveyor::ops
