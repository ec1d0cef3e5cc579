// Image headers without decoding: format sniffing (magic bytes), JPEG frame headers (SOF) and PNG
// IHDR here, the other formats through their libraries' header reads (formats/*.h), and the EXIF
// orientation (JPEG's APP1 "Exif" segment found here, parsed by libexif: orientation.h). Setup
// uses them to size the decoders' outputs; parsing touches only the header bytes.
//
// | format | accepted                                               | rejected (InvalidArgument)        |
// |--------|--------------------------------------------------------|-----------------------------------|
// | JPEG   | 8-bit baseline/extended/progressive (SOF0/1/2, and the | 12-/16-bit precision, lossless and |
// |        | arithmetic-coded SOF9/10), 1, 3 or 4 (CMYK/YCCK)       | hierarchical SOFs, 2 components,   |
// |        | components, any sampling factors                       | height from DNL                    |
// | PNG    | every IHDR combination the PNG spec allows (bit depths | bad signature, IHDR not first or   |
// |        | 1-16, gray/RGB/palette/gray+alpha/RGBA, Adam7)         | invalid, zero sizes               |
// | TIFF, WebP, PNM, BMP, JPEG 2000: see formats/tiff.h, webp.h, pnm.h, bmp.h, jpeg2000.h            |
// | all    |                                                        | a size the file cannot hold: JPEG  |
// |        |                                                        | under 1 bit per 8x8 block (Huffman)|
// |        |                                                        | PNG over 1032:1 (deflate's most);  |
// |        |                                                        | any format: more than max_pixels   |
// |        |                                                        | (the decoders' argument, default   |
// |        |                                                        | 2^28: kDefaultMaxPixels, format.h) |
//
// Messages are bare reasons ("truncated JPEG header: no frame header (SOF) in 120 bytes"); the
// operator prefixes the node and sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "operators/decoders/formats/format.h"

namespace conveyor::ops {

// Chosen from the content (SniffFormat), never from a file name.
enum class ImageFormat { kUnknown, kJpeg, kPng, kTiff, kWebp, kPnm, kBmp, kJpeg2000 };
// "JPEG", "PNG", "TIFF", "WebP", "PNM", "BMP", "JPEG2000" (image_formats.h's names); "unknown".
const char* ImageFormatName(ImageFormat format);

enum class ChromaSubsampling { kNone, k444, k422, k420, k440, k411, kGray, kOther };
std::string ChromaSubsamplingName(ChromaSubsampling s);  // "4:2:0", "gray", ...

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int64_t height = 0;
  int64_t width = 0;
  // JPEG: frame components; PNG, TIFF, BMP: channels after palette expansion (palette: 3); WebP:
  // 3 or 4 (alpha); PNM: 1 (PBM, PGM) or 3 (PPM); JPEG 2000: codestream components.
  int components = 0;
  // JPEG only.
  ChromaSubsampling subsampling = ChromaSubsampling::kNone;
  bool progressive = false;
  bool arithmetic = false;
  int adobe_transform = -1;  // the APP14 "Adobe" marker's transform (0, 1, 2 YCCK); -1: no marker
  // A baseline frame (SOF0) in the layouts every JPEG decoder takes: gray, or YCbCr with chroma
  // factors 1x1 and luma 1x1 (4:4:4), 2x1 (4:2:2) or 2x2 (4:2:0). The GPU decoder trusts these to
  // its hardware engines without nvJPEG's per-image support check (docs/decoding.md).
  bool jpeg_common_layout = false;
  // PNG, TIFF, PNM (maxval's bits), JPEG 2000: bits per sample.
  int bit_depth = 0;
  // PNG only.
  int color_type = -1;  // IHDR colour type: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
  bool interlaced = false;
  // The other formats: their variant for Describe ("RGB, LZW, tiled", "lossless, alpha", "P6").
  std::string detail;
  // EXIF orientation (orientation.h), 1-8: JPEG's APP1 Exif segment, TIFF's Orientation tag, WebP's
  // EXIF chunk, PNG's eXIf chunk; 1 for the other formats and when absent, malformed or out of range. height and
  // width above are the stored image's; decoders with adjust_orientation show the image turned.
  int orientation = 1;

  // "JPEG 500x375, 3 components, 4:2:0, progressive" / "PNG 17x9, RGBA, 16-bit".
  std::string Describe() const;
};

// kUnknown when the bytes start with neither signature.
ImageFormat SniffFormat(const uint8_t* data, size_t size);

// "3C 68 74 6D": the first bytes (up to 4) in hex, for "not a decodable image" messages.
std::string LeadingBytesHex(const uint8_t* data, size_t size);

// "not a decodable image: no JPEG, PNG, ... signature (starts with 3C 68 74 6D, 39 bytes)".
std::string NotAnImage(const uint8_t* data, size_t size);

// Parses the header of any format above (formats/*.h for the others). Throws InvalidArgument with
// the bare reason: empty input, unknown format, truncated or malformed header, unsupported variant,
// a declared size over `max_pixels` (checked first, before the size-against-file checks: "JPEG
// frame header claims 20000x20000 (400000000 pixels), more than max_pixels (268435456): ...").
ImageInfo ParseImageInfo(const uint8_t* data, size_t size, int64_t max_pixels = kDefaultMaxPixels);

}  // namespace conveyor::ops
