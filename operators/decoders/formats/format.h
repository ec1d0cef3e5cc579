// What every format's decoder shares: the output colours, the limit on declared sizes and the
// pixel conversions to RGB / BGR / GRAY. Each format lives in its own file (formats/tiff.h, ...)
// with two entry points that image_info.cc and decode_cpu.cc dispatch to:
//
//   ImageInfo Parse<Format>Info(data, size, max_pixels)   header only; sizes checked before any allocation
//   void Decode<Format>(data, size, info, color, window, out, max_pixels)   window.h x window.w x C, packed;
//        the library's own header read is held to max_pixels before it allocates
//
// Conversions (the same for every format, so a gray or CMYK source reads alike whatever holds it):
//   GRAY from RGB: PIL's "L", (19595 R + 38470 G + 7471 B + 32768) >> 16 — Rec. 601 weights, within
//   1 of .299 R + .587 G + .114 B;  RGB from gray: replicated;  alpha: dropped (never composited).
//   RGB from CMYK: R = (255 - C)(255 - K) / 255 rounded (G from M, B from Y) — PIL's cmyk2rgb
//   (nk - MULDIV255(C, nk)), which is also OpenCV's and DALI's; see docs/decoding.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace conveyor::ops {

// decoders' `output_type` (DALI's names).
enum class OutputColor { kRgb, kBgr, kGray };
inline int OutputChannels(OutputColor color) { return color == OutputColor::kGray ? 1 : 3; }

// decoders' `max_pixels` default: 2^28 = 16384 x 16384. It admits the largest real photographs
// (ImageNet's ~6000x6500, 200-megapixel cameras) while one forged header can ask for no more than
// ~0.8 GB of RGB output. Every header reader refuses a larger declared size before anything is
// allocated for the image, and the CPU decoders check the libraries' own header reads against it.
constexpr int64_t kDefaultMaxPixels = int64_t{1} << 28;

// Throws InvalidArgument when width x height is zero or above `max_pixels` (>= 1):
// "TIFF header claims 20000x20000 (400000000 pixels), more than max_pixels (268435456): a forged
// or damaged header, or raise max_pixels". `format` starts the message ("TIFF", "JPEG frame").
inline void CheckDeclaredSize(const char* format, uint64_t width, uint64_t height, int64_t max_pixels) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width == 0 || height == 0) throw InvalidArgument(std::string("malformed ") + format + " header: size " + size);
  const uint64_t limit = max_pixels < 1 ? 1 : static_cast<uint64_t>(max_pixels);
  if (width > limit || height > limit || width * height > limit) {  // each side first: no overflow
    throw InvalidArgument(std::string(format) + " header claims " + size + " (" + std::to_string(width * height) +
                          " pixels), more than max_pixels (" + std::to_string(limit) +
                          "): a forged or damaged header, or raise max_pixels");
  }
}

// Throws the "a header the file cannot hold" error: `what` names the least the data needs
// ("at least 3000000 bytes of uncompressed strips").
inline void CheckSizeFitsFile(const char* format, uint64_t width, uint64_t height, uint64_t least_bytes,
                              const std::string& what, size_t file_size) {
  if (least_bytes <= file_size) return;
  throw InvalidArgument(std::string(format) + " header claims " + std::to_string(width) + "x" +
                        std::to_string(height) + " (" + what + "), but the file has " + std::to_string(file_size) +
                        " bytes: a forged or damaged header");
}

// round(a * b / 255) for a, b in [0, 255], exactly (PIL's MULDIV255).
inline uint8_t MulDiv255(unsigned a, unsigned b) {
  const unsigned t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

inline uint8_t Luma(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((19595u * r + 38470u * g + 7471u * b + 0x8000u) >> 16);
}

// One row of `n` pixels with `channels` interleaved 8-bit samples — 1 gray, 2 gray+alpha, 3 RGB,
// 4 RGBA — to `color` (alpha dropped). `src` and `dst` may not overlap.
inline void ConvertRow(const uint8_t* src, int channels, int64_t n, OutputColor color, uint8_t* dst) {
  const bool gray = channels <= 2;
  for (int64_t i = 0; i < n; ++i, src += channels) {
    if (color == OutputColor::kGray) {
      *dst++ = gray ? src[0] : Luma(src[0], src[1], src[2]);
    } else if (gray) {
      dst[0] = dst[1] = dst[2] = src[0];
      dst += 3;
    } else {
      const bool bgr = color == OutputColor::kBgr;
      dst[0] = src[bgr ? 2 : 0];
      dst[1] = src[1];
      dst[2] = src[bgr ? 0 : 2];
      dst += 3;
    }
  }
}

// One row of CMYK pixels to `color`. `inverted`: the samples are 255 - ink (Adobe's convention,
// which Photoshop writes and libjpeg passes through untouched).
inline void CmykRowToColor(const uint8_t* cmyk, int64_t n, bool inverted, OutputColor color, uint8_t* dst) {
  for (int64_t i = 0; i < n; ++i, cmyk += 4) {
    const unsigned flip = inverted ? 255u : 0u;  // ink = stored ^ flip
    const unsigned nk = 255u - (cmyk[3] ^ flip);  // 255 - K
    uint8_t rgb[3];
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<uint8_t>(nk - MulDiv255(cmyk[c] ^ flip, nk));
    ConvertRow(rgb, 3, 1, color, dst);
    dst += OutputChannels(color);
  }
}

}  // namespace conveyor::ops
