// BMP through stb_image (libstb-dev: Debian builds stb as a shared library, libstb.so.0). Chosen
// over the other Debian libraries that read BMP — gdk-pixbuf (GLib, a loader per format),
// FreeImage and DevIL (large, rarely updated), GraphicsMagick/ImageMagick (whole toolkits) — for
// being small, dependency-free, reentrant (its failure reason is thread-local) and widely used on
// untrusted input; its header read (stbi_info_from_memory) gives the size without decoding.
//
// | accepted                                         | rejected (InvalidArgument)                  |
// |--------------------------------------------------|---------------------------------------------|
// | BITMAPINFOHEADER and later (V4/V5), 1/4/8-bit    | RLE4/RLE8 and other compressions ("unsup-   |
// | palette, 16/24/32-bit (BI_RGB, BI_BITFIELDS),    | ported BMP: RLE8 compression"), OS/2 1.x     |
// | bottom-up and top-down; alpha dropped            | headers stb refuses, pixel data the file     |
// |                                                  | cannot hold                                 |
//
// The file's header is read here only as far as the size check needs: the compression (stb
// reads past the end of a truncated file as zeros, so truncated pixel data must be found before
// decoding) and the offset of the pixel data. Windows: stb decodes the whole image; the window is
// copied out.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operators/common/crop_window.h"
#include "operators/decoders/formats/format.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

ImageInfo ParseBmpInfo(const uint8_t* data, size_t size, int64_t max_pixels);
void DecodeBmp(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
               uint8_t* out, int64_t max_pixels);

}  // namespace conveyor::ops
