#include "operators/decoders/image_check.h"

#include <array>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace conveyor::ops {
namespace {

std::string Hex2(int v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02X", v);
  return buf;
}

std::string At(size_t pos) { return " at offset " + std::to_string(pos); }

// Markers that may stand between segments (libjpeg refuses the others: FF 02-BF, F0-FD).
bool IsSegmentMarker(int m) {
  return (m >= 0xC0 && m <= 0xCF) || (m >= 0xDB && m <= 0xDF) || (m >= 0xE0 && m <= 0xEF) || m == 0xFE;
}

// Position of the marker that ends the entropy-coded data starting at `pos` (its FF), or `size`
// when the data runs to the end of the file.
size_t EndOfScan(const uint8_t* data, size_t size, size_t pos) {
  while (pos < size) {
    const void* ff = std::memchr(data + pos, 0xFF, size - pos);
    if (ff == nullptr) return size;
    size_t p = static_cast<size_t>(static_cast<const uint8_t*>(ff) - data);
    size_t q = p + 1;
    while (q < size && data[q] == 0xFF) ++q;  // fill bytes
    if (q >= size) return size;
    const int b = data[q];
    if (b == 0x00 || (b >= 0xD0 && b <= 0xD7)) {  // stuffed FF, restart marker
      pos = q + 1;
      continue;
    }
    return q - 1;
  }
  return size;
}

std::string CheckJpeg(const uint8_t* data, size_t size) {
  const std::string truncated = "truncated JPEG data: the file ends after " + std::to_string(size) + " bytes";
  size_t pos = 2;  // after SOI (ParseImageInfo checked it)
  bool scan = false;
  while (true) {
    while (pos < size && data[pos] != 0xFF) ++pos;  // stray bytes: libjpeg skips them with a warning
    while (pos + 1 < size && data[pos + 1] == 0xFF) ++pos;
    if (pos + 1 >= size) return truncated + ", before the end-of-image marker (FF D9)";
    const size_t marker_at = pos;
    const int m = data[pos + 1];
    pos += 2;
    if (m == 0xD9) {
      if (!scan) return "corrupt JPEG data: end of image (FF D9)" + At(marker_at) + " before any scan";
      return "";
    }
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue;
    if (!IsSegmentMarker(m) && m != 0xDA) {
      return "corrupt JPEG data: FF " + Hex2(m) + At(marker_at) + " is not a JPEG marker";
    }
    if (pos + 2 > size) return truncated + ", inside segment FF " + Hex2(m) + At(marker_at);
    const size_t length = (size_t{data[pos]} << 8) | data[pos + 1];
    if (length < 2)
      return "corrupt JPEG data: segment FF " + Hex2(m) + At(marker_at) + " has length " + std::to_string(length);
    if (pos + length > size) {
      return truncated + ", inside segment FF " + Hex2(m) + At(marker_at) + " of " + std::to_string(length) + " bytes";
    }
    pos += length;
    if (m == 0xDA) {
      scan = true;
      pos = EndOfScan(data, size, pos);
      if (pos >= size)
        return truncated + ", inside the scan data that starts" + At(marker_at) + " (no end-of-image marker FF D9)";
    }
  }
}

uint32_t Crc32(const uint8_t* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return crc;
}

uint32_t ReadU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string CheckPng(const uint8_t* data, size_t size) {
  const std::string truncated = "truncated PNG data: the file ends after " + std::to_string(size) + " bytes";
  size_t pos = 8;  // after the signature
  bool idat = false;
  while (true) {
    if (pos + 8 > size) return truncated + ", before the IEND chunk";
    const uint32_t length = ReadU32(data + pos);
    const std::string type(reinterpret_cast<const char*>(data + pos + 4), 4);
    bool letters = true;
    for (char c : type) letters &= (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    if (!letters || length > 0x7FFFFFFFu) {
      return "corrupt PNG data: no valid chunk header" + At(pos) + " (length " + std::to_string(length) + ")";
    }
    const std::string chunk = "chunk \"" + type + "\"" + At(pos);
    if (size - pos < size_t{length} + 12) {
      return truncated + ", inside " + chunk + " of " + std::to_string(size_t{length} + 12) + " bytes";
    }
    const uint32_t stored = ReadU32(data + pos + 8 + length);
    const uint32_t computed = Crc32(data + pos + 4, size_t{length} + 4, 0xFFFFFFFFu) ^ 0xFFFFFFFFu;
    if (stored != computed) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), " (stored %08X, computed %08X)", stored, computed);
      return "corrupt PNG data: CRC mismatch in " + chunk + buf;
    }
    if (type == "IDAT") idat = true;
    if (type == "IEND") return idat ? "" : "corrupt PNG data: no image data (IDAT) before IEND";
    pos += size_t{length} + 12;
  }
}

}  // namespace

std::string CheckImageStructure(const uint8_t* data, size_t size, const ImageInfo& info) {
  if (info.format == ImageFormat::kJpeg) return CheckJpeg(data, size);
  if (info.format == ImageFormat::kPng) return CheckPng(data, size);
  // The other formats: their header parse (sizes against the file included) is the check; damage
  // in their data is found by their decoders.
  return "";
}

std::string CheckEncodedImage(const uint8_t* data, size_t size, int64_t max_pixels) {
  try {
    return CheckImageStructure(data, size, ParseImageInfo(data, size, max_pixels));
  } catch (const InvalidArgument& e) {
    return e.what();
  }
}

}  // namespace conveyor::ops
