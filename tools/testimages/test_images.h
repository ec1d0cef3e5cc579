// Deterministic test images, encoded with real encoders (TurboJPEG's tjCompress2, libpng), for the
// decoder tests (which build them in a temp dir) and the decode benchmarks (make_test_images
// --photos N on the GPU machine). Same arguments → byte-identical files on every machine with the
// same library versions.
//
// | set                | contents                                                               |
// |--------------------|------------------------------------------------------------------------|
// | MakeTestSet()      | JPEG baseline + progressive × 4:4:4/4:2:2/4:2:0/gray, odd sizes (1x1,  |
// |                    | 17x9, 4000x3); PNG gray 1/2/4/8/16-bit, gray+alpha, RGB, RGBA,          |
// |                    | 16-bit RGB, palette (+tRNS), Adam7; corrupt (entropy bytes flipped,     |
// |                    | marker in the scan, bad marker, IDAT), truncated and 12-bit-claiming     |
// |                    | files; not-an-image bytes (format_images.h: CMYK, TIFF, WebP, ...)      |
// | MakePhotoJpeg(i)   | photo-like 500x375 q90 4:2:0 JPEG, ~40 KB (gradients, shapes, texture)  |
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace conveyor::testimages {

// 8-bit HWC pixels.
struct Image8 {
  int height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
  uint8_t at(int y, int x, int c) const {
    return pixels[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) *
                      static_cast<size_t>(channels) + static_cast<size_t>(c)];
  }
};

// Smooth gradients + shapes + texture noise (amplitude `noise`, 0..255), from `seed`.
Image8 MakePhotoLike(int height, int width, int channels, uint64_t seed, double noise = 6.0);

enum class Subsampling { k444, k422, k420, kGray };
const char* SubsamplingName(Subsampling s);  // "444", "422", "420", "gray"

// TurboJPEG encode. `image` has 3 channels (1 for kGray, which it also accepts with 3: luma only).
std::vector<uint8_t> EncodeJpeg(const Image8& image, Subsampling subsampling, int quality, bool progressive);
// A 4-component (YCCK) JPEG from 4-channel CMYK pixels.
std::vector<uint8_t> EncodeCmykJpeg(const Image8& cmyk, int quality);

// PNG source samples: HWC, `channels` per pixel as stored (color_type's), values < 2^bit_depth.
// Palette images: samples are indices into `palette` (RGB triples); `trns` per palette entry.
struct PngSource {
  int height = 0, width = 0;
  int color_type = 2;  // 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
  int bit_depth = 8;
  bool interlaced = false;
  std::vector<uint16_t> samples;
  std::vector<uint8_t> palette;
  std::vector<uint8_t> trns;
  int channels() const;  // stored samples per pixel
};
PngSource MakePngSource(int height, int width, int color_type, int bit_depth, uint64_t seed);
std::vector<uint8_t> EncodePng(const PngSource& source);

// Damaged copies.
std::vector<uint8_t> Truncate(const std::vector<uint8_t>& bytes, double keep_fraction);
// XORs 0x5A into `count` bytes in the middle of the JPEG's first scan (its entropy-coded data).
// JPEG has no checksum: such damage is found only if it happens to form an invalid Huffman code
// or a marker, or to desync the scan — often it just decodes to wrong pixels.
std::vector<uint8_t> FlipEntropyBytes(const std::vector<uint8_t>& jpeg, int count);
// Overwrites `count` bytes in the middle of the first scan with 0xFF fill and a stray RST marker
// (FF D5): the entropy decoder reliably runs into a marker before the scan's end.
std::vector<uint8_t> MarkerInEntropyData(const std::vector<uint8_t>& jpeg, int count);
// Replaces the first DQT marker (FF DB) with the reserved FF 02.
std::vector<uint8_t> BreakJpegMarker(const std::vector<uint8_t>& jpeg);
// Sets the frame header's sample precision to `bits` (12: an 8-bit file that claims 12-bit samples).
std::vector<uint8_t> ForgeJpegPrecision(const std::vector<uint8_t>& jpeg, int bits);
// Flips one byte inside the first IDAT chunk (zlib data and CRC no longer match).
std::vector<uint8_t> CorruptPngData(const std::vector<uint8_t>& png);

// One generated file with what a decoder must produce from it.
struct TestFile {
  std::string name;  // file name with extension: "jpeg_420_progressive_q95_64x48.jpg"
  std::vector<uint8_t> bytes;
  enum class Kind { kJpeg, kPng, kBroken } kind = Kind::kJpeg;
  // JPEG: the pixels encoded (3 channels, or 1 for gray); PNG: png set, image empty.
  Image8 image;
  Subsampling subsampling = Subsampling::k444;
  bool progressive = false;
  int quality = 0;
  PngSource png;
};
std::vector<TestFile> MakeTestSet();

// The i-th benchmark photo: 500x375 (default), q90, 4:2:0 baseline.
std::vector<uint8_t> MakePhotoJpeg(int index, int width = 500, int height = 375, int quality = 90);

// Writes `bytes` to `path`; throws std::runtime_error naming the path.
void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace conveyor::testimages
