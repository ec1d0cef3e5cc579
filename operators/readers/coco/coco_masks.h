// COCO segmentation → label maps: the RLE string decoder and the two painters readers.coco's
// pixelwise_masks uses. Written from the COCO format's documentation:
//
// - RLE counts run over the image in column-major order (pixel (x, y) of an h x w image is
//   position x * h + y), alternating runs of 0s and 1s, starting with 0s (a mask that starts with
//   a 1 has a first run of length 0). The runs sum to h * w.
// - The compressed form writes each run as a little-endian sequence of 6-bit groups, each a
//   character (value + 48): 5 bits of the number, bit 0x20 = more groups follow; the last group's
//   bit 0x10 is the sign (the number is sign-extended). Runs from the fourth on (index 3, 4, ...)
//   are stored as the difference from the run two before.
// - Polygons are x0, y0, x1, y1, ... in pixels. A pixel belongs to a polygon when its centre
//   (x + 0.5, y + 0.5) is inside by the even-odd rule (an edge crossing counts when its end points
//   lie on either side of the centre's row, one strictly above: (y1 > cy) != (y2 > cy)); the
//   polygons of one annotation are united.
//
// Label maps are row-major int32 [h, w]; painting writes `value` where the mask is set, so later
// annotations overwrite earlier ones.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace conveyor::ops::coco {

// Appends the runs of a compressed RLE string to `counts`. "" or why not (a character outside
// '0'..'o', a number cut short or longer than 64 bits, a run that comes out negative or above
// 2^32-1).
std::string DecodeRleString(std::string_view text, std::vector<uint32_t>& counts);

// "" when `counts` covers exactly h * w pixels, else what they sum to.
std::string CheckRleSize(const uint32_t* counts, size_t num_counts, int64_t height, int64_t width);

// Writes `value` into `map` (row-major [height, width]) where the RLE's runs of 1s lie. The runs
// must have passed CheckRleSize for this size.
void PaintRle(const uint32_t* counts, size_t num_counts, int64_t height, int64_t width, int32_t value, int32_t* map);

// Writes `value` where pixel centres lie inside the polygon of `num_floats / 2` vertices (even-odd
// rule, see above); parts outside the map are clipped. Fewer than 3 vertices paint nothing.
void PaintPolygon(const float* xy, size_t num_floats, int64_t height, int64_t width, int32_t value, int32_t* map);

}  // namespace conveyor::ops::coco
