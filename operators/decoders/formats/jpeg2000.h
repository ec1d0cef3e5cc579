// JPEG 2000 through OpenJPEG (libopenjp2-7-dev): JP2 files and raw J2K codestreams.
//
// | accepted                                         | rejected (InvalidArgument)                  |
// |--------------------------------------------------|---------------------------------------------|
// | 1 (gray), 2 (gray+alpha), 3 (RGB), 4 (RGBA)      | other component counts, subsampled          |
// | components of 1-16 bits, signed or not, lossless | components (dx/dy > 1), sYCC/e-YCC/CMYK     |
// | (5/3) or lossy (9/7), tiled or not               | colour spaces, what OpenJPEG refuses; a     |
// |                                                  | tile count the file cannot hold (each tile  |
// |                                                  | needs a 14-byte SOT + SOD at least)          |
//
// Samples become 8-bit as round(v * 255 / (2^bits - 1)) (signed ones offset by 2^(bits-1) first);
// alpha is dropped. The image and tile sizes are read from the SIZ marker segment here (the only
// header parsing of our own) before OpenJPEG sees the file: opj_read_header allocates per-tile
// state for every tile the header declares. Windows: opj_set_decode_area, so only the code blocks
// under the window are decoded.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operators/common/crop_window.h"
#include "operators/decoders/formats/format.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

ImageInfo ParseJpeg2000Info(const uint8_t* data, size_t size, int64_t max_pixels);
void DecodeJpeg2000(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color,
                    const CropWindow& window, uint8_t* out, int64_t max_pixels);

}  // namespace conveyor::ops
