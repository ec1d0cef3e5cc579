// Image headers without decoding: format sniffing, JPEG frame headers (SOF) and PNG IHDR. Setup
// uses them to size the decoders' outputs; parsing touches only the bytes before the first scan.
//
// | format | accepted                                               | rejected (InvalidArgument)        |
// |--------|--------------------------------------------------------|-----------------------------------|
// | JPEG   | 8-bit baseline/extended/progressive (SOF0/1/2, and the | 12-/16-bit precision, lossless and |
// |        | arithmetic-coded SOF9/10), 1 or 3 components, any      | hierarchical SOFs, 2 or 4 (CMYK/   |
// |        | sampling factors                                       | YCCK) components, height from DNL |
// | PNG    | every IHDR combination the PNG spec allows (bit depths | bad signature, IHDR not first or   |
// |        | 1-16, gray/RGB/palette/gray+alpha/RGBA, Adam7)         | invalid, zero sizes               |
// | both   |                                                        | a size the file cannot hold: JPEG  |
// |        |                                                        | under 1 bit per 8x8 block (Huffman)|
// |        |                                                        | PNG over 1032:1 (deflate's most)   |
//
// Messages are bare reasons ("truncated JPEG header: no frame header (SOF) in 120 bytes"); the
// operator prefixes the node and sample.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace conveyor::ops {

enum class ImageFormat { kUnknown, kJpeg, kPng };

enum class ChromaSubsampling { kNone, k444, k422, k420, k440, k411, kGray, kOther };
std::string ChromaSubsamplingName(ChromaSubsampling s);  // "4:2:0", "gray", ...

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int64_t height = 0;
  int64_t width = 0;
  int components = 0;  // JPEG: frame components; PNG: channels after palette expansion (palette: 3)
  // JPEG only.
  ChromaSubsampling subsampling = ChromaSubsampling::kNone;
  bool progressive = false;
  bool arithmetic = false;
  // PNG only.
  int bit_depth = 0;
  int color_type = -1;  // IHDR colour type: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
  bool interlaced = false;

  // "JPEG 500x375, 3 components, 4:2:0, progressive" / "PNG 17x9, RGBA, 16-bit".
  std::string Describe() const;
};

// kUnknown when the bytes start with neither signature.
ImageFormat SniffFormat(const uint8_t* data, size_t size);

// "3C 68 74 6D": the first bytes (up to 4) in hex, for "not a JPEG or PNG" messages.
std::string LeadingBytesHex(const uint8_t* data, size_t size);

// Parses the header of a JPEG or PNG. Throws InvalidArgument with the bare reason: empty input,
// unknown format, truncated or malformed header, unsupported variant (see the table above).
ImageInfo ParseImageInfo(const uint8_t* data, size_t size);

}  // namespace conveyor::ops
