#include "operators/decoders/formats/bmp.h"

#include <stb/stb_image.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace conveyor::ops {
namespace {

uint32_t U32(const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24; }
uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

std::string StbReason() {
  const char* reason = stbi_failure_reason();
  return std::string("corrupt or unsupported BMP (stb_image: ") + (reason ? reason : "unknown") + ")";
}

}  // namespace

ImageInfo ParseBmpInfo(const uint8_t* data, size_t size, int64_t max_pixels) {
  // BITMAPFILEHEADER (14 bytes): "BM", file size, reserved, pixel data offset; then the DIB header.
  if (size < 26) throw InvalidArgument("truncated BMP header: " + std::to_string(size) + " bytes");
  if (size > 0x7FFFFFFF) throw InvalidArgument("unsupported BMP: " + std::to_string(size) + " bytes (stb_image reads < 2 GiB)");
  const uint32_t offset = U32(data + 10), header_size = U32(data + 14);
  if (header_size != 12 && header_size != 40 && header_size != 56 && header_size != 108 && header_size != 124) {
    throw InvalidArgument("unsupported BMP: DIB header of " + std::to_string(header_size) + " bytes");
  }
  if (size < 14 + size_t{header_size}) {
    throw InvalidArgument("truncated BMP header: " + std::to_string(size) + " bytes, the DIB header needs " +
                          std::to_string(14 + header_size));
  }
  int64_t width = 0, height = 0;
  uint32_t bpp = 0, compression = 0;
  if (header_size == 12) {  // OS/2 BITMAPCOREHEADER
    width = U16(data + 18);
    height = U16(data + 20);
    bpp = U16(data + 24);
  } else {
    width = static_cast<int32_t>(U32(data + 18));
    height = static_cast<int32_t>(U32(data + 22));  // negative: rows stored top-down
    bpp = U16(data + 28);
    compression = U32(data + 30);
  }
  if (compression == 1 || compression == 2) {
    throw InvalidArgument(std::string("unsupported BMP: ") + (compression == 1 ? "RLE8" : "RLE4") +
                          " compression (stb_image decodes uncompressed and bit-field BMPs)");
  }
  if (compression != 0 && compression != 3) {
    throw InvalidArgument("unsupported BMP: compression " + std::to_string(compression));
  }
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32) {
    throw InvalidArgument("malformed BMP header: " + std::to_string(bpp) + " bits per pixel");
  }
  if (width <= 0 || height == 0) {
    throw InvalidArgument("malformed BMP header: size " + std::to_string(width) + "x" + std::to_string(height));
  }
  const uint64_t rows = static_cast<uint64_t>(height < 0 ? -height : height);
  CheckDeclaredSize("BMP", static_cast<uint64_t>(width), rows, max_pixels);
  // Rows are padded to 4 bytes; stb would read missing bytes as zeros, so they must all be there.
  const uint64_t stride = (static_cast<uint64_t>(width) * bpp + 31) / 32 * 4;
  const uint64_t least = uint64_t{offset} + stride * rows;
  CheckSizeFitsFile("BMP", static_cast<uint64_t>(width), rows, least,
                    std::to_string(stride * rows) + " bytes of pixel data from offset " + std::to_string(offset), size);
  int x = 0, y = 0, comp = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), &x, &y, &comp)) throw InvalidArgument(StbReason());
  if (x != width || static_cast<uint64_t>(y) != rows) {
    throw InvalidArgument("malformed BMP header: stb_image reads " + std::to_string(x) + "x" + std::to_string(y) + ", not " +
                          std::to_string(width) + "x" + std::to_string(rows));
  }
  ImageInfo info;
  info.format = ImageFormat::kBmp;
  info.width = width;
  info.height = static_cast<int64_t>(rows);
  info.components = comp;
  info.bit_depth = static_cast<int>(bpp);  // bits per pixel, as BMP counts them
  info.detail = std::string(bpp <= 8 ? "palette" : compression == 3 ? "bit fields" : "RGB") +
                (height < 0 ? ", top-down" : "");
  return info;
}

void DecodeBmp(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
               uint8_t* out, int64_t max_pixels) {
  // stb_image has no run-time size limit (STBI_MAX_DIMENSIONS is fixed when it is built): its own
  // header read is held to ours and to max_pixels before stbi_load allocates the image.
  if (size > 0x7FFFFFFF) throw InvalidArgument("unsupported BMP: " + std::to_string(size) + " bytes (stb_image reads < 2 GiB)");
  int x = 0, y = 0, comp = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), &x, &y, &comp)) throw InvalidArgument(StbReason());
  CheckDeclaredSize("BMP", static_cast<uint64_t>(x), static_cast<uint64_t>(y), max_pixels);
  if (x != info.width || y != info.height) {
    throw InvalidArgument("BMP header reads " + std::to_string(x) + "x" + std::to_string(y) + ", not the " +
                          std::to_string(info.width) + "x" + std::to_string(info.height) + " planned");
  }
  std::unique_ptr<uint8_t, void (*)(void*)> pixels(stbi_load_from_memory(data, static_cast<int>(size), &x, &y, &comp, 0),
                                                   stbi_image_free);
  if (pixels == nullptr) throw InvalidArgument(StbReason());
  if (x != info.width || y != info.height || comp < 1 || comp > 4) {
    throw InvalidArgument("BMP decodes to " + std::to_string(x) + "x" + std::to_string(y) + " with " +
                          std::to_string(comp) + " channels, the header said otherwise");
  }
  const int channels = OutputChannels(color);
  for (int64_t r = 0; r < window.h; ++r) {
    const uint8_t* src = pixels.get() + (static_cast<size_t>(window.y + r) * static_cast<size_t>(x) +
                                         static_cast<size_t>(window.x)) * static_cast<size_t>(comp);
    ConvertRow(src, comp, window.w, color, out + static_cast<size_t>(r) * static_cast<size_t>(window.w) * channels);
  }
}

}  // namespace conveyor::ops
