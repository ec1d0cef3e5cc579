// The formats beyond JPEG YCbCr and PNG (formats/*.h, CMYK JPEG in decode_cpu.cc), on files their
// own encoders wrote (tools/testimages/format_images.h): headers, pixels against the encoded
// source (exact when lossless, PSNR-bounded when lossy), CMYK against TurboJPEG's own CMYK decode,
// windows against full decode + crop, and every error message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <random>

#include "core/error.h"
#include "operators/decoders/decode_cpu.h"
#include "tests/operators/decoders/decode_reference.h"
#include "tools/testimages/format_images.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using ops::CropWindow;
using ops::OutputColor;
using testimages::FormatFile;

const std::vector<FormatFile>& FormatSet() {
  static const std::vector<FormatFile> files = testimages::MakeFormatTestSet();
  return files;
}

const FormatFile& FindFile(const std::string& name) {
  for (const FormatFile& f : FormatSet()) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no format test file " + name);
}

// What `expected` (1 or 3 channels) must decode to in `color`: GRAY from RGB in floating point.
Pixels ExpectedIn(const testimages::Image8& e, OutputColor color) {
  Pixels p{e.height, e.width, ops::OutputChannels(color), {}};
  for (int y = 0; y < e.height; ++y) {
    for (int x = 0; x < e.width; ++x) {
      const double r = e.at(y, x, 0), g = e.at(y, x, e.channels == 3 ? 1 : 0), b = e.at(y, x, e.channels == 3 ? 2 : 0);
      if (color == OutputColor::kGray) {
        p.data.push_back(static_cast<uint8_t>(std::lround(.299 * r + .587 * g + .114 * b)));
      } else if (color == OutputColor::kRgb) {
        p.data.insert(p.data.end(), {static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)});
      } else {
        p.data.insert(p.data.end(), {static_cast<uint8_t>(b), static_cast<uint8_t>(g), static_cast<uint8_t>(r)});
      }
    }
  }
  return p;
}

std::string ErrorOf(const std::vector<uint8_t>& bytes, bool decode = true) {
  try {
    const ops::ImageInfo info = ops::ParseImageInfo(bytes.data(), bytes.size());
    if (!decode) return "";
    std::vector<uint8_t> out(static_cast<size_t>(info.height * info.width * 3));
    ops::DecodeImageCpu(bytes.data(), bytes.size(), info, OutputColor::kRgb, ops::FullWindow(info), out.data());
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

std::vector<uint8_t> Cut(const std::vector<uint8_t>& bytes, size_t keep) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep));
}

TEST(Formats, HeadersGiveFormatSizeAndComponents) {
  std::map<std::string, int> per_format;
  for (const FormatFile& f : FormatSet()) {
    SCOPED_TRACE(f.name);
    const ops::ImageInfo info = ops::ParseImageInfo(f.bytes.data(), f.bytes.size());
    EXPECT_EQ(ops::ImageFormatName(info.format), f.format);
    EXPECT_EQ(info.height, f.expected.height);
    EXPECT_EQ(info.width, f.expected.width);
    EXPECT_EQ(info.components, f.components) << info.Describe();
    EXPECT_EQ(info.Describe().substr(0, f.format.size() + 1), f.format + " ");
    ++per_format[f.format];
  }
  EXPECT_EQ(per_format["JPEG"], 3);
  EXPECT_EQ(per_format["TIFF"], 13);
  EXPECT_EQ(per_format["WebP"], 4);
  EXPECT_EQ(per_format["PNM"], 8);
  EXPECT_EQ(per_format["BMP"], 3);
  EXPECT_EQ(per_format["JPEG2000"], 6);
}

TEST(Formats, DecodeEqualsTheEncodedSource) {
  int checked = 0;
  for (const FormatFile& f : FormatSet()) {
    for (OutputColor color : kAllColors) {
      SCOPED_TRACE(f.name + " " + ColorName(color));
      Pixels got;
      ASSERT_NO_THROW(got = DecodeOurs(f.bytes, color));
      const Pixels want = ExpectedIn(f.expected, color);
      ASSERT_EQ(got.data.size(), want.data.size());
      if (f.min_psnr == 0) {
        // GRAY from colour: integer Rec. 601 weights (format.h), within 1 of the float formula.
        const bool gray_from_color = color == OutputColor::kGray && f.expected.channels == 3;
        EXPECT_LE(MaxAbsDiff(got.data, want.data), std::max(f.max_error, gray_from_color ? 1 : 0));
      } else {
        EXPECT_GT(Psnr(got.data, want.data), f.min_psnr);
        RecordProperty(f.name + "_" + ColorName(color) + "_psnr", std::to_string(Psnr(got.data, want.data)));
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 37 * 3);
}

// An independent decode of the same CMYK samples: TurboJPEG's tjDecompress2 into TJPF_CMYK, then
// format.h's formula written out in floating point. Ours must agree exactly (same IDCT, and PIL's
// MULDIV255 is exact rounding).
TEST(Formats, CmykJpegEqualsTurboJpegsCmykThroughPilsFormula) {
  for (const std::string name : {"jpeg_ycck_adobe_q95_37x40.jpg", "jpeg_cmyk_adobe_q95_37x40.jpg",
                                 "jpeg_cmyk_no_adobe_q95_37x40.jpg"}) {
    SCOPED_TRACE(name);
    const FormatFile& f = FindFile(name);
    const bool inverted = name.find("_adobe") != std::string::npos && name.find("no_adobe") == std::string::npos;
    tjhandle tj = tjInitDecompress();
    std::vector<uint8_t> cmyk(static_cast<size_t>(f.expected.height) * f.expected.width * 4);
    ASSERT_EQ(tjDecompress2(tj, f.bytes.data(), f.bytes.size(), cmyk.data(), f.expected.width, 0, f.expected.height,
                            TJPF_CMYK, TJFLAG_ACCURATEDCT),
              0)
        << tjGetErrorStr2(tj);
    tjDestroy(tj);
    std::vector<uint8_t> rgb;
    for (size_t p = 0; p < cmyk.size() / 4; ++p) {
      const auto ink = [&](int c) { return inverted ? 255 - cmyk[4 * p + c] : cmyk[4 * p + c]; };
      for (int c = 0; c < 3; ++c) rgb.push_back(static_cast<uint8_t>(std::lround((255 - ink(c)) * (255 - ink(3)) / 255.0)));
    }
    EXPECT_EQ(DecodeOurs(f.bytes, OutputColor::kRgb).data, rgb);
    const ops::ImageInfo info = ops::ParseImageInfo(f.bytes.data(), f.bytes.size());
    EXPECT_THAT(info.Describe(), HasSubstr(name.find("ycck") != std::string::npos ? "4 components, YCCK (Adobe, inverted)"
                                           : inverted                            ? "4 components, CMYK (Adobe, inverted)"
                                                                                 : "4 components, CMYK"));
  }
}

// Windows: libtiff (strips/tiles under the window), OpenJPEG (decode area), libnetpbm (rows down to
// the window), CMYK JPEG (jpeg_crop_scanline) and the decode-then-crop formats all give exactly
// the full decode's pixels.
TEST(Formats, WindowEqualsFullDecodeCropped) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  int windows = 0;
  for (const FormatFile& f : FormatSet()) {
    for (OutputColor color : kAllColors) {
      const Pixels full = DecodeOurs(f.bytes, color);
      const int64_t h = full.height, w = full.width;
      std::vector<CropWindow> list = {{0, 0, 1, 1}, {h - 1, w - 1, 1, 1}, {0, w - 1, h, 1}, {h / 2, 0, (h + 1) / 2, w},
                                      {17, 16, 16, 16}};
      for (int k = 0; k < 8; ++k) {
        const int64_t wh = std::uniform_int_distribution<int64_t>(1, h)(rng);
        const int64_t ww = std::uniform_int_distribution<int64_t>(1, w)(rng);
        list.push_back({std::uniform_int_distribution<int64_t>(0, h - wh)(rng),
                        std::uniform_int_distribution<int64_t>(0, w - ww)(rng), wh, ww});
      }
      for (const CropWindow& win : list) {
        SCOPED_TRACE(f.name + " " + ColorName(color) + " window y " + std::to_string(win.y) + " x " +
                     std::to_string(win.x) + " h " + std::to_string(win.h) + " w " + std::to_string(win.w));
        const Pixels got = DecodeOurs(f.bytes, color, win);
        EXPECT_EQ(MaxAbsDiff(got.data, Crop(full, win).data), 0);
        ++windows;
      }
    }
  }
  EXPECT_EQ(windows, 37 * 3 * 13);
}

}  // namespace
}  // namespace conveyor::testing
