#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/op/schema.h"
#include "operators/resize/resize.h"

namespace conveyor::ops {
namespace {

int64_t Side(double v) { return std::max<int64_t>(1, std::llround(v)); }

std::string List(const std::vector<double>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}

}  // namespace

OpSchema& AddResizeSizeArgs(OpSchema& schema, const std::string& noun) {
  const bool output = noun == "Output";
  const std::string lower = output ? "the output" : "the " + std::string(1, static_cast<char>(std::tolower(noun[0]))) +
                                                        noun.substr(1) + " image";
  return schema
      .Arg<std::vector<double>>("size", std::vector<double>{},
                                noun + " [h, w] (HW order, as the layout); a 0 side keeps the aspect ratio.",
                                PerSample::kAllowed)
      .Min(0)
      .Arg<double>("resize_x", 0.0, noun + " width; alone, the height keeps the aspect ratio. 0: not given.",
                   PerSample::kAllowed)
      .Min(0)
      .Arg<double>("resize_y", 0.0, noun + " height; alone, the width keeps the aspect ratio. 0: not given.",
                   PerSample::kAllowed)
      .Min(0)
      .Arg<double>("resize_shorter", 0.0,
                   (output ? std::string("Length") : noun + " length") +
                       " of the shorter side; aspect ratio kept. 0: not given.",
                   PerSample::kAllowed)
      .Min(0)
      .Arg<double>("resize_longer", 0.0,
                   (output ? std::string("Length") : noun + " length") +
                       " of the longer side; aspect ratio kept. 0: not given.",
                   PerSample::kAllowed)
      .Min(0)
      .Arg<std::vector<double>>("max_size", std::vector<double>{},
                                "Limit [m] or [h, w] on " + lower + "; aspect-keeping modes shrink to fit.")
      .Min(0);
}

std::pair<int64_t, int64_t> ResizeOutputSize(int64_t in_h, int64_t in_w, const ResizeSizeArgs& a,
                                             const std::function<std::string()>& where) {
  if (!a.size.empty() && a.size.size() != 2) {
    throw InvalidArgument(where() + ": size must be [h, w], got " + List(a.size));
  }
  for (double v : a.size) {
    if (!(v >= 0)) throw InvalidArgument(where() + ": size must not be negative, got " + List(a.size));
  }
  for (auto [name, v] : {std::pair{"resize_x", a.resize_x}, std::pair{"resize_y", a.resize_y},
                         std::pair{"resize_shorter", a.resize_shorter}, std::pair{"resize_longer", a.resize_longer}}) {
    if (!(v >= 0)) {
      std::ostringstream s;
      s << where() << ": " << name << " must not be negative, got " << v;
      throw InvalidArgument(s.str());
    }
  }
  const bool by_size = !a.size.empty() && (a.size[0] > 0 || a.size[1] > 0);
  const bool by_xy = a.resize_x > 0 || a.resize_y > 0;
  const bool by_shorter = a.resize_shorter > 0, by_longer = a.resize_longer > 0;
  const int modes = by_size + by_xy + by_shorter + by_longer;
  if (modes != 1) {
    throw InvalidArgument(where() + ": give exactly one of size, resize_x/resize_y, resize_shorter, resize_longer; got " +
                          (modes == 0 ? std::string("none") : std::to_string(modes) + " of them"));
  }
  double want_h = 0, want_w = 0;  // 0: follows the aspect ratio
  if (by_size) {
    want_h = a.size[0];
    want_w = a.size[1];
  } else if (by_xy) {
    want_h = a.resize_y;
    want_w = a.resize_x;
  }
  const double h = static_cast<double>(in_h), w = static_cast<double>(in_w);
  double max_h = 0, max_w = 0;
  if (a.max_size.size() == 1) {
    max_h = max_w = a.max_size[0];
  } else if (a.max_size.size() == 2) {
    max_h = a.max_size[0];
    max_w = a.max_size[1];
  } else if (!a.max_size.empty()) {
    throw InvalidArgument(where() + ": max_size must be [m] or [h, w], got " + List(a.max_size));
  }
  if (want_h > 0 && want_w > 0) {
    if (max_h > 0) want_h = std::min(want_h, max_h);
    if (max_w > 0) want_w = std::min(want_w, max_w);
    return {Side(want_h), Side(want_w)};
  }
  double scale;
  if (want_h > 0) {
    scale = want_h / h;
  } else if (want_w > 0) {
    scale = want_w / w;
  } else if (by_shorter) {
    scale = a.resize_shorter / std::min(h, w);
  } else {
    scale = a.resize_longer / std::max(h, w);
  }
  if (max_h > 0) scale = std::min(scale, max_h / h);
  if (max_w > 0) scale = std::min(scale, max_w / w);
  // A side that was given stays exact (unless max_size cut it); the other is rounded.
  const int64_t out_h = want_h > 0 && !(max_h > 0 && want_h > max_h) ? Side(want_h) : Side(h * scale);
  const int64_t out_w = want_w > 0 && !(max_w > 0 && want_w > max_w) ? Side(want_w) : Side(w * scale);
  return {out_h, out_w};
}

}  // namespace conveyor::ops
