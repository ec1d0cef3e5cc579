#include "operators/pad_paste/letterbox.h"

#include <algorithm>
#include <cmath>

namespace conveyor::ops {

LetterboxFit FitLetterbox(int64_t in_h, int64_t in_w, int64_t canvas_h, int64_t canvas_w, LetterboxAlign align) {
  LetterboxFit f;
  if (in_h <= 0 || in_w <= 0) return f;
  const double ch = static_cast<double>(canvas_h), cw = static_cast<double>(canvas_w);
  const double scale = std::min(ch / static_cast<double>(in_h), cw / static_cast<double>(in_w));
  f.h = std::clamp<int64_t>(std::llround(static_cast<double>(in_h) * scale), 1, canvas_h);
  f.w = std::clamp<int64_t>(std::llround(static_cast<double>(in_w) * scale), 1, canvas_w);
  if (align == LetterboxAlign::kCenter) {
    f.oy = (canvas_h - f.h) / 2;
    f.ox = (canvas_w - f.w) / 2;
  }
  f.transform = {static_cast<float>(static_cast<double>(f.w) / cw), static_cast<float>(static_cast<double>(f.h) / ch),
                 static_cast<float>(static_cast<double>(f.ox) / cw), static_cast<float>(static_cast<double>(f.oy) / ch)};
  return f;
}

std::array<float, 20> LetterboxBoxMT(const std::array<float, 4>& t, bool ltrb) {
  const float sx = t[0], sy = t[1], ox = t[2], oy = t[3];
  const float ox2 = ltrb ? ox : 0.0f, oy2 = ltrb ? oy : 0.0f;
  return {sx, 0, 0, 0, ox,    //
          0,  sy, 0, 0, oy,   //
          0,  0, sx, 0, ox2,  //
          0,  0, 0, sy, oy2};
}

}  // namespace conveyor::ops
