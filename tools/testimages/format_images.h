// Test files of every format beyond test_images.h's JPEG and PNG, each written by the format's own
// encoder: CMYK/YCCK JPEG (TurboJPEG's tjCompress2 with TJPF_CMYK, libjpeg with and without the
// Adobe marker), TIFF (libtiff), WebP (libwebp), PNM (libnetpbm), BMP (stb_image_write), JPEG 2000
// (OpenJPEG). Each comes with the pixels a decoder must give. Deterministic, like test_images.h.
//
// | format    | variants in MakeFormatTestSet()                                                  |
// |-----------|----------------------------------------------------------------------------------|
// | JPEG CMYK | YCCK + Adobe (TurboJPEG), CMYK + Adobe, CMYK without Adobe marker (libjpeg)       |
// | TIFF      | gray 1/8/16-bit, RGB 8/16-bit, RGBA, palette; none/LZW/deflate/PackBits/JPEG;     |
// |           | strips, tiles, planar; two pages                                                 |
// | WebP      | lossy and lossless, RGB and RGBA                                                 |
// | PNM       | P1-P6, maxval 1, 100, 255, 1000, 65535                                           |
// | BMP       | 24-bit from RGB and from gray, 32-bit RGBA                                       |
// | JPEG 2000 | J2K and JP2, lossless and lossy, gray/RGB/RGBA, 12-bit, tiled                    |
//
// ForgeDeclaredSize: any of them (and test_images.h's JPEGs and PNGs) with a forged size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/testimages/test_images.h"

namespace conveyor::testimages {

// One TIFF page: samples as stored, `channels` per pixel (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA;
// palette images: 1 index per pixel into `palette`, RGB triples).
struct TiffSource {
  int height = 0, width = 0, channels = 3, bits = 8;
  int compression = 1;     // libtiff's COMPRESSION_*: 1 none, 5 LZW, 8 deflate, 32773 PackBits, 7 JPEG
  int tile = 0;            // tile side; 0: strips of rows_per_strip rows
  int rows_per_strip = 7;
  bool planar = false;     // PLANARCONFIG_SEPARATE
  int orientation = 0;     // the Orientation tag's value; 0: no tag
  std::vector<uint16_t> samples;
  std::vector<uint8_t> palette;
};
std::vector<uint8_t> EncodeTiff(const std::vector<TiffSource>& pages);

std::vector<uint8_t> EncodeCmykJpegLibjpeg(const Image8& cmyk, int quality, bool adobe_marker);
// image: 3 (RGB) or 4 (RGBA) channels.
std::vector<uint8_t> EncodeWebp(const Image8& image, bool lossless, float quality);

struct PnmSource {
  int kind = 3;  // 1 PBM (samples 0 black, 1 white as netpbm's xel values), 2 PGM, 3 PPM
  bool plain = false;
  int height = 0, width = 0;
  unsigned maxval = 255;
  std::vector<uint16_t> samples;
};
std::vector<uint8_t> EncodePnm(const PnmSource& source);

// 1 (written as 24-bit gray), 3 (24-bit) or 4 (32-bit) channels.
std::vector<uint8_t> EncodeBmp(const Image8& image);

struct Jpeg2000Options {
  bool jp2 = true;  // false: a raw J2K codestream
  bool lossless = true;
  float rate = 20;  // lossy: compression ratio
  int tile = 0;     // 0: one tile
  int resolutions = 3;
};
std::vector<uint8_t> EncodeJpeg2000(const std::vector<uint16_t>& samples, int height, int width, int channels, int bits,
                                    const Jpeg2000Options& options);

// A file and the pixels a decoder must give for it: `expected` has 1 channel (a gray source) or 3
// (RGB: colour sources with alpha dropped, palettes expanded, CMYK converted by format.h's formula),
// samples scaled to 8 bits by round(v * 255 / max).
struct FormatFile {
  std::string name;    // "tiff_rgb_8bit_lzw_tiles_37x40.tif"
  std::string format;  // as ImageFormatName says: "TIFF", "WebP", "PNM", "BMP", "JPEG2000", "JPEG"
  std::vector<uint8_t> bytes;
  Image8 expected;
  double min_psnr = 0;  // 0: lossless, the decode equals `expected` within max_error; else the least PSNR
  int max_error = 0;    // lossless: 1 where the library truncates (libtiff's 16-bit gray: v >> 8)
  int components = 0;   // ImageInfo::components
};
std::vector<FormatFile> MakeFormatTestSet();

// A copy of `file` (a JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 these encoders wrote) whose
// header declares width x height, the data left as it is: what a forged or damaged header looks
// like to a decoder. JPEG: the first frame header (SOF); PNG: IHDR, its CRC recomputed; TIFF
// (little-endian): ImageWidth and ImageLength; BMP: the DIB header's (bottom-up); PNM: the text
// header rewritten; JPEG 2000 (J2K or JP2): SIZ's Xsiz and Ysiz (offsets 0); WebP: a VP8X header
// with the animation flag and that canvas put in front of the frame (a still frame cannot claim more
// than 16383x16383; an animation's canvas may claim 2^24 a side). Throws std::runtime_error when
// the header is not found.
std::vector<uint8_t> ForgeDeclaredSize(const std::vector<uint8_t>& file, uint32_t width, uint32_t height);

}  // namespace conveyor::testimages
