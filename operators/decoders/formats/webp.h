// WebP through libwebp (libwebp-dev): lossy (VP8), lossless (VP8L) and extended (VP8X) files with
// or without alpha.
//
// | accepted                                        | rejected (InvalidArgument)                    |
// |-------------------------------------------------|-----------------------------------------------|
// | still images, lossy or lossless, alpha or not   | animations ("unsupported WebP: animated"),     |
// | (alpha dropped, like PNG's)                     | headers libwebp refuses, truncated data       |
//
// A frame is at most 16383x16383, just under the default max_pixels (2^28); an extended (VP8X)
// header's canvas may claim up to 2^24 a side and is held to max_pixels too. Windows: the whole
// image is decoded and the window copied out (libwebp's cropping snaps to even coordinates and
// re-runs the upsampler at the edges, so its pixels would differ from a full decode's). An extended file's EXIF chunk
// (found by libwebpdemux, read by libexif) gives ImageInfo::orientation; XMP is not read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operators/common/crop_window.h"
#include "operators/decoders/formats/format.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

ImageInfo ParseWebpInfo(const uint8_t* data, size_t size, int64_t max_pixels);
void DecodeWebp(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
                uint8_t* out, int64_t max_pixels);

}  // namespace conveyor::ops
