// Per-box and per-point maps behind bb_flip, bbox_paste and coord_transform: plain functions on
// host data, no framework types.
//
// | function        | input                        | output                                   |
// |-----------------|------------------------------|------------------------------------------|
// | FlipBox         | a clipped box (boxes.h)      | the box mirrored in [0, 1]: x -> 1 - x    |
// | PasteBox        | a clipped box                | the box in the canvas `ratio` times larger|
// | TransformPoints | n points of in_dims floats   | n points of out_dims floats: M p + T      |
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "operators/detection/boxes.h"

namespace conveyor::ops {

Box FlipBox(const Box& box, bool horizontal, bool vertical);

// DALI's bbox_paste: the image, `ratio` (>= 1) times smaller than the canvas, is placed at
// paste_x * (canvas width - image width) (0: left edge, 1: right edge), likewise paste_y:
//   x' = x / ratio + paste_x * (1 - 1 / ratio)
// Results are clamped to [0, 1] against rounding.
struct PasteParams {
  double ratio = 1, paste_x = 0.5, paste_y = 0.5;
};
Box PasteBox(const Box& box, const PasteParams& params);

// out = M in + T for points of `in_dims` coordinates: M is out_dims x in_dims, row-major.
struct AffineMap {
  int in_dims = 0, out_dims = 0;
  std::vector<double> m;  // out_dims * in_dims
  std::vector<double> t;  // out_dims
};

// Builds the map from DALI's coord_transform arguments for one sample:
//   M:  [] (identity), [s] (s times identity) or out_dims * in_dims values, row-major;
//   T:  [] (zero), [t] (t in every output coordinate) or out_dims values;
//   MT: [] (unused) or out_dims * (in_dims + 1) values, each row M's row followed by T's entry;
//       exclusive with M and T.
// Throws InvalidArgument "<where>: argument \"M\": expected 1 value or a multiple of 2 (the point
// dimension), got 3" and the like.
AffineMap MakeAffineMap(const std::vector<double>& m, const std::vector<double>& t, const std::vector<double>& mt,
                        int in_dims, const std::string& where);

// `n` points, contiguous; `out` holds n * map.out_dims floats. Computed in double, stored as float.
// Zero entries of M are skipped, so a NaN coordinate makes NaN only the outputs that use it.
void TransformPoints(const float* in, int64_t n, const AffineMap& map, float* out);

}  // namespace conveyor::ops
