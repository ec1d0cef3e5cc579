// CPU image decoding: libjpeg-turbo (libjpeg API) and libpng here, the other formats through their
// Debian libraries in formats/ (libtiff, libwebp, libnetpbm, stb_image, OpenJPEG), one sample at a
// time, straight into the caller's HWC uint8 buffer. Plain functions: decoders.image runs them per
// sample on the CPU stage, and the GPU backend calls them for images nvJPEG is not given.
//
// | source                           | RGB / BGR output               | GRAY output                      |
// |----------------------------------|--------------------------------|----------------------------------|
// | JPEG YCbCr (any subsampling)     | libjpeg colour conversion      | the Y channel (libjpeg)          |
// |                                  | (JCS_EXT_RGB / JCS_EXT_BGR)    |                                  |
// | JPEG grayscale                   | gray replicated (libjpeg)      | as is                            |
// | JPEG CMYK / YCCK (4 components)  | libjpeg's JCS_CMYK (YCCK → CMYK | L of the RGB: (19595 R + 38470 G |
// |                                  | by libjpeg), inverted when an  | + 7471 B + 32768) >> 16 (PIL's)  |
// |                                  | Adobe APP14 marker is present; |                                  |
// |                                  | R = (255-C)(255-K)/255 rounded |                                  |
// |                                  | (PIL's cmyk2rgb, = OpenCV/DALI)|                                  |
// | PNG gray / gray+alpha            | gray replicated                | as is                            |
// | PNG RGB / RGBA / palette         | as is (palette expanded)       | Y = .299 R + .587 G + .114 B     |
// | PNG alpha, tRNS                  | dropped                        | dropped                          |
// | PNG 16-bit                       | round(v * 255 / 65535) (png_set_scale_16) before the above       |
// | PNG 1/2/4-bit gray               | scaled to 8 bits (0..255)      |                                  |
// | TIFF, WebP, PNM, BMP, JPEG 2000  | formats/format.h: gray replicated, alpha dropped, samples scaled |
// |                                  | to 8 bits; GRAY from colour by PIL's L (above); see each header  |
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
//   - libpng's errors with its message; data ending early → "truncated PNG data";
//   - the other formats: "corrupt or unsupported <format> (<library>: <its message>)",
//     "truncated <format> data (...)" (formats/*.h).
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
// its edge) not at all, and nothing below it is touched; PNG and PNM windows decode rows up to the
// window's bottom; TIFF reads only the strips/tiles from the window's first row down; JPEG 2000
// decodes the window's area; WebP and BMP decode the whole image and copy the window. Every window
// equals the full decode cropped. Thread-safe (PNM decodes take one process-wide lock: pnm.h).
// `max_pixels` (the decoders' argument): info's size and each library's own read of the header
// (libjpeg, libpng, libtiff, libwebp, libnetpbm, stb_image, OpenJPEG) are held to it before
// anything is allocated from them, so bytes whose header reader was bypassed cannot ask for more.
void DecodeImageCpu(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                    const CropWindow& window, uint8_t* out, int64_t max_pixels = kDefaultMaxPixels);

// The whole image.
inline CropWindow FullWindow(const ImageInfo& info) { return CropWindow{0, 0, info.height, info.width}; }

// As DecodeImageCpu, for the image shown turned by `orientation` (orientation.h; 1: as stored):
// `window` lies in the shown image (info.width x info.height for 5-8). The stored window under it
// (StoredWindow) is decoded as above into a scratch buffer and transformed (OrientPixels), so it
// reads only what that window decode reads. Orientation 1 is DecodeImageCpu.
void DecodeOrientedImageCpu(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                            int orientation, const CropWindow& window, uint8_t* out,
                            int64_t max_pixels = kDefaultMaxPixels);

// The whole shown image: info's size, height and width swapped for orientations 5-8.
CropWindow OrientedFullWindow(const ImageInfo& info, int orientation);

}  // namespace conveyor::ops
