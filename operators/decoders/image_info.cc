#include "operators/decoders/image_info.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "core/error.h"
#include "operators/decoders/formats/bmp.h"
#include "operators/decoders/formats/jpeg2000.h"
#include "operators/decoders/formats/pnm.h"
#include "operators/decoders/formats/tiff.h"
#include "operators/decoders/formats/webp.h"
#include "operators/decoders/orientation.h"

namespace conveyor::ops {
namespace {

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};

int ReadU16(const uint8_t* p) { return (p[0] << 8) | p[1]; }
uint32_t ReadU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string Hex(int v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02X", v);
  return buf;
}

// Chroma sampling from the frame's factors: component 0 is luma, 1 and 2 chroma (equal factors).
ChromaSubsampling Subsampling(int components, const int* h, const int* v) {
  if (components == 1) return ChromaSubsampling::kGray;
  if (components != 3 || h[1] != h[2] || v[1] != v[2]) return ChromaSubsampling::kOther;
  if (h[0] % h[1] != 0 || v[0] % v[1] != 0) return ChromaSubsampling::kOther;
  const int hr = h[0] / h[1], vr = v[0] / v[1];
  if (hr == 1 && vr == 1) return ChromaSubsampling::k444;
  if (hr == 2 && vr == 1) return ChromaSubsampling::k422;
  if (hr == 2 && vr == 2) return ChromaSubsampling::k420;
  if (hr == 1 && vr == 2) return ChromaSubsampling::k440;
  if (hr == 4 && vr == 1) return ChromaSubsampling::k411;
  return ChromaSubsampling::kOther;
}

// A frame header's size is read before anything is allocated for the image, so a forged one
// (65535x65535 in a 40 KB file: 12.9 GB of output) is refused here. Every 8x8 block of every
// component costs at least one bit of Huffman-coded data (a DC code, baseline and progressive
// alike), and the file holds all of them: fewer bytes than blocks / 8 cannot be that image.
// Arithmetic-coded JPEGs can spend less than a bit per block and are not checked.
void CheckJpegSizeFitsFile(const ImageInfo& info, const int* h, const int* v, size_t size) {
  if (info.arithmetic) return;
  const int hmax = *std::max_element(h, h + info.components), vmax = *std::max_element(v, v + info.components);
  uint64_t blocks = 0;
  for (int c = 0; c < info.components; ++c) {
    const uint64_t w = (static_cast<uint64_t>(info.width) * static_cast<uint64_t>(h[c]) + hmax - 1) / hmax;
    const uint64_t ht = (static_cast<uint64_t>(info.height) * static_cast<uint64_t>(v[c]) + vmax - 1) / vmax;
    blocks += ((w + 7) / 8) * ((ht + 7) / 8);
  }
  const uint64_t least = blocks / 8;
  if (least > size) {
    throw InvalidArgument("JPEG frame header claims " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                          " (" + std::to_string(blocks) + " blocks, at least " + std::to_string(least) +
                          " bytes of entropy-coded data), but the file has " + std::to_string(size) +
                          " bytes: a forged or damaged header");
  }
}

// Walks the marker segments up to the frame header (SOF). Markers before it all carry a length
// (APPn, DQT, DHT, DRI, COM, ...), except the parameterless RSTn/TEM, which are skipped.
ImageInfo ParseJpeg(const uint8_t* data, size_t size, int64_t max_pixels) {
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  size_t pos = 2;  // after SOI
  bool saw_exif = false;
  while (true) {
    while (pos < size && data[pos] != 0xFF) ++pos;  // tolerate stray bytes between segments
    while (pos < size && data[pos] == 0xFF) ++pos;  // fill bytes
    if (pos >= size) {
      throw InvalidArgument("truncated JPEG header: no frame header (SOF) in " + std::to_string(size) + " bytes");
    }
    const int marker = data[pos++];
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
    if (marker == 0xD8) throw InvalidArgument("malformed JPEG header: a second start-of-image marker (FF D8)");
    if (marker == 0xD9 || marker == 0xDA) {
      throw InvalidArgument(std::string("malformed JPEG header: ") + (marker == 0xD9 ? "end of image" : "a scan") +
                            " before the frame header (SOF)");
    }
    if (pos + 2 > size) throw InvalidArgument("truncated JPEG header: segment " + Hex(marker) + " cut off");
    const int length = ReadU16(data + pos);
    if (length < 2) {
      throw InvalidArgument("malformed JPEG header: segment " + Hex(marker) + " has length " + std::to_string(length));
    }
    // The first APP1 "Exif" segment gives the orientation (libexif parses it; a malformed one,
    // truncated or with bogus offsets, reads as orientation 1). It precedes the frame header.
    if (marker == 0xE1 && !saw_exif && length >= 8 && pos + 8 <= size &&
        std::memcmp(data + pos + 2, "Exif\0\0", 6) == 0) {
      saw_exif = true;
      const size_t available = std::min(static_cast<size_t>(length) - 2, size - pos - 2);
      info.orientation = ExifOrientation(data + pos + 2, available);
    }
    const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (marker == 0xEE && length >= 14 && pos + 14 <= size && std::memcmp(data + pos + 2, "Adobe", 5) == 0) {
      info.adobe_transform = data[pos + 13];  // 0 RGB/CMYK, 1 YCbCr, 2 YCCK
    }
    if (!sof) {
      pos += static_cast<size_t>(length);
      continue;
    }
    if (pos + static_cast<size_t>(length) > size || length < 8) {
      throw InvalidArgument("truncated JPEG header: frame header (SOF) cut off");
    }
    const uint8_t* f = data + pos + 2;
    if (marker == 0xC3 || marker == 0xC7 || marker == 0xCB || marker == 0xCF) {
      throw InvalidArgument("unsupported JPEG: lossless (SOF marker " + Hex(marker) + ")");
    }
    if (marker == 0xC5 || marker == 0xC6 || marker == 0xCD || marker == 0xCE) {
      throw InvalidArgument("unsupported JPEG: hierarchical (SOF marker " + Hex(marker) + ")");
    }
    const int precision = f[0];
    if (precision != 8) {
      throw InvalidArgument("unsupported JPEG: " + std::to_string(precision) + "-bit samples (8-bit expected)");
    }
    info.height = ReadU16(f + 1);
    info.width = ReadU16(f + 3);
    info.components = f[5];
    info.progressive = marker == 0xC2 || marker == 0xCA;
    info.arithmetic = marker >= 0xC9;
    if (info.height == 0) throw InvalidArgument("unsupported JPEG: height defined by a DNL marker (0 in the frame header)");
    if (info.width == 0) throw InvalidArgument("malformed JPEG header: width 0");
    if (info.components != 1 && info.components != 3 && info.components != 4) {
      throw InvalidArgument("unsupported JPEG: " + std::to_string(info.components) +
                            " components (1, 3 or 4 (CMYK/YCCK) expected)");
    }
    if (length < 8 + 3 * info.components) throw InvalidArgument("truncated JPEG header: frame header (SOF) cut off");
    int h[4] = {0, 0, 0, 0}, v[4] = {0, 0, 0, 0};
    for (int c = 0; c < info.components; ++c) {
      h[c] = f[6 + 3 * c + 1] >> 4;
      v[c] = f[6 + 3 * c + 1] & 15;
      if (h[c] < 1 || h[c] > 4 || v[c] < 1 || v[c] > 4) {
        throw InvalidArgument("malformed JPEG header: component " + std::to_string(c) + " sampling factors " +
                              std::to_string(h[c]) + "x" + std::to_string(v[c]));
      }
    }
    info.subsampling = Subsampling(info.components, h, v);
    const bool unit_chroma = info.components == 3 && h[1] == 1 && v[1] == 1 && h[2] == 1 && v[2] == 1;
    const bool common_luma = (h[0] == 1 && v[0] == 1) || (h[0] == 2 && v[0] == 1) || (h[0] == 2 && v[0] == 2);
    info.jpeg_common_layout = marker == 0xC0 && (info.components == 1 || (unit_chroma && common_luma));
    CheckDeclaredSize("JPEG frame", static_cast<uint64_t>(info.width), static_cast<uint64_t>(info.height), max_pixels);
    CheckJpegSizeFitsFile(info, h, v, size);
    return info;
  }
}

ImageInfo ParsePng(const uint8_t* data, size_t size, int64_t max_pixels) {
  ImageInfo info;
  info.format = ImageFormat::kPng;
  if (size < 33) throw InvalidArgument("truncated PNG header: " + std::to_string(size) + " bytes (33 needed for IHDR)");
  if (ReadU32(data + 8) != 13 || std::memcmp(data + 12, "IHDR", 4) != 0) {
    throw InvalidArgument("malformed PNG header: the first chunk is not a 13-byte IHDR");
  }
  const uint8_t* p = data + 16;
  const uint32_t width = ReadU32(p), height = ReadU32(p + 4);
  info.bit_depth = p[8];
  info.color_type = p[9];
  info.interlaced = p[12] == 1;
  if (width == 0 || height == 0 || width > 0x7FFFFFFF || height > 0x7FFFFFFF) {
    throw InvalidArgument("malformed PNG header: size " + std::to_string(width) + "x" + std::to_string(height));
  }
  info.width = width;
  info.height = height;
  CheckDeclaredSize("PNG", width, height, max_pixels);
  const int d = info.bit_depth;
  bool ok = false;
  switch (info.color_type) {
    case 0: ok = d == 1 || d == 2 || d == 4 || d == 8 || d == 16; info.components = 1; break;
    case 2: ok = d == 8 || d == 16; info.components = 3; break;
    case 3: ok = d == 1 || d == 2 || d == 4 || d == 8; info.components = 3; break;
    case 4: ok = d == 8 || d == 16; info.components = 2; break;
    case 6: ok = d == 8 || d == 16; info.components = 4; break;
    default: break;
  }
  if (!ok) {
    throw InvalidArgument("malformed PNG header: colour type " + std::to_string(info.color_type) + " with bit depth " +
                          std::to_string(d));
  }
  // As for JPEG: deflate compresses at most ~1032:1, so the image data cannot be more than that
  // many times the file (a forged IHDR claiming 100000x100000 is refused before any allocation).
  const int stored_channels = info.color_type == 3 ? 1 : info.components;
  const uint64_t row = (static_cast<uint64_t>(width) * stored_channels * d + 7) / 8 + 1;
  const uint64_t raw = row * height;
  constexpr uint64_t kMaxDeflateRatio = 1032;
  if (raw / kMaxDeflateRatio > size) {
    throw InvalidArgument("PNG header claims " + std::to_string(width) + "x" + std::to_string(height) + " (" +
                          std::to_string(raw) + " bytes of image data, at least " +
                          std::to_string(raw / kMaxDeflateRatio) + " compressed), but the file has " +
                          std::to_string(size) + " bytes: a forged or damaged header");
  }
  if (p[12] > 1) throw InvalidArgument("malformed PNG header: interlace method " + std::to_string(p[12]));
  // An eXIf chunk before the image data gives the orientation (its payload is the EXIF block
  // without JPEG's "Exif\0\0" prefix; libexif reads it). Chunk headers only, bounded by the file; a
  // chunk running past the end ends the walk (the decoder reports the damage).
  for (size_t at = 33; at + 12 <= size;) {
    const uint32_t length = ReadU32(data + at);
    const uint8_t* type = data + at + 4;
    if (std::memcmp(type, "IDAT", 4) == 0 || std::memcmp(type, "IEND", 4) == 0) break;
    if (length > size - at - 12) break;
    if (std::memcmp(type, "eXIf", 4) == 0) {
      std::vector<uint8_t> block = {'E', 'x', 'i', 'f', 0, 0};
      block.insert(block.end(), data + at + 8, data + at + 8 + length);
      info.orientation = ExifOrientation(block.data(), block.size());
      break;
    }
    at += 12 + static_cast<size_t>(length);
  }
  return info;
}

}  // namespace

std::string ChromaSubsamplingName(ChromaSubsampling s) {
  switch (s) {
    case ChromaSubsampling::kNone: return "none";
    case ChromaSubsampling::k444: return "4:4:4";
    case ChromaSubsampling::k422: return "4:2:2";
    case ChromaSubsampling::k420: return "4:2:0";
    case ChromaSubsampling::k440: return "4:4:0";
    case ChromaSubsampling::k411: return "4:1:1";
    case ChromaSubsampling::kGray: return "gray";
    case ChromaSubsampling::kOther: return "other";
  }
  return "?";
}

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kTiff: return "TIFF";
    case ImageFormat::kWebp: return "WebP";
    case ImageFormat::kPnm: return "PNM";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kJpeg2000: return "JPEG2000";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

std::string ImageInfo::Describe() const {
  std::string s = std::string(ImageFormatName(format)) + " ";
  s += std::to_string(width) + "x" + std::to_string(height);
  if (format == ImageFormat::kJpeg) {
    s += ", " + std::to_string(components) + " components, ";
    if (components == 4) {
      s += adobe_transform == 2 ? "YCCK" : "CMYK";
      s += adobe_transform >= 0 ? " (Adobe, inverted)" : "";
    } else {
      s += ChromaSubsamplingName(subsampling);
    }
    if (progressive) s += ", progressive";
    if (arithmetic) s += ", arithmetic";
  } else if (format == ImageFormat::kPng) {
    static const char* kTypes[] = {"gray", "?", "RGB", "palette", "gray+alpha", "?", "RGBA"};
    s += std::string(", ") + (color_type >= 0 && color_type <= 6 ? kTypes[color_type] : "?") + ", " +
         std::to_string(bit_depth) + "-bit";
    if (interlaced) s += ", interlaced";
  } else if (format != ImageFormat::kUnknown) {
    s += ", " + std::to_string(components) + (components == 1 ? " component" : " components");
    if (bit_depth > 0) s += ", " + std::to_string(bit_depth) + "-bit";
    if (!detail.empty()) s += ", " + detail;
  }
  if (orientation != 1) s += ", EXIF orientation " + std::to_string(orientation);
  return s;
}

ImageFormat SniffFormat(const uint8_t* data, size_t size) {
  const auto starts = [&](std::initializer_list<uint8_t> magic) {
    return size >= magic.size() && std::equal(magic.begin(), magic.end(), data);
  };
  if (starts({0xFF, 0xD8, 0xFF})) return ImageFormat::kJpeg;
  if (size >= 8 && std::memcmp(data, kPngSignature, 8) == 0) return ImageFormat::kPng;
  if (starts({'I', 'I', 42, 0}) || starts({'M', 'M', 0, 42})) return ImageFormat::kTiff;
  if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0) return ImageFormat::kWebp;
  // P1-P6 followed by whitespace (or a comment): the netpbm formats' magic numbers.
  if (size >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6' &&
      (data[2] == ' ' || data[2] == '\t' || data[2] == '\n' || data[2] == '\r' || data[2] == '#')) {
    return ImageFormat::kPnm;
  }
  if (starts({'B', 'M'}) && size >= 14) return ImageFormat::kBmp;
  if (starts({0xFF, 0x4F, 0xFF, 0x51}) ||
      starts({0x00, 0x00, 0x00, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A})) {
    return ImageFormat::kJpeg2000;
  }
  return ImageFormat::kUnknown;
}

std::string LeadingBytesHex(const uint8_t* data, size_t size) {
  std::string s;
  for (size_t i = 0; i < std::min<size_t>(size, 4); ++i) {
    char buf[4];
    std::snprintf(buf, sizeof(buf), "%02X", data[i]);
    if (!s.empty()) s += ' ';
    s += buf;
  }
  return s;
}

ImageInfo ParseImageInfo(const uint8_t* data, size_t size, int64_t max_pixels) {
  if (size == 0) {
    throw InvalidArgument("empty input (0 bytes): expected an encoded image (JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000)");
  }
  switch (SniffFormat(data, size)) {
    case ImageFormat::kJpeg: return ParseJpeg(data, size, max_pixels);
    case ImageFormat::kPng: return ParsePng(data, size, max_pixels);
    case ImageFormat::kTiff: return ParseTiffInfo(data, size, max_pixels);
    case ImageFormat::kWebp: return ParseWebpInfo(data, size, max_pixels);
    case ImageFormat::kPnm: return ParsePnmInfo(data, size, max_pixels);
    case ImageFormat::kBmp: return ParseBmpInfo(data, size, max_pixels);
    case ImageFormat::kJpeg2000: return ParseJpeg2000Info(data, size, max_pixels);
    case ImageFormat::kUnknown: break;
  }
  throw InvalidArgument(NotAnImage(data, size));
}

std::string NotAnImage(const uint8_t* data, size_t size) {
  return "not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with " +
         LeadingBytesHex(data, size) + ", " + std::to_string(size) + " bytes)";
}

}  // namespace conveyor::ops
