#include "tools/testimages/format_images.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace conveyor::testimages {
namespace {

constexpr int kH = 40, kW = 37;  // odd width, partial strips and tiles

uint8_t To8(unsigned v, unsigned max) { return static_cast<uint8_t>(std::lround(v * 255.0 / max)); }

// Photo-like samples scaled to 0..max (16-bit: the low byte varies too).
std::vector<uint16_t> Samples(int h, int w, int channels, unsigned max, uint64_t seed) {
  const Image8 base = MakePhotoLike(h, w, channels, seed, 6.0);
  std::vector<uint16_t> out(base.pixels.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned jitter = static_cast<unsigned>((i * 2654435761u) >> 11) % 257;
    const double v = max > 255 ? base.pixels[i] * 257.0 + jitter - 128.0 : base.pixels[i] * max / 255.0;
    out[i] = static_cast<uint16_t>(std::clamp(std::lround(v), 0L, static_cast<long>(max)));
  }
  return out;
}

// The expected 8-bit image: colour sources lose their alpha; gray ones keep one channel.
Image8 Expected(const std::vector<uint16_t>& samples, int h, int w, int channels, unsigned max) {
  const int out_channels = channels >= 3 ? 3 : 1;
  Image8 img{h, w, out_channels, {}};
  for (size_t p = 0; p < static_cast<size_t>(h) * w; ++p) {
    for (int c = 0; c < out_channels; ++c) img.pixels.push_back(To8(samples[p * channels + c], max));
  }
  return img;
}

// format.h's CMYK → RGB on ink values (stored samples, inverted when `inverted`).
Image8 CmykToRgb(const Image8& cmyk, bool inverted) {
  Image8 rgb{cmyk.height, cmyk.width, 3, {}};
  for (size_t p = 0; p < static_cast<size_t>(cmyk.height) * cmyk.width; ++p) {
    const auto ink = [&](int c) { return inverted ? 255 - cmyk.pixels[4 * p + c] : cmyk.pixels[4 * p + c]; };
    for (int c = 0; c < 3; ++c) rgb.pixels.push_back(To8((255 - ink(c)) * (255 - ink(3)), 255 * 255));
  }
  return rgb;
}

std::string Size(int h, int w) { return "_" + std::to_string(w) + "x" + std::to_string(h); }

void AddCmyk(std::vector<FormatFile>& files) {
  const Image8 cmyk = MakePhotoLike(kH, kW, 4, 901);
  files.push_back({"jpeg_ycck_adobe_q95" + Size(kH, kW) + ".jpg", "JPEG", EncodeCmykJpeg(cmyk, 95),
                   CmykToRgb(cmyk, true), 28.0, 0, 4});
  files.push_back({"jpeg_cmyk_adobe_q95" + Size(kH, kW) + ".jpg", "JPEG", EncodeCmykJpegLibjpeg(cmyk, 95, true),
                   CmykToRgb(cmyk, true), 28.0, 0, 4});
  files.push_back({"jpeg_cmyk_no_adobe_q95" + Size(kH, kW) + ".jpg", "JPEG", EncodeCmykJpegLibjpeg(cmyk, 95, false),
                   CmykToRgb(cmyk, false), 28.0, 0, 4});
}

void AddTiff(std::vector<FormatFile>& files) {
  uint64_t seed = 910;
  const auto tiff = [&](const std::string& what, int channels, int bits, int compression, int tile, bool planar,
                        double min_psnr) {
    TiffSource s;
    s.height = kH;
    s.width = kW;
    s.channels = channels;
    s.bits = bits;
    s.compression = compression;
    s.tile = tile;
    s.planar = planar;
    const unsigned max = (1u << bits) - 1;
    s.samples = Samples(kH, kW, channels, max, seed++);
    const char* codec = compression == 1 ? "none" : compression == 5 ? "lzw" : compression == 8 ? "deflate"
                        : compression == 7 ? "jpeg" : "packbits";
    files.push_back({"tiff_" + what + "_" + std::to_string(bits) + "bit_" + codec + (tile ? "_tiles" : "_strips") +
                         (planar ? "_planar" : "") + Size(kH, kW) + ".tif",
                     "TIFF", EncodeTiff({s}), Expected(s.samples, kH, kW, channels, max), min_psnr,
                     bits == 16 && channels <= 2 ? 1 : 0, channels});
  };
  tiff("gray", 1, 8, 1, 0, false, 0);
  tiff("gray", 1, 8, 1, 16, false, 0);
  tiff("gray", 1, 1, 1, 0, false, 0);
  tiff("gray", 1, 16, 5, 0, false, 0);
  tiff("rgb", 3, 8, 5, 0, false, 0);
  tiff("rgb", 3, 8, 8, 16, false, 0);
  tiff("rgb", 3, 16, 8, 0, false, 0);
  tiff("rgb", 3, 8, 1, 0, true, 0);
  tiff("rgba", 4, 8, 32773, 0, false, 0);
  tiff("gray_alpha", 2, 8, 8, 0, false, 0);
  tiff("rgb", 3, 8, 7, 16, false, 30.0);
  // Palette: 8-bit indices into 256 random colours.
  TiffSource pal;
  pal.height = kH;
  pal.width = kW;
  pal.channels = 1;
  pal.compression = 5;
  pal.samples = Samples(kH, kW, 1, 255, seed++);
  const Image8 colours = MakePhotoLike(1, 256, 3, seed++);
  pal.palette = colours.pixels;
  Image8 expected{kH, kW, 3, {}};
  for (uint16_t i : pal.samples) {
    for (int c = 0; c < 3; ++c) expected.pixels.push_back(pal.palette[3u * i + c]);
  }
  files.push_back({"tiff_palette_8bit_lzw_strips" + Size(kH, kW) + ".tif", "TIFF", EncodeTiff({pal}), expected, 0, 0, 3});
  // Two pages: the first is the image.
  TiffSource first = pal, second = pal;
  first.palette.clear();
  first.channels = 3;
  first.samples = Samples(kH, kW, 3, 255, seed++);
  second.palette.clear();
  second.channels = 1;
  second.height = 9;
  second.width = 11;
  second.samples = Samples(9, 11, 1, 255, seed++);
  files.push_back({"tiff_rgb_8bit_lzw_two_pages" + Size(kH, kW) + ".tif", "TIFF", EncodeTiff({first, second}),
                   Expected(first.samples, kH, kW, 3, 255), 0, 0, 3});
}

void AddWebp(std::vector<FormatFile>& files) {
  const Image8 rgb = MakePhotoLike(kH, kW, 3, 930);
  Image8 rgba = MakePhotoLike(kH, kW, 4, 931);
  for (size_t i = 3; i < rgba.pixels.size(); i += 4) rgba.pixels[i] = std::max<uint8_t>(rgba.pixels[i], 1);  // 0 alpha lets lossless change RGB
  Image8 rgba_rgb{kH, kW, 3, {}};
  for (size_t i = 0; i < rgba.pixels.size(); ++i) {
    if (i % 4 != 3) rgba_rgb.pixels.push_back(rgba.pixels[i]);
  }
  files.push_back({"webp_lossy_q90" + Size(kH, kW) + ".webp", "WebP", EncodeWebp(rgb, false, 90), rgb, 22.0, 0, 3});
  files.push_back({"webp_lossless" + Size(kH, kW) + ".webp", "WebP", EncodeWebp(rgb, true, 100), rgb, 0, 0, 3});
  files.push_back({"webp_lossless_alpha" + Size(kH, kW) + ".webp", "WebP", EncodeWebp(rgba, true, 100), rgba_rgb, 0, 0, 4});
  files.push_back({"webp_lossy_alpha_q90" + Size(kH, kW) + ".webp", "WebP", EncodeWebp(rgba, false, 90), rgba_rgb, 22.0, 0, 4});
}

void AddPnm(std::vector<FormatFile>& files) {
  uint64_t seed = 940;
  const auto pnm = [&](int kind, bool plain, unsigned maxval) {
    PnmSource s;
    s.kind = kind;
    s.plain = plain;
    s.height = kH;
    s.width = kW;
    s.maxval = kind == 1 ? 1 : maxval;
    const int ch = kind == 3 ? 3 : 1;
    s.samples = Samples(kH, kW, ch, s.maxval, seed++);
    const char magic = static_cast<char>('0' + kind + (plain ? 0 : 3));
    const char* ext = kind == 1 ? ".pbm" : kind == 2 ? ".pgm" : ".ppm";
    files.push_back({std::string("pnm_p") + magic + "_maxval" + std::to_string(s.maxval) + Size(kH, kW) + ext, "PNM",
                     EncodePnm(s), Expected(s.samples, kH, kW, ch, s.maxval), 0, 0, ch});
  };
  pnm(1, true, 1);
  pnm(1, false, 1);
  pnm(2, true, 255);
  pnm(2, false, 255);
  pnm(2, false, 65535);
  pnm(3, true, 1000);
  pnm(3, false, 255);
  pnm(3, false, 100);
}

void AddBmp(std::vector<FormatFile>& files) {
  const Image8 rgb = MakePhotoLike(kH, kW, 3, 950), gray = MakePhotoLike(kH, kW, 1, 951);
  Image8 rgba = MakePhotoLike(kH, kW, 4, 952);
  Image8 rgba_rgb{kH, kW, 3, {}};
  for (size_t i = 0; i < rgba.pixels.size(); ++i) {
    if (i % 4 != 3) rgba_rgb.pixels.push_back(rgba.pixels[i]);
  }
  files.push_back({"bmp_rgb_24bit" + Size(kH, kW) + ".bmp", "BMP", EncodeBmp(rgb), rgb, 0, 0, 3});
  files.push_back({"bmp_gray_24bit" + Size(kH, kW) + ".bmp", "BMP", EncodeBmp(gray), gray, 0, 0, 3});
  files.push_back({"bmp_rgba_32bit" + Size(kH, kW) + ".bmp", "BMP", EncodeBmp(rgba), rgba_rgb, 0, 0, 4});
}

void AddJpeg2000(std::vector<FormatFile>& files) {
  uint64_t seed = 960;
  const auto j2k = [&](const std::string& what, int channels, int bits, Jpeg2000Options o, double min_psnr) {
    const unsigned max = (1u << bits) - 1;
    const std::vector<uint16_t> s = Samples(kH, kW, channels, max, seed++);
    files.push_back({"jpeg2000_" + what + "_" + std::to_string(bits) + "bit" + Size(kH, kW) + (o.jp2 ? ".jp2" : ".j2k"),
                     "JPEG2000", EncodeJpeg2000(s, kH, kW, channels, bits, o), Expected(s, kH, kW, channels, max),
                     min_psnr, 0, channels});
  };
  j2k("rgb_lossless", 3, 8, {false, true, 0, 0, 3}, 0);
  j2k("gray_lossless", 1, 8, {true, true, 0, 0, 3}, 0);
  j2k("rgb_lossy", 3, 8, {true, false, 8, 0, 3}, 25.0);
  j2k("rgba_lossless", 4, 8, {true, true, 0, 0, 3}, 0);
  j2k("gray_lossless", 1, 12, {false, true, 0, 0, 3}, 0);
  j2k("rgb_lossless_tiles", 3, 8, {true, true, 0, 16, 3}, 0);
}

}  // namespace

std::vector<FormatFile> MakeFormatTestSet() {
  std::vector<FormatFile> files;
  AddCmyk(files);
  AddTiff(files);
  AddWebp(files);
  AddPnm(files);
  AddBmp(files);
  AddJpeg2000(files);
  return files;
}

namespace {

void PutBe32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
void PutLe(std::vector<uint8_t>& b, size_t at, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t GetLe(const std::vector<uint8_t>& b, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint32_t{b[at + i]} << (8 * i);
  return v;
}
uint32_t GetBe32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t{b[at]} << 24 | uint32_t{b[at + 1]} << 16 | uint32_t{b[at + 2]} << 8 | b[at + 3];
}

uint32_t PngCrc(const uint8_t* data, size_t size) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
  }
  return crc ^ 0xFFFFFFFFu;
}

[[noreturn]] void NoHeader(const char* what) {
  throw std::runtime_error(std::string("ForgeDeclaredSize: ") + what);
}

std::vector<uint8_t> ForgeJpeg(std::vector<uint8_t> b, uint32_t width, uint32_t height) {
  for (size_t i = 2; i + 9 < b.size(); ++i) {
    if (b[i] == 0xFF && b[i + 1] >= 0xC0 && b[i + 1] <= 0xC2) {
      b[i + 5] = static_cast<uint8_t>(height >> 8);
      b[i + 6] = static_cast<uint8_t>(height);
      b[i + 7] = static_cast<uint8_t>(width >> 8);
      b[i + 8] = static_cast<uint8_t>(width);
      return b;
    }
  }
  NoHeader("no JPEG frame header (SOF0-2)");
}

std::vector<uint8_t> ForgeTiff(std::vector<uint8_t> b, uint32_t width, uint32_t height) {
  if (b[0] != 'I') NoHeader("big-endian TIFF");
  const size_t ifd = GetLe(b, 4, 4);
  int found = 0;
  for (size_t e = 0; e < GetLe(b, ifd, 2); ++e) {
    const size_t at = ifd + 2 + 12 * e;
    const uint32_t tag = GetLe(b, at, 2);
    if (tag != 256 && tag != 257) continue;
    PutLe(b, at + 8, tag == 256 ? width : height, GetLe(b, at + 2, 2) == 3 ? 2 : 4);  // SHORT or LONG
    ++found;
  }
  if (found != 2) NoHeader("no TIFF ImageWidth and ImageLength");
  return b;
}

std::vector<uint8_t> ForgePnm(const std::vector<uint8_t>& b, uint32_t width, uint32_t height) {
  // Magic, then width and height as decimal tokens (comments skipped); the rest kept.
  size_t pos = 2;
  for (int token = 0; token < 2; ++token) {
    while (pos < b.size() && (std::isspace(b[pos]) || b[pos] == '#')) {
      if (b[pos] == '#') while (pos < b.size() && b[pos] != '\n') ++pos;
      else ++pos;
    }
    while (pos < b.size() && std::isdigit(b[pos])) ++pos;
  }
  if (pos >= b.size()) NoHeader("no PNM size");
  const std::string head = "P" + std::string(1, static_cast<char>(b[1])) + "\n" + std::to_string(width) + " " +
                           std::to_string(height);
  std::vector<uint8_t> out(head.begin(), head.end());
  out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(pos), b.end());
  return out;
}

std::vector<uint8_t> ForgeJpeg2000(std::vector<uint8_t> b, uint32_t width, uint32_t height) {
  size_t cs = 0;
  if (!(b[0] == 0xFF && b[1] == 0x4F)) {  // JP2: the codestream box
    for (size_t pos = 0; pos + 8 <= b.size();) {
      const uint32_t length = GetBe32(b, pos);
      if (std::memcmp(&b[pos + 4], "jp2c", 4) == 0) {
        cs = pos + 8;
        break;
      }
      if (length < 8) NoHeader("JP2 box without a length");
      pos += length;
    }
    if (cs == 0) NoHeader("no JP2 codestream box");
  }
  PutBe32(b, cs + 8, width);  // Xsiz, Ysiz: the image's far corner; the offsets are 0 here
  PutBe32(b, cs + 12, height);
  return b;
}

std::vector<uint8_t> ForgeWebp(const std::vector<uint8_t>& b, uint32_t width, uint32_t height) {
  if (std::memcmp(&b[12], "VP8X", 4) == 0) NoHeader("WebP already extended");
  std::vector<uint8_t> out(b.size() + 18);
  std::memcpy(out.data(), b.data(), 12);
  const uint8_t vp8x[18] = {'V', 'P', '8', 'X', 10, 0, 0, 0, 0x02 /* animation */, 0, 0, 0};
  std::memcpy(out.data() + 12, vp8x, 18);
  std::memcpy(out.data() + 30, b.data() + 12, b.size() - 12);
  PutLe(out, 24, width - 1, 3);
  PutLe(out, 27, height - 1, 3);
  PutLe(out, 4, static_cast<uint32_t>(out.size() - 8), 4);
  return out;
}

}  // namespace

std::vector<uint8_t> ForgeDeclaredSize(const std::vector<uint8_t>& file, uint32_t width, uint32_t height) {
  std::vector<uint8_t> b = file;
  if (b.size() < 32) NoHeader("file too short");
  if (b[0] == 0xFF && b[1] == 0xD8) return ForgeJpeg(std::move(b), width, height);
  if (b[0] == 0x89 && b[1] == 'P') {  // IHDR's data at 16, its CRC over type + data at 29
    PutBe32(b, 16, width);
    PutBe32(b, 20, height);
    PutBe32(b, 29, PngCrc(&b[12], 17));
    return b;
  }
  if ((b[0] == 'I' && b[1] == 'I') || (b[0] == 'M' && b[1] == 'M')) return ForgeTiff(std::move(b), width, height);
  if (std::memcmp(&b[0], "RIFF", 4) == 0) return ForgeWebp(b, width, height);
  if (b[0] == 'P' && b[1] >= '1' && b[1] <= '6') return ForgePnm(b, width, height);
  if (b[0] == 'B' && b[1] == 'M') {
    PutLe(b, 18, width, 4);
    PutLe(b, 22, height, 4);
    return b;
  }
  if ((b[0] == 0xFF && b[1] == 0x4F) || std::memcmp(&b[4], "jP  ", 4) == 0) return ForgeJpeg2000(std::move(b), width, height);
  NoHeader("unknown format");
}

}  // namespace conveyor::testimages
