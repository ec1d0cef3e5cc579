// EXIF orientation (`adjust_orientation`, DALI's argument): reading the tag (libexif) and the eight
// transforms from the stored image to the image as it is meant to be shown.
//
// | value | stored image → shown image          | shown (r, c) reads stored (row, col), H x W stored |
// |-------|-------------------------------------|-----------------------------------------------------|
// | 1     | as stored                           | (r, c)                                              |
// | 2     | mirror left-right                   | (r, W-1-c)                                          |
// | 3     | rotate 180                          | (H-1-r, W-1-c)                                      |
// | 4     | mirror top-bottom                   | (H-1-r, c)                                          |
// | 5     | transpose (about the main diagonal) | (c, r)                                              |
// | 6     | rotate 90 clockwise                 | (H-1-c, r)                                          |
// | 7     | transverse (about the anti-diagonal)| (H-1-c, W-1-r)                                      |
// | 8     | rotate 90 counter-clockwise         | (c, W-1-r)                                          |
//
// 5-8 swap height and width. The values are TIFF's Orientation tag's, which EXIF took over, so a
// TIFF's tag reads the same way. Malformed EXIF (truncated, bogus offsets, an entry of another
// type) and values outside 1-8 are ignored: orientation 1, never an error, as PIL and OpenCV do.
#pragma once

#include <cstddef>
#include <cstdint>

#include "operators/common/crop_window.h"

namespace conveyor::ops {

// The Orientation tag of IFD0 of an EXIF block: "Exif\0\0" followed by a TIFF header and its IFDs
// (a JPEG APP1 segment's payload; a WebP EXIF chunk with the prefix added). 1 when the block has
// none, is malformed, or holds a value outside 1-8. Parsed by libexif; thread-safe.
int ExifOrientation(const uint8_t* exif, size_t size);

// 1-8 as is; anything else 1 (the tag is ignored).
inline int ValidOrientation(int value) { return value >= 1 && value <= 8 ? value : 1; }
inline bool SwapsAxes(int orientation) { return orientation >= 5 && orientation <= 8; }

// The window of the stored (stored_height x stored_width) image whose pixels, transformed by
// `orientation`, are `shown`, a window of the shown image (its h and w swapped for 5-8).
CropWindow StoredWindow(const CropWindow& shown, int64_t stored_height, int64_t stored_width, int orientation);

// The shown image from the stored one: `stored` is height x width x channels, packed; `out` gets
// the transformed image (width x height for 5-8), packed. Applied to a window decoded from
// StoredWindow(shown), it gives the shown window. `stored` and `out` may not overlap.
void OrientPixels(const uint8_t* stored, int64_t height, int64_t width, int channels, int orientation, uint8_t* out);

}  // namespace conveyor::ops
