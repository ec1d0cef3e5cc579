#include "tools/testimages/exif_images.h"

#include <libexif/exif-data.h>
#include <libexif/exif-utils.h>
#include <webp/mux.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tools/testimages/format_images.h"

namespace conveyor::testimages {
namespace {

constexpr size_t kExifPrefix = 6;  // "Exif\0\0"

// An ASCII entry owning a malloc'd copy of `text` (libexif frees it with its default allocator).
void AddAscii(ExifContent* ifd, ExifTag tag, const char* text) {
  ExifEntry* entry = exif_entry_new();
  const size_t n = std::strlen(text) + 1;
  entry->tag = tag;
  entry->format = EXIF_FORMAT_ASCII;
  entry->components = n;
  entry->size = static_cast<unsigned int>(n);
  entry->data = static_cast<unsigned char*>(std::malloc(n));
  std::memcpy(entry->data, text, n);
  exif_content_add_entry(ifd, entry);
  exif_entry_unref(entry);
}

uint32_t ReadU32Le(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
void WriteU32Le(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Offset (in the block) of IFD0's Orientation entry of a little-endian block.
size_t OrientationEntry(const std::vector<uint8_t>& block) {
  const size_t ifd = kExifPrefix + ReadU32Le(&block[kExifPrefix + 4]);
  const int count = block[ifd] | (block[ifd + 1] << 8);
  for (int k = 0; k < count; ++k) {
    const size_t entry = ifd + 2 + 12 * static_cast<size_t>(k);
    if ((block[entry] | (block[entry + 1] << 8)) == EXIF_TAG_ORIENTATION) return entry;
  }
  throw std::runtime_error("no Orientation entry in the EXIF block");
}

}  // namespace

std::vector<uint8_t> MakeExifBlock(int orientation, bool big_endian, bool with_camera) {
  ExifData* data = exif_data_new();
  if (data == nullptr) throw std::runtime_error("exif_data_new failed");
  const ExifByteOrder order = big_endian ? EXIF_BYTE_ORDER_MOTOROLA : EXIF_BYTE_ORDER_INTEL;
  exif_data_set_byte_order(data, order);
  exif_data_set_data_type(data, EXIF_DATA_TYPE_COMPRESSED);
  ExifContent* ifd0 = data->ifd[EXIF_IFD_0];
  if (with_camera) {
    AddAscii(ifd0, EXIF_TAG_MAKE, "Conveyor");
    AddAscii(ifd0, EXIF_TAG_MODEL, "orientation test camera");
  }
  ExifEntry* entry = exif_entry_new();
  exif_content_add_entry(ifd0, entry);
  exif_entry_initialize(entry, EXIF_TAG_ORIENTATION);  // one SHORT
  exif_set_short(entry->data, order, static_cast<ExifShort>(orientation));
  exif_entry_unref(entry);
  unsigned char* bytes = nullptr;
  unsigned int size = 0;
  exif_data_save_data(data, &bytes, &size);
  exif_data_unref(data);
  if (bytes == nullptr || size < kExifPrefix) throw std::runtime_error("exif_data_save_data failed");
  std::vector<uint8_t> out(bytes, bytes + size);  // starts with "Exif\0\0"
  std::free(bytes);
  return out;
}

std::vector<uint8_t> InsertApp1(const std::vector<uint8_t>& jpeg, const std::vector<uint8_t>& payload) {
  if (jpeg.size() < 2 || payload.size() + 2 > 0xFFFF) throw std::runtime_error("InsertApp1: bad input");
  const size_t length = payload.size() + 2;
  std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);  // SOI
  out.insert(out.end(), {0xFF, 0xE1, static_cast<uint8_t>(length >> 8), static_cast<uint8_t>(length & 0xFF)});
  out.insert(out.end(), payload.begin(), payload.end());
  out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
  return out;
}

std::vector<uint8_t> MakeOrientedJpeg(int height, int width, int orientation, uint64_t seed) {
  const std::vector<uint8_t> jpeg = EncodeJpeg(MakePhotoLike(height, width, 3, seed), Subsampling::k420, 90, false);
  return orientation == 0 ? jpeg : InsertApp1(jpeg, MakeExifBlock(orientation));
}

std::vector<uint8_t> EncodeWebpWithExif(const Image8& image, const std::vector<uint8_t>& exif) {
  const std::vector<uint8_t> webp = EncodeWebp(image, /*lossless=*/true, 100);
  const WebPData source = {webp.data(), webp.size()};
  WebPMux* mux = WebPMuxCreate(&source, /*copy_data=*/1);
  if (mux == nullptr) throw std::runtime_error("WebPMuxCreate failed");
  const size_t skip = exif.size() >= kExifPrefix && std::memcmp(exif.data(), "Exif\0\0", kExifPrefix) == 0 ? kExifPrefix : 0;
  const WebPData chunk = {exif.data() + skip, exif.size() - skip};
  WebPData assembled;
  WebPDataInit(&assembled);
  const bool ok = WebPMuxSetChunk(mux, "EXIF", &chunk, 1) == WEBP_MUX_OK && WebPMuxAssemble(mux, &assembled) == WEBP_MUX_OK;
  WebPMuxDelete(mux);
  if (!ok) throw std::runtime_error("libwebpmux failed to add the EXIF chunk");
  std::vector<uint8_t> out(assembled.bytes, assembled.bytes + assembled.size);
  WebPDataClear(&assembled);
  return out;
}

std::vector<uint8_t> InsertPngExif(const std::vector<uint8_t>& png, const std::vector<uint8_t>& exif) {
  constexpr size_t kAfterIhdr = 8 + 12 + 13;  // signature, IHDR's length/type/CRC and data
  if (png.size() < kAfterIhdr) throw std::invalid_argument("InsertPngExif: not a PNG");
  const size_t skip = exif.size() >= kExifPrefix && std::memcmp(exif.data(), "Exif\0\0", kExifPrefix) == 0 ? kExifPrefix : 0;
  std::vector<uint8_t> chunk;
  const uint32_t length = static_cast<uint32_t>(exif.size() - skip);
  for (int shift : {24, 16, 8, 0}) chunk.push_back(static_cast<uint8_t>(length >> shift));
  for (char c : std::string("eXIf")) chunk.push_back(static_cast<uint8_t>(c));
  chunk.insert(chunk.end(), exif.begin() + static_cast<std::ptrdiff_t>(skip), exif.end());
  uint32_t crc = 0xFFFFFFFFu;  // over the type and the data
  for (size_t i = 4; i < chunk.size(); ++i) {
    crc ^= chunk[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xFFFFFFFFu;
  for (int shift : {24, 16, 8, 0}) chunk.push_back(static_cast<uint8_t>(crc >> shift));
  std::vector<uint8_t> out(png.begin(), png.begin() + kAfterIhdr);
  out.insert(out.end(), chunk.begin(), chunk.end());
  out.insert(out.end(), png.begin() + kAfterIhdr, png.end());
  return out;
}

std::vector<uint8_t> TruncatedExif(size_t keep) {
  std::vector<uint8_t> block = MakeExifBlock(6);
  block.resize(std::min(keep, block.size()));
  return block;
}

std::vector<uint8_t> ExifWithBogusIfdOffset() {
  std::vector<uint8_t> block = MakeExifBlock(6);
  WriteU32Le(&block[kExifPrefix + 4], 0x7FFFFFF0u);
  return block;
}

std::vector<uint8_t> ExifWithBogusEntryCount() {
  std::vector<uint8_t> block = MakeExifBlock(6);
  const size_t entry = OrientationEntry(block);
  WriteU32Le(&block[entry + 4], 0x40000000u);  // 2^30 SHORTs: far past the block
  return block;
}

std::vector<uint8_t> ExifWithBadByteOrder() {
  std::vector<uint8_t> block = MakeExifBlock(6);
  block[kExifPrefix] = 'X';
  block[kExifPrefix + 1] = 'Y';
  return block;
}

}  // namespace conveyor::testimages
