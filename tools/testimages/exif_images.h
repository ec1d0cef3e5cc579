// EXIF-oriented test files: an EXIF block written by libexif (exif_data_save_data) with IFD0's
// Orientation tag, put into a TurboJPEG-encoded JPEG as an APP1 segment or into a WebP as its EXIF
// chunk (libwebpmux), and damaged blocks for the "malformed EXIF is ignored" tests. TIFFs carry
// the tag natively (format_images.h's TiffSource::orientation).
#pragma once

#include <cstdint>
#include <vector>

#include "tools/testimages/test_images.h"

namespace conveyor::testimages {

// "Exif\0\0" + TIFF header + IFD0 holding Orientation = `orientation` (any 16-bit value, so 0 and
// 9 can be written too) and, with `with_camera`, Make/Model strings (a realistic block with
// several entries and offsets). Big-endian ("MM") or little-endian ("II").
std::vector<uint8_t> MakeExifBlock(int orientation, bool big_endian = false, bool with_camera = true);

// `jpeg` with an APP1 segment holding `payload` (an EXIF block, or any bytes) right after SOI.
std::vector<uint8_t> InsertApp1(const std::vector<uint8_t>& jpeg, const std::vector<uint8_t>& payload);

// A photo-like height x width JPEG (4:2:0, q90, TurboJPEG) tagged with `orientation`
// (0: no EXIF segment).
std::vector<uint8_t> MakeOrientedJpeg(int height, int width, int orientation, uint64_t seed = 7);

// A lossless WebP of `image` (3 channels) with `exif` as its EXIF chunk (libwebpmux; the chunk
// holds the block without JPEG's "Exif\0\0" prefix, as the WebP container specifies).
std::vector<uint8_t> EncodeWebpWithExif(const Image8& image, const std::vector<uint8_t>& exif);

// `png` (libpng-encoded) with an eXIf chunk holding `exif` (its "Exif\0\0" prefix dropped, as the PNG
// extension specifies) right after IHDR; the chunk's CRC-32 computed here (ISO 3309, PNG's).
std::vector<uint8_t> InsertPngExif(const std::vector<uint8_t>& png, const std::vector<uint8_t>& exif);

// Damaged EXIF blocks around an Orientation 6 tag: cut at `keep` bytes; IFD0's offset pointing
// past the end; the Orientation entry's value offset / count made bogus; a TIFF header that is
// neither "II" nor "MM".
std::vector<uint8_t> TruncatedExif(size_t keep);
std::vector<uint8_t> ExifWithBogusIfdOffset();
std::vector<uint8_t> ExifWithBogusEntryCount();
std::vector<uint8_t> ExifWithBadByteOrder();

}  // namespace conveyor::testimages
