// CPU image decoding: libjpeg-turbo (libjpeg API) and libpng, one sample at a time, straight into
// the caller's HWC uint8 buffer. Plain functions: decoders.image runs them per sample on the CPU
// stage, and the GPU backend calls them for images nvJPEG refuses.
//
// | source                           | RGB / BGR output               | GRAY output                      |
// |----------------------------------|--------------------------------|----------------------------------|
// | JPEG YCbCr (any subsampling)     | libjpeg colour conversion      | the Y channel (libjpeg)          |
// |                                  | (JCS_EXT_RGB / JCS_EXT_BGR)    |                                  |
// | JPEG grayscale                   | gray replicated (libjpeg)      | as is                            |
// | PNG gray / gray+alpha            | gray replicated                | as is                            |
// | PNG RGB / RGBA / palette         | as is (palette expanded)       | Y = .299 R + .587 G + .114 B     |
// | PNG alpha, tRNS                  | dropped                        | dropped                          |
// | PNG 16-bit                       | round(v * 255 / 65535) (png_set_scale_16) before the above       |
// | PNG 1/2/4-bit gray               | scaled to 8 bits (0..255)      |                                  |
//
// No gamma or ICC handling: samples are taken as stored. JPEG: the default accurate integer IDCT
// and fancy (smooth) upsampling.
//
// Errors (InvalidArgument, bare reasons — the operator adds node and sample):
//   - libjpeg's fatal errors, with its message ("libjpeg: Unsupported marker type 0x02");
//   - libjpeg's "Premature end of JPEG file" warning → "truncated JPEG data": a truncated file
//     would otherwise decode with its missing rows grey;
//   - libjpeg's corrupt-data warnings (bad Huffman code, hit marker, resync, bogus progression)
//     → "corrupt JPEG data (libjpeg: ...)"; other warnings (extraneous bytes, unknown JFIF
//     version) are ignored, since real-world files often carry them and decode fine;
//   - libpng's errors with its message; data ending early → "truncated PNG data".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "operators/common/crop_window.h"
#include "operators/decoders/formats/format.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

// OutputColor and OutputChannels: formats/format.h.
// "RGB", "BGR", "GRAY"; InvalidArgument on anything else (the schema's Choices reject it first).
OutputColor ParseOutputColor(std::string_view name);

// Decodes the `window` (inside info.height x info.width) of the image `data` into `out`:
// window.h rows of window.w * OutputChannels(color) bytes, packed. `info` is ParseImageInfo's
// result for the same bytes. JPEG windows use jpeg_crop_scanline + jpeg_skip_scanlines, so rows
// above the window are only entropy-decoded, columns left/right of it (beyond the iMCU containing
// its edge) not at all, and nothing below it is touched; PNG windows decode rows up to the
// window's bottom. Thread-safe (no shared state).
void DecodeImageCpu(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                    const CropWindow& window, uint8_t* out);

// The whole image.
inline CropWindow FullWindow(const ImageInfo& info) { return CropWindow{0, 0, info.height, info.width}; }

}  // namespace conveyor::ops
