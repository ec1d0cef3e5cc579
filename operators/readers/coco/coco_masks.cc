#include "operators/readers/coco/coco_masks.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace conveyor::ops::coco {

std::string DecodeRleString(std::string_view text, std::vector<uint32_t>& counts) {
  const size_t first = counts.size();
  size_t p = 0;
  while (p < text.size()) {
    const size_t start = p;
    uint64_t value = 0;
    int shift = 0;
    bool more = true;
    while (more) {
      if (p >= text.size()) return "run " + std::to_string(counts.size() - first) + " is cut short at character " + std::to_string(start);
      const int c = static_cast<unsigned char>(text[p]) - 48;
      if (c < 0 || c > 63) {
        return "character " + std::to_string(p) + " ('" + std::string(1, text[p]) + "') is not an RLE digit ('0'..'o')";
      }
      if (shift >= 64) return "run " + std::to_string(counts.size() - first) + " is longer than 64 bits";
      value |= static_cast<uint64_t>(c & 0x1f) << shift;
      more = (c & 0x20) != 0;
      shift += 5;
      ++p;
      if (!more && (c & 0x10) != 0 && shift < 64) value |= ~uint64_t{0} << shift;  // sign extension
    }
    auto run = static_cast<int64_t>(value);
    const size_t index = counts.size() - first;
    if (index > 2) run += counts[counts.size() - 2];
    if (run < 0 || run > std::numeric_limits<uint32_t>::max()) {
      return "run " + std::to_string(index) + " decodes to " + std::to_string(run) + " (expected 0 to 2^32-1)";
    }
    counts.push_back(static_cast<uint32_t>(run));
  }
  return "";
}

std::string CheckRleSize(const uint32_t* counts, size_t num_counts, int64_t height, int64_t width) {
  uint64_t sum = 0;
  for (size_t i = 0; i < num_counts; ++i) sum += counts[i];  // < 2^32 runs of < 2^32: no overflow
  const auto want = static_cast<uint64_t>(height) * static_cast<uint64_t>(width);
  if (sum == want) return "";
  return "the runs cover " + std::to_string(sum) + " pixels, expected height * width = " + std::to_string(want);
}

void PaintRle(const uint32_t* counts, size_t num_counts, int64_t height, int64_t width, int32_t value, int32_t* map) {
  int64_t pos = 0;  // column-major position
  for (size_t i = 0; i < num_counts; ++i) {
    const int64_t end = pos + counts[i];
    if (i % 2 == 1) {
      for (int64_t q = pos; q < end; ++q) map[(q % height) * width + q / height] = value;
    }
    pos = end;
  }
}

void PaintPolygon(const float* xy, size_t num_floats, int64_t height, int64_t width, int32_t value, int32_t* map) {
  const size_t n = num_floats / 2;
  if (n < 3 || height <= 0 || width <= 0) return;
  double ymin = xy[1], ymax = xy[1];
  for (size_t v = 1; v < n; ++v) {
    ymin = std::min(ymin, static_cast<double>(xy[2 * v + 1]));
    ymax = std::max(ymax, static_cast<double>(xy[2 * v + 1]));
  }
  if (!std::isfinite(ymin) || !std::isfinite(ymax)) return;
  // Rows whose centre y + 0.5 lies in [ymin, ymax]; others cross no edge.
  const auto rows = static_cast<double>(height);
  const auto first_row = static_cast<int64_t>(std::clamp(std::floor(ymin - 0.5), 0.0, rows));
  const auto last_row = static_cast<int64_t>(std::clamp(std::ceil(ymax), -1.0, rows - 1));
  std::vector<double> xs;
  for (int64_t row = first_row; row <= last_row; ++row) {
    const double cy = static_cast<double>(row) + 0.5;
    xs.clear();
    for (size_t v = 0; v < n; ++v) {
      const double x1 = xy[2 * v], y1 = xy[2 * v + 1];
      const size_t u = (v + 1) % n;
      const double x2 = xy[2 * u], y2 = xy[2 * u + 1];
      if ((y1 > cy) != (y2 > cy)) xs.push_back(x1 + (cy - y1) * (x2 - x1) / (y2 - y1));
    }
    std::sort(xs.begin(), xs.end());
    // The centre cx is inside when an odd number of crossings lie right of it (x > cx), i.e.
    // xs[2k] <= cx < xs[2k+1]; column c has cx = c + 0.5.
    for (size_t k = 0; k + 1 < xs.size(); k += 2) {
      const auto columns = static_cast<double>(width);
      const double lo = std::clamp(std::ceil(xs[k] - 0.5), 0.0, columns);
      const double hi = std::clamp(std::ceil(xs[k + 1] - 0.5), 0.0, columns);
      int32_t* line = map + row * width;
      for (auto c = static_cast<int64_t>(lo); c < static_cast<int64_t>(hi); ++c) line[c] = value;
    }
  }
}

}  // namespace conveyor::ops::coco
