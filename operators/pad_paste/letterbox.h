// letterbox's geometry (plain functions, no framework types): where a fitted image lands on the
// canvas, and the normalized map that moves boxes the same way.
//
//   scale = min(H / h, W / w);  h' = clamp(round(h * scale), 1, H), w' likewise (round half away
//   from zero; the limiting side is exactly H or W);  centre: oy = floor((H - h') / 2),
//   ox = floor((W - w') / 2);  top_left: oy = ox = 0.
//   Box map (normalized coordinates in, normalized coordinates out):
//     x' = x * sx + ox_n,  y' = y * sy + oy_n,  sx = w' / W, sy = h' / H, ox_n = ox / W, oy_n = oy / H
//   exact for pixel edges: input edge x * w lands on canvas edge x * w' + ox.
// A zero-sized image (h or w 0) fits to 0 x 0 at (0, 0): the canvas is all fill, the map all 0.
#pragma once

#include <array>
#include <cstdint>

namespace conveyor::ops {

enum class LetterboxAlign { kCenter, kTopLeft };

struct LetterboxFit {
  int64_t h = 0, w = 0;    // the fitted image
  int64_t oy = 0, ox = 0;  // its top-left pixel on the canvas
  // [sx, sy, ox_n, oy_n]: x' = x * sx + ox_n, y' = y * sy + oy_n.
  std::array<float, 4> transform{};
};

// in_h x in_w onto canvas_h x canvas_w (both >= 1).
LetterboxFit FitLetterbox(int64_t in_h, int64_t in_w, int64_t canvas_h, int64_t canvas_w, LetterboxAlign align);

// coord_transform's MT (4 x 5, row-major) applying `transform` to boxes [N, 4]: ltrb
// (x0, y0, x1, y1 each moved) or xywh (x, y moved; w, h scaled only).
std::array<float, 20> LetterboxBoxMT(const std::array<float, 4>& transform, bool ltrb);

}  // namespace conveyor::ops
