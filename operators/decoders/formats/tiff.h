// TIFF through libtiff (libtiff-dev), read from memory (TIFFClientOpenExt with per-handle error
// handlers, so decoding is thread-safe and libtiff's messages end up in our errors).
//
// | accepted                                          | rejected (InvalidArgument)                 |
// |---------------------------------------------------|--------------------------------------------|
// | what TIFFRGBAImage takes: 1/2/4/8/16-bit gray     | what TIFFRGBAImageOK refuses (32-bit or     |
// | (min-is-black/white), RGB, RGBA, palette, CMYK,   | float samples, odd photometrics):           |
// | YCbCr; strips or tiles, contiguous or planar;     | "unsupported TIFF: <libtiff's reason>";     |
// | compressions none, LZW, deflate, PackBits, JPEG   | a compression libtiff was built without;    |
// | (whatever this libtiff has); the first page of a  | uncompressed strips the file cannot hold;   |
// | multi-page file                                   | more than max_pixels; tiled 16-bit         |
// |                                                   | gray or gray+alpha with partial tiles       |
//
// Decoding: TIFFRGBAImageGet from the window's first row for its height, so only the strips or
// tiles holding the window's rows are read and decompressed (full-width rows: TIFFRGBAImage's
// column offset is wrong for 1-bit, 16-bit and planar layouts). 16-bit colour samples become
// round(v * 255 / 65535) (libtiff's table, as PNG's png_set_scale_16), 16-bit gray ones v >> 8
// (libtiff's gray map); alpha is dropped (colour as stored, never premultiplied); CMYK is
// libtiff's conversion, (255 - C)(255 - K) / 255 truncated (within 1 of format.h's rounded one).
// Samples as stored (top row first) whatever the Orientation tag, which ParseTiffInfo reads into
// ImageInfo::orientation for the decoders' adjust_orientation (orientation.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "operators/common/crop_window.h"
#include "operators/decoders/formats/format.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

ImageInfo ParseTiffInfo(const uint8_t* data, size_t size, int64_t max_pixels);
void DecodeTiff(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
                uint8_t* out, int64_t max_pixels);

}  // namespace conveyor::ops
