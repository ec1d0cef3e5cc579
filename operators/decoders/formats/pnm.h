// PNM (PBM, PGM, PPM: P1-P6, plain and raw) through libnetpbm (libnetpbm-dev), the formats'
// reference implementation. Read from memory through fmemopen.
//
// | accepted                                          | rejected (InvalidArgument)                 |
// |---------------------------------------------------|--------------------------------------------|
// | P1/P4 bitmaps (1 black → 0, 0 white → 255), P2/P5 | what libnetpbm refuses ("corrupt or        |
// | gray, P3/P6 RGB; any maxval 1-65535 (scaled to    | unsupported PNM (libnetpbm: ...)"), data   |
// | 0..255: round(v * 255 / maxval))                  | ending early, samples the file cannot hold |
//
// libnetpbm reports errors through one process-wide handler (pm_error → a longjmp buffer set with
// pm_setjmpbuf), so every libnetpbm call here runs under one mutex: PNM decodes do not run in
// parallel with each other (they are rare in datasets; the other formats are unaffected).
// Windows: the rows above the window are read and dropped, the rows below are not read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operators/common/crop_window.h"
#include "operators/decoders/formats/format.h"
#include "operators/decoders/image_info.h"

namespace conveyor::ops {

ImageInfo ParsePnmInfo(const uint8_t* data, size_t size, int64_t max_pixels);
void DecodePnm(const uint8_t* data, size_t size, const ImageInfo& info, OutputColor color, const CropWindow& window,
               uint8_t* out, int64_t max_pixels);

}  // namespace conveyor::ops
