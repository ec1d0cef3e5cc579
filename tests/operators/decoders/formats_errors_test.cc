// Every error of the formats beyond JPEG YCbCr and PNG, with its text: forged and absurd sizes
// refused by the header parse (before anything is allocated for the image), truncated data,
// unsupported variants; bad input of any kind throws InvalidArgument and never crashes. And the
// operator on a batch that mixes every format (chosen from the content, not the name).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/decoders/decode_cpu.h"
#include "tests/operators/decoders/decode_reference.h"
#include "tools/testimages/format_images.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using ops::OutputColor;
using testimages::FormatFile;

const std::vector<FormatFile>& FormatSet() {
  static const std::vector<FormatFile> files = testimages::MakeFormatTestSet();
  return files;
}

std::vector<uint8_t> Bytes(const std::string& name) {
  for (const FormatFile& f : FormatSet()) {
    if (f.name == name) return f.bytes;
  }
  ADD_FAILURE() << "no format test file " << name;
  return {};
}

// "" when the bytes parse and decode; else the InvalidArgument's message (any other exception fails).
std::string ErrorOf(const std::vector<uint8_t>& bytes) {
  try {
    const ops::ImageInfo info = ops::ParseImageInfo(bytes.data(), bytes.size());
    std::vector<uint8_t> out(static_cast<size_t>(info.height * info.width * 3));
    ops::DecodeImageCpu(bytes.data(), bytes.size(), info, OutputColor::kRgb, ops::FullWindow(info), out.data());
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

std::vector<uint8_t> Cut(const std::vector<uint8_t>& bytes, double keep) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() * keep));
}

void PutLe32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void PutBe32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

// Rewrites the value of a little-endian TIFF's first-directory tag (SHORT or LONG, one value).
std::vector<uint8_t> SetTiffTag(std::vector<uint8_t> tiff, uint16_t tag, uint32_t value) {
  const auto u16 = [&](size_t at) { return static_cast<uint16_t>(tiff[at] | tiff[at + 1] << 8); };
  const size_t ifd = tiff[4] | tiff[5] << 8 | tiff[6] << 16 | static_cast<size_t>(tiff[7]) << 24;
  for (size_t e = 0; e < u16(ifd); ++e) {
    const size_t at = ifd + 2 + 12 * e;
    if (u16(at) != tag) continue;
    if (u16(at + 2) == 3) {  // SHORT
      tiff[at + 8] = static_cast<uint8_t>(value);
      tiff[at + 9] = static_cast<uint8_t>(value >> 8);
    } else {
      PutLe32(tiff, at + 8, value);
    }
    return tiff;
  }
  ADD_FAILURE() << "no TIFF tag " << tag;
  return tiff;
}

TEST(FormatErrors, Tiff) {
  const auto lzw = Bytes("tiff_rgb_8bit_lzw_strips_37x40.tif");
  const auto none = Bytes("tiff_gray_8bit_none_strips_37x40.tif");
  EXPECT_THAT(ErrorOf(SetTiffTag(SetTiffTag(lzw, 256, 60000), 257, 60000)),
              HasSubstr("TIFF header claims 60000x60000 (3600000000 pixels), more than max_pixels (268435456): a "
                        "forged or damaged header, or raise max_pixels"));
  EXPECT_THAT(ErrorOf(SetTiffTag(SetTiffTag(none, 256, 1000), 257, 1000)),
              HasSubstr("TIFF header claims 1000x1000 (at least 1000000 bytes of uncompressed samples), but the file "
                        "has " + std::to_string(none.size()) + " bytes: a forged or damaged header"));
  EXPECT_THAT(ErrorOf(SetTiffTag(Bytes("tiff_gray_16bit_lzw_strips_37x40.tif"), 258, 32)),
              HasSubstr("unsupported TIFF: Sorry, can not handle images with 32-bit samples"));
  EXPECT_THAT(ErrorOf(SetTiffTag(lzw, 258, 32)),
              HasSubstr("corrupt or unsupported TIFF (libtiff: TIFFReadDirectory: Cannot handle different values per "
                        "sample for \"BitsPerSample\")"));
  EXPECT_THAT(ErrorOf(SetTiffTag(lzw, 259, 34712)), HasSubstr("unsupported TIFF: compression 34712"));
  // libtiff writes the directory after the strips: a cut file has lost it.
  EXPECT_THAT(ErrorOf(Cut(lzw, 0.6)),
              HasSubstr("corrupt or unsupported TIFF (libtiff: TIFFFetchDirectory: Can not read TIFF directory count)"));
  EXPECT_THAT(ErrorOf(Cut(lzw, 0.02)), HasSubstr("TIFF"));
  testimages::TiffSource tiled;
  tiled.height = 20;
  tiled.width = 20;
  tiled.channels = 1;
  tiled.bits = 16;
  tiled.tile = 16;
  tiled.samples.assign(400, 12345);
  EXPECT_THAT(ErrorOf(testimages::EncodeTiff({tiled})),
              HasSubstr("unsupported TIFF: tiled 16-bit gray with partial tiles (width 20, tiles 16 wide)"));
}

TEST(FormatErrors, Webp) {
  const auto lossy = Bytes("webp_lossy_q90_37x40.webp");
  EXPECT_THAT(ErrorOf(Cut(lossy, 0.6)), HasSubstr("truncated WebP data (libwebp: not enough data in "));
  EXPECT_THAT(ErrorOf(std::vector<uint8_t>(lossy.begin(), lossy.begin() + 16)), HasSubstr("truncated WebP header: 16 bytes"));
  auto bad = lossy;
  bad[15] = '9';  // "VP8 " → "VP89"
  EXPECT_THAT(ErrorOf(bad), HasSubstr("malformed WebP header (libwebp: "));
  // A frame's own 14-bit sizes stop at 16383x16383, under the default max_pixels; an extended
  // header's canvas can claim more (max_pixels_test forges one).
}

TEST(FormatErrors, Pnm) {
  const auto header = [](const std::string& text, size_t extra) {
    std::vector<uint8_t> b(text.begin(), text.end());
    b.resize(b.size() + extra, 0x80);
    return b;
  };
  EXPECT_THAT(ErrorOf(header("P6\n100000 100000\n255\n", 64)),
              HasSubstr("PNM header claims 100000x100000 (10000000000 pixels), more than max_pixels (268435456)"));
  const auto small = header("P6\n1000 1000\n255\n", 100);
  EXPECT_THAT(ErrorOf(small), HasSubstr("PNM header claims 1000x1000 (3000000 bytes of raw samples), but the file has " +
                                        std::to_string(small.size()) + " bytes"));
  EXPECT_THAT(ErrorOf(header("P4\n800 800\n", 100)), HasSubstr("PNM header claims 800x800 (80000 bytes of packed bits)"));
  EXPECT_THAT(ErrorOf(header("P2\n300 300\n255\n", 100)),
              HasSubstr("PNM header claims 300x300 (at least 90000 characters of plain samples)"));
  EXPECT_THAT(ErrorOf(header("P5\n2 2\n0\n", 4)), HasSubstr("corrupt or unsupported PNM (libnetpbm: "));
  EXPECT_THAT(ErrorOf(Cut(Bytes("pnm_p3_maxval1000_37x40.ppm"), 0.6)), HasSubstr("PNM data (libnetpbm: "));
  EXPECT_THAT(ErrorOf(Cut(Bytes("pnm_p6_maxval255_37x40.ppm"), 0.6)), HasSubstr("PNM header claims 37x40"));
  EXPECT_THAT(ErrorOf(header("P5 ", 0)), HasSubstr("PNM"));
}

TEST(FormatErrors, Bmp) {
  const auto rgb = Bytes("bmp_rgb_24bit_37x40.bmp");
  auto bad = rgb;
  PutLe32(bad, 18, 100000);
  PutLe32(bad, 22, 100000);
  EXPECT_THAT(ErrorOf(bad), HasSubstr("BMP header claims 100000x100000 (10000000000 pixels), more than max_pixels"));
  bad = rgb;
  PutLe32(bad, 18, 1000);
  PutLe32(bad, 22, static_cast<uint32_t>(-1000));  // top-down
  EXPECT_THAT(ErrorOf(bad), HasSubstr("BMP header claims 1000x1000 (3000000 bytes of pixel data from offset 54), but "
                                      "the file has " + std::to_string(rgb.size()) + " bytes"));
  EXPECT_THAT(ErrorOf(Cut(rgb, 0.9)), HasSubstr("BMP header claims 37x40 (4480 bytes of pixel data from offset 54)"));
  bad = rgb;
  PutLe32(bad, 30, 1);
  EXPECT_THAT(ErrorOf(bad), HasSubstr("unsupported BMP: RLE8 compression (stb_image decodes uncompressed and bit-field BMPs)"));
  bad = rgb;
  PutLe32(bad, 14, 99);
  EXPECT_THAT(ErrorOf(bad), HasSubstr("unsupported BMP: DIB header of 99 bytes"));
  EXPECT_THAT(ErrorOf(Cut(rgb, 0.3 * 54 / rgb.size())), HasSubstr("truncated BMP header: 16 bytes"));
}

TEST(FormatErrors, Jpeg2000) {
  const auto j2k = Bytes("jpeg2000_rgb_lossless_8bit_37x40.j2k");
  const auto jp2 = Bytes("jpeg2000_gray_lossless_8bit_37x40.jp2");
  auto bad = j2k;
  PutBe32(bad, 8, 100000);
  PutBe32(bad, 12, 100000);
  EXPECT_THAT(ErrorOf(bad), HasSubstr("JPEG 2000 header claims 100000x100000 (10000000000 pixels), more than max_pixels"));
  bad = j2k;
  PutBe32(bad, 24, 1);
  PutBe32(bad, 28, 1);  // 1x1 tiles: 1480 of them
  EXPECT_THAT(ErrorOf(bad), HasSubstr("JPEG 2000 header claims 37x40 (1480 tiles, each at least a 14-byte tile-part "
                                      "header), but the file has " + std::to_string(j2k.size()) + " bytes"));
  bad = j2k;
  bad[41] = 5;  // Csiz
  EXPECT_THAT(ErrorOf(bad), HasSubstr("unsupported JPEG 2000: 5 components (1 to 4 expected)"));
  EXPECT_THAT(ErrorOf(Cut(j2k, 0.6)), HasSubstr("truncated JPEG 2000 data (OpenJPEG: Tile part length size inconsistent with stream length)"));
  EXPECT_THAT(ErrorOf(Cut(jp2, 0.6)), HasSubstr("truncated JPEG 2000 data (OpenJPEG: Tile part length size inconsistent with stream length)"));
  EXPECT_THAT(ErrorOf(std::vector<uint8_t>(jp2.begin(), jp2.begin() + 40)),
              HasSubstr("truncated JPEG 2000 file: no codestream box (jp2c) in 40 bytes"));
  EXPECT_THAT(ErrorOf(std::vector<uint8_t>(j2k.begin(), j2k.begin() + 30)),
              HasSubstr("truncated JPEG 2000 header: the SIZ marker segment is cut off"));
}

TEST(FormatErrors, CmykJpeg) {
  const auto ycck = Bytes("jpeg_ycck_adobe_q95_37x40.jpg");
  EXPECT_THAT(ErrorOf(Cut(ycck, 0.7)), HasSubstr("truncated JPEG data (libjpeg: Premature end of JPEG file)"));
}

// Every file cut at 25 points and with 16 single bytes flipped: a decode or an InvalidArgument
// with a reason, never another exception or a crash (the sanitizer runs of CI check memory too).
TEST(FormatErrors, DamagedFilesNeverCrash) {
  int errors = 0, runs = 0;
  for (const FormatFile& f : FormatSet()) {
    for (int k = 1; k <= 25; ++k) {
      const std::string e = ErrorOf(Cut(f.bytes, k / 26.0));
      errors += !e.empty();
      ++runs;
    }
    for (int k = 0; k < 16; ++k) {
      auto bad = f.bytes;
      bad[(bad.size() * (2 * k + 1)) / 32] ^= 0x5A;
      const std::string e = ErrorOf(bad);
      errors += !e.empty();
      ++runs;
    }
  }
  EXPECT_EQ(runs, 37 * 41);
  EXPECT_GT(errors, 37 * 20);
}

// decoders.image on one batch of every format: each sample equals its own decode; the format is
// the content's (the samples carry no names).
TEST(FormatErrors, OperatorDecodesAMixedBatch) {
  std::vector<std::vector<uint8_t>> files;
  std::vector<Shape> shapes;
  for (const FormatFile& f : FormatSet()) {
    files.push_back(f.bytes);
    shapes.push_back(Shape{static_cast<int64_t>(f.bytes.size())});
  }
  for (const std::string type : {"RGB", "GRAY"}) {
    const OutputColor color = ops::ParseOutputColor(type);
    OpHarness h(OpSpec("decoders.image", "dec").AddInput("encoded").AddOutput("images").SetArg("output_type", type),
                Device::kCpu, 4);
    h.SetInput(0, MakeBatch<uint8_t>(shapes, files));
    h.Run();
    const TensorListCPU& out = h.OutputCpu(0);
    ASSERT_EQ(out.num_samples(), static_cast<int>(files.size()));
    for (size_t i = 0; i < files.size(); ++i) {
      SCOPED_TRACE(FormatSet()[i].name + " " + type);
      const Pixels want = DecodeOurs(files[i], color);
      ASSERT_EQ(out.shape(static_cast<int>(i)), (Shape{want.height, want.width, want.channels}));
      const auto* p = static_cast<const uint8_t*>(out.raw_sample(static_cast<int>(i)));
      EXPECT_EQ(std::vector<uint8_t>(p, p + want.data.size()), want.data);
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
