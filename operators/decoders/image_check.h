// Structural checks of encoded images, without decoding: what `on_error: skip` runs on every file
// before it enters a batch, and what the decoders' Setup runs on every sample, so a truncated or
// damaged file is found on the host before any decoder (nvJPEG's hardware engines may not report
// truncation) sees it.
//
// | format | checked                                                | found                              |
// |--------|--------------------------------------------------------|------------------------------------|
// | all    | the header (ParseImageInfo)                            | empty, not an image, unsupported,  |
// |        |                                                        | truncated/malformed header, a size |
// |        |                                                        | over max_pixels (the decoder's)    |
// | JPEG   | every marker segment up to EOI (FF D9); scan data is   | truncation anywhere (no EOI),      |
// |        | walked byte-stuffing-aware (FF 00, RSTn, fill bytes)   | segments cut off, markers that are |
// |        |                                                        | not JPEG markers, no scan          |
// | PNG    | every chunk up to IEND: lengths and CRC-32             | truncation anywhere, any changed   |
// |        |                                                        | byte (CRC), no IDAT                |
// | others | the header only (TIFF, WebP, PNM, BMP, JPEG 2000: the  | what their header reads find; data |
// |        | sizes against the file where a bound exists)           | damage is found by the decode      |
//
// Not found: JPEG entropy-coded data damaged in a way that keeps its structure (JPEG has no
// checksum); the decoder finds some of it (libjpeg's corrupt-data warnings are errors), the rest
// decodes to wrong pixels. Bytes after EOI / IEND are ignored (real files carry trailers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "operators/decoders/image_info.h"

namespace conveyor::ops {

// "" when `data` passes the table above, else the bare reason ("truncated JPEG data: ...",
// "corrupt PNG data: ...", or ParseImageInfo's message). `max_pixels`: the decoder's argument, so
// on_error: skip drops exactly the files its Setup would refuse. Thread-safe.
std::string CheckEncodedImage(const uint8_t* data, size_t size, int64_t max_pixels = kDefaultMaxPixels);

// The structure part alone, for bytes whose header `info` already parsed.
std::string CheckImageStructure(const uint8_t* data, size_t size, const ImageInfo& info);

}  // namespace conveyor::ops
