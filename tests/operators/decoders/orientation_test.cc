// EXIF orientation on the CPU (orientation.h, DecodeOrientedImageCpu): libexif-written tags in
// real JPEGs (TurboJPEG), TIFFs (libtiff's Orientation tag) and WebPs (libwebpmux's EXIF chunk);
// each orientation's decode against the stored decode turned by orientation_reference.h; windows
// of the turned image against the full turned decode cropped; malformed EXIF ignored.
#include <gtest/gtest.h>

#include <random>

#include "operators/decoders/decode_cpu.h"
#include "operators/decoders/orientation.h"
#include "tests/operators/decoders/orientation_reference.h"
#include "tools/testimages/exif_images.h"
#include "tools/testimages/format_images.h"

namespace conveyor::testing {
namespace {

using ops::CropWindow;
using ops::OutputColor;

constexpr int kHeight = 37, kWidth = 53;  // odd, not multiples of the 16x16 MCU

int OrientationOf(const std::vector<uint8_t>& bytes) {
  return ops::ParseImageInfo(bytes.data(), bytes.size()).orientation;
}

Pixels DecodeOriented(const std::vector<uint8_t>& bytes, OutputColor color, int orientation,
                      const std::optional<CropWindow>& window = std::nullopt) {
  const ops::ImageInfo info = ops::ParseImageInfo(bytes.data(), bytes.size());
  const CropWindow w = window.value_or(ops::OrientedFullWindow(info, orientation));
  Pixels p{w.h, w.w, ops::OutputChannels(color), {}};
  p.data.assign(static_cast<size_t>(w.h * w.w * p.channels), 0xA5);  // poisoned
  ops::DecodeOrientedImageCpu(bytes.data(), bytes.size(), info, color, orientation, w, p.data.data());
  return p;
}

Pixels FromImage8(const testimages::Image8& image) {
  return Pixels{image.height, image.width, image.channels, image.pixels};
}

TEST(ExifOrientation, ReadsEveryValueInBothByteOrders) {
  for (bool big_endian : {false, true}) {
    for (int o = 1; o <= 8; ++o) {
      const std::vector<uint8_t> block = testimages::MakeExifBlock(o, big_endian);
      EXPECT_EQ(ops::ExifOrientation(block.data(), block.size()), o) << "big endian " << big_endian;
    }
  }
  const std::vector<uint8_t> bare = testimages::MakeExifBlock(6, false, /*with_camera=*/false);
  EXPECT_EQ(ops::ExifOrientation(bare.data(), bare.size()), 6);
}

TEST(ExifOrientation, OutOfRangeValuesAreIgnored) {
  for (int value : {0, 9, 255, 65535}) {
    const std::vector<uint8_t> block = testimages::MakeExifBlock(value);
    EXPECT_EQ(ops::ExifOrientation(block.data(), block.size()), 1) << value;
    EXPECT_EQ(OrientationOf(testimages::InsertApp1(testimages::MakeOrientedJpeg(9, 11, 0), block)), 1) << value;
  }
}

TEST(ExifOrientation, JpegHeaderGivesTheTagAndTheStoredSize) {
  EXPECT_EQ(OrientationOf(testimages::MakeOrientedJpeg(kHeight, kWidth, 0)), 1);  // no EXIF segment
  for (int o = 1; o <= 8; ++o) {
    const std::vector<uint8_t> jpeg = testimages::MakeOrientedJpeg(kHeight, kWidth, o);
    const ops::ImageInfo info = ops::ParseImageInfo(jpeg.data(), jpeg.size());
    EXPECT_EQ(info.orientation, o);
    EXPECT_EQ(info.height, kHeight);
    EXPECT_EQ(info.width, kWidth);
    const CropWindow shown = ops::OrientedFullWindow(info, o);
    EXPECT_EQ(shown.h, o >= 5 ? kWidth : kHeight);
    EXPECT_EQ(shown.w, o >= 5 ? kHeight : kWidth);
    if (o != 1) {
      EXPECT_NE(info.Describe().find("EXIF orientation " + std::to_string(o)), std::string::npos);
    }
  }
}

TEST(OrientedDecode, EveryOrientationEqualsTheStoredDecodeTurned) {
  for (int o = 1; o <= 8; ++o) {
    const std::vector<uint8_t> jpeg = testimages::MakeOrientedJpeg(kHeight, kWidth, o);
    for (OutputColor color : kAllColors) {
      SCOPED_TRACE("orientation " + std::to_string(o) + ", " + ColorName(color));
      const Pixels want = ReferenceOrient(TurboJpegDecode(jpeg, color), o);  // TurboJPEG ignores EXIF
      const Pixels got = DecodeOriented(jpeg, color, o);
      ASSERT_EQ(got.height, want.height);
      ASSERT_EQ(got.width, want.width);
      EXPECT_EQ(MaxAbsDiff(got.data, want.data), 0);
      // Orientation 1 requested (adjust_orientation: false): the stored pixels, whatever the tag.
      EXPECT_EQ(MaxAbsDiff(DecodeOriented(jpeg, color, 1).data, TurboJpegDecode(jpeg, color).data), 0);
    }
  }
}

TEST(OrientedDecode, WindowsOfTheTurnedImageEqualTheFullDecodeCropped) {
  std::mt19937 gen(35);
  for (int o = 1; o <= 8; ++o) {
    const std::vector<uint8_t> jpeg = testimages::MakeOrientedJpeg(kHeight, kWidth, o, /*seed=*/o);
    const Pixels full = DecodeOriented(jpeg, OutputColor::kRgb, o);
    for (int k = 0; k < 12; ++k) {
      const int64_t h = std::uniform_int_distribution<int64_t>(1, full.height)(gen);
      const int64_t w = std::uniform_int_distribution<int64_t>(1, full.width)(gen);
      const CropWindow window{std::uniform_int_distribution<int64_t>(0, full.height - h)(gen),
                              std::uniform_int_distribution<int64_t>(0, full.width - w)(gen), h, w};
      SCOPED_TRACE("orientation " + std::to_string(o) + " window y " + std::to_string(window.y) + " x " +
                   std::to_string(window.x) + " h " + std::to_string(h) + " w " + std::to_string(w));
      EXPECT_EQ(MaxAbsDiff(DecodeOriented(jpeg, OutputColor::kRgb, o, window).data, Crop(full, window).data), 0);
    }
  }
}

TEST(OrientedDecode, StoredWindowCoversTheShownWindow) {
  // Every shown pixel of a window maps into the stored window StoredWindow names.
  for (int o = 1; o <= 8; ++o) {
    const CropWindow shown{3, 5, 7, 11};
    const CropWindow stored = ops::StoredWindow(shown, kHeight, kWidth, o);
    EXPECT_EQ(stored.h * stored.w, shown.h * shown.w) << o;
    EXPECT_GE(stored.y, 0);
    EXPECT_GE(stored.x, 0);
    EXPECT_LE(stored.y + stored.h, kHeight);
    EXPECT_LE(stored.x + stored.w, kWidth);
  }
}

TEST(OrientedDecode, WindowOutsideTheTurnedImageIsRefused) {
  const std::vector<uint8_t> jpeg = testimages::MakeOrientedJpeg(kHeight, kWidth, 6);
  // 53 rows exist once turned, 37 columns: a window 40 wide fits the stored image, not the shown one.
  try {
    DecodeOriented(jpeg, OutputColor::kRgb, 6, CropWindow{0, 0, 10, 40});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("outside the 37x53 image (EXIF orientation 6)"), std::string::npos)
        << e.what();
  }
}

// Malformed EXIF blocks are ignored (orientation 1) and the image decodes as stored; never a crash.
TEST(MalformedExif, IsIgnored) {
  const std::vector<uint8_t> plain = testimages::MakeOrientedJpeg(kHeight, kWidth, 0);
  const Pixels stored = TurboJpegDecode(plain, OutputColor::kRgb);
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> blocks = {
      {"bogus IFD0 offset", testimages::ExifWithBogusIfdOffset()},
      {"bogus entry count", testimages::ExifWithBogusEntryCount()},
      {"bad byte order", testimages::ExifWithBadByteOrder()},
      {"prefix only", testimages::TruncatedExif(6)},
      {"header cut", testimages::TruncatedExif(10)},
  };
  for (const auto& [name, block] : blocks) {
    SCOPED_TRACE(name);
    EXPECT_EQ(ops::ExifOrientation(block.data(), block.size()), 1);
    const std::vector<uint8_t> jpeg = testimages::InsertApp1(plain, block);
    const ops::ImageInfo info = ops::ParseImageInfo(jpeg.data(), jpeg.size());
    EXPECT_EQ(info.orientation, 1);
    EXPECT_EQ(MaxAbsDiff(DecodeOriented(jpeg, OutputColor::kRgb, info.orientation).data, stored.data), 0);
  }
}

TEST(MalformedExif, EveryTruncationReadsAsTheTagOrNone) {
  const std::vector<uint8_t> plain = testimages::MakeOrientedJpeg(kHeight, kWidth, 0);
  const size_t full = testimages::MakeExifBlock(6).size();
  int tagged = 0;
  for (size_t keep = 0; keep <= full; ++keep) {
    const std::vector<uint8_t> block = testimages::TruncatedExif(keep);
    const int o = ops::ExifOrientation(block.data(), block.size());
    EXPECT_TRUE(o == 1 || o == 6) << keep << " bytes: " << o;
    tagged += o == 6;
    // Inside a JPEG too (the segment's length is the cut block's: the file's structure is sound).
    if (keep >= 6) {
      EXPECT_EQ(OrientationOf(testimages::InsertApp1(plain, block)), o) << keep;
    }
  }
  EXPECT_GE(tagged, 1);  // the whole block at least
}

TEST(TiffOrientation, TagIsReadAndApplied) {
  testimages::TiffSource s;
  s.height = 13;
  s.width = 21;
  s.channels = 3;
  std::mt19937 gen(6);
  for (int i = 0; i < s.height * s.width * 3; ++i) s.samples.push_back(static_cast<uint16_t>(gen() & 255));
  Pixels stored{s.height, s.width, 3, std::vector<uint8_t>(s.samples.begin(), s.samples.end())};
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    s.orientation = o;
    const std::vector<uint8_t> tiff = testimages::EncodeTiff({s});
    EXPECT_EQ(OrientationOf(tiff), o);
    EXPECT_EQ(MaxAbsDiff(DecodeOriented(tiff, OutputColor::kRgb, o).data, ReferenceOrient(stored, o).data), 0);
    // adjust_orientation: false — the samples as stored (libtiff's own flipping is off).
    EXPECT_EQ(MaxAbsDiff(DecodeOriented(tiff, OutputColor::kRgb, 1).data, stored.data), 0);
    const CropWindow window{2, 3, 5, 4};
    EXPECT_EQ(MaxAbsDiff(DecodeOriented(tiff, OutputColor::kRgb, o, window).data,
                         Crop(ReferenceOrient(stored, o), window).data),
              0);
  }
  s.orientation = 0;  // no tag
  EXPECT_EQ(OrientationOf(testimages::EncodeTiff({s})), 1);
}

TEST(WebpOrientation, ExifChunkIsReadAndApplied) {
  const testimages::Image8 image = testimages::MakePhotoLike(11, 17, 3, 9);
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const std::vector<uint8_t> webp = testimages::EncodeWebpWithExif(image, testimages::MakeExifBlock(o, o % 2 == 0));
    EXPECT_EQ(OrientationOf(webp), o);
    EXPECT_EQ(MaxAbsDiff(DecodeOriented(webp, OutputColor::kRgb, o).data, ReferenceOrient(FromImage8(image), o).data),
              0);  // lossless
  }
  EXPECT_EQ(OrientationOf(testimages::EncodeWebp(image, true, 100)), 1);  // no EXIF chunk
  const std::vector<uint8_t> bad = testimages::EncodeWebpWithExif(image, testimages::ExifWithBogusIfdOffset());
  EXPECT_EQ(OrientationOf(bad), 1);
}

// PNG's eXIf chunk (written after IHDR; libpng decodes the file, accepting the chunk's CRC): read
// and applied like JPEG's; none, or a malformed block, reads as 1.
TEST(PngOrientation, ExifChunkIsReadAndApplied) {
  testimages::PngSource s = testimages::MakePngSource(11, 17, 2, 8, 4);  // RGB 8-bit
  const std::vector<uint8_t> plain = testimages::EncodePng(s);
  const Pixels stored = DecodeOriented(plain, OutputColor::kRgb, 1);
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const std::vector<uint8_t> png = testimages::InsertPngExif(plain, testimages::MakeExifBlock(o, o % 2 == 0));
    EXPECT_EQ(OrientationOf(png), o);
    EXPECT_EQ(MaxAbsDiff(DecodeOriented(png, OutputColor::kRgb, o).data, ReferenceOrient(stored, o).data), 0);
    const CropWindow window{2, 3, 5, 4};
    EXPECT_EQ(MaxAbsDiff(DecodeOriented(png, OutputColor::kRgb, o, window).data,
                         Crop(ReferenceOrient(stored, o), window).data),
              0);
  }
  EXPECT_EQ(OrientationOf(plain), 1);
  EXPECT_EQ(OrientationOf(testimages::InsertPngExif(plain, testimages::ExifWithBogusIfdOffset())), 1);
  // A chunk whose length runs past the file ends the walk: orientation 1, the header still parses.
  std::vector<uint8_t> cut = testimages::InsertPngExif(plain, testimages::MakeExifBlock(6));
  cut[33] = 0x7F;
  EXPECT_EQ(OrientationOf(cut), 1);
}

}  // namespace
}  // namespace conveyor::testing
