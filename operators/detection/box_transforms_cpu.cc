#include <algorithm>

#include "core/error.h"
#include "operators/detection/box_transforms.h"

namespace conveyor::ops {
namespace {

double Clip01(double v) { return std::min(1.0, std::max(0.0, v)); }

std::string Count(size_t n) { return std::to_string(n) + (n == 1 ? " value" : " values"); }

}  // namespace

Box FlipBox(const Box& box, bool horizontal, bool vertical) {
  Box out = box;
  if (horizontal) {
    out.l = 1.0 - box.r;
    out.r = 1.0 - box.l;
  }
  if (vertical) {
    out.t = 1.0 - box.b;
    out.b = 1.0 - box.t;
  }
  return out;
}

Box PasteBox(const Box& box, const PasteParams& params) {
  const double scale = 1.0 / params.ratio;
  const double dx = params.paste_x * (1.0 - scale), dy = params.paste_y * (1.0 - scale);
  return Box{Clip01(box.l * scale + dx), Clip01(box.t * scale + dy), Clip01(box.r * scale + dx),
             Clip01(box.b * scale + dy)};
}

AffineMap MakeAffineMap(const std::vector<double>& m, const std::vector<double>& t, const std::vector<double>& mt,
                        int in_dims, const std::string& where) {
  const size_t d = static_cast<size_t>(in_dims);
  AffineMap map;
  map.in_dims = in_dims;
  if (!mt.empty()) {
    if (!m.empty() || !t.empty()) {
      throw InvalidArgument(where + ": argument \"MT\" cannot be combined with \"M\" or \"T\"");
    }
    if (mt.size() % (d + 1) != 0) {
      throw InvalidArgument(where + ": argument \"MT\": expected a multiple of " + std::to_string(d + 1) +
                            " values (point dimension " + std::to_string(d) + " + 1), got " +
                            std::to_string(mt.size()));
    }
    map.out_dims = static_cast<int>(mt.size() / (d + 1));
    for (size_t row = 0; row < static_cast<size_t>(map.out_dims); ++row) {
      for (size_t col = 0; col < d; ++col) map.m.push_back(mt[row * (d + 1) + col]);
      map.t.push_back(mt[row * (d + 1) + d]);
    }
    return map;
  }
  if (m.empty() || m.size() == 1) {
    map.out_dims = in_dims;
    const double s = m.empty() ? 1.0 : m[0];
    map.m.assign(d * d, 0.0);
    for (size_t i = 0; i < d; ++i) map.m[i * d + i] = s;
  } else {
    if (m.size() % d != 0) {
      throw InvalidArgument(where + ": argument \"M\": expected 1 value or a multiple of " + std::to_string(d) +
                            " (the point dimension), got " + std::to_string(m.size()));
    }
    map.out_dims = static_cast<int>(m.size() / d);
    map.m = m;
  }
  const size_t out = static_cast<size_t>(map.out_dims);
  if (t.empty()) {
    map.t.assign(out, 0.0);
  } else if (t.size() == 1) {
    map.t.assign(out, t[0]);
  } else if (t.size() == out) {
    map.t = t;
  } else {
    throw InvalidArgument(where + ": argument \"T\": expected 1 value or " + Count(out) +
                          " (one per output coordinate), got " + std::to_string(t.size()));
  }
  return map;
}

void TransformPoints(const float* in, int64_t n, const AffineMap& map, float* out) {
  const size_t d = static_cast<size_t>(map.in_dims), o = static_cast<size_t>(map.out_dims);
  for (int64_t p = 0; p < n; ++p) {
    const float* src = in + static_cast<size_t>(p) * d;
    float* dst = out + static_cast<size_t>(p) * o;
    for (size_t row = 0; row < o; ++row) {
      double acc = map.t[row];
      // Zero entries are skipped: a NaN or infinite coordinate reaches only the rows that use it.
      for (size_t col = 0; col < d; ++col) {
        const double coefficient = map.m[row * d + col];
        if (coefficient != 0) acc += coefficient * src[col];
      }
      dst[row] = static_cast<float>(acc);
    }
  }
}

}  // namespace conveyor::ops
