#include "operators/common/crop_window.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"

namespace conveyor::ops {
namespace {

std::string List(const std::vector<double>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}

}  // namespace

RandomCropParams MakeRandomCropParams(const std::vector<double>& random_area,
                                      const std::vector<double>& random_aspect_ratio, int num_attempts,
                                      const std::string& where) {
  if (random_area.size() != 2 || !(random_area[0] > 0) || !(random_area[0] <= random_area[1]) ||
      !(random_area[1] <= 1)) {
    throw InvalidArgument(where + ": random_area must be [lo, hi] with 0 < lo <= hi <= 1, got " + List(random_area));
  }
  if (random_aspect_ratio.size() != 2 || !(random_aspect_ratio[0] > 0) ||
      !(random_aspect_ratio[0] <= random_aspect_ratio[1]) || !std::isfinite(random_aspect_ratio[1])) {
    throw InvalidArgument(where + ": random_aspect_ratio must be [lo, hi] with 0 < lo <= hi, got " +
                          List(random_aspect_ratio));
  }
  if (num_attempts < 1) {
    throw InvalidArgument(where + ": num_attempts must be at least 1, got " + std::to_string(num_attempts));
  }
  return {random_area[0], random_area[1], random_aspect_ratio[0], random_aspect_ratio[1], num_attempts};
}

CropWindow DrawRandomCropWindow(Philox& rng, int64_t height, int64_t width, const RandomCropParams& p) {
  if (height <= 0 || width <= 0) return {};
  const double image_area = static_cast<double>(height) * static_cast<double>(width);
  const double log_lo = std::log(p.aspect_min), log_hi = std::log(p.aspect_max);
  for (int attempt = 0; attempt < p.num_attempts; ++attempt) {
    const double area = image_area * (p.area_min + (p.area_max - p.area_min) * rng.NextUniform());
    const double aspect = std::exp(log_lo + (log_hi - log_lo) * rng.NextUniform());
    const int64_t w = std::llround(std::sqrt(area * aspect));
    const int64_t h = std::llround(std::sqrt(area / aspect));
    if (w < 1 || h < 1 || w > width || h > height) continue;
    // Offsets from 32-bit draws: the modulo bias is below extent / 2^32.
    const int64_t x = static_cast<int64_t>(rng.NextU32() % static_cast<uint64_t>(width - w + 1));
    const int64_t y = static_cast<int64_t>(rng.NextU32() % static_cast<uint64_t>(height - h + 1));
    return {y, x, h, w};
  }
  // Fallback: the largest centred window whose aspect lies in the range.
  const double image_aspect = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (image_aspect < p.aspect_min) {
    h = std::clamp<int64_t>(std::llround(static_cast<double>(width) / p.aspect_min), 1, height);
  } else if (image_aspect > p.aspect_max) {
    w = std::clamp<int64_t>(std::llround(static_cast<double>(height) * p.aspect_max), 1, width);
  }
  return {(height - h) / 2, (width - w) / 2, h, w};
}

}  // namespace conveyor::ops
