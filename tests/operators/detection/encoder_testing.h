// Helpers for box_encoder's GPU-against-CPU tests: anchor sets (SSD300's 8732 default boxes, made as
// bench/detection/ssd_anchors.py makes them; sets with duplicated anchors for ties, anchors reaching
// outside the image, gaps that some boxes fall into), boxes of every kind the encoder must handle,
// and the comparison the two backends must pass.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tests/operators/detection/box_testing.h"

namespace conveyor::testing {

// SSD300's default boxes, ltrb (ssd_anchors.py: per feature map, sizes outer and cells inner; every
// (cx, cy, w, h) clamped to [0, 1] before it becomes ltrb).
inline std::vector<double> Ssd300Anchors() {
  const int maps[6] = {38, 19, 10, 5, 3, 1};
  const double steps[6] = {8, 16, 32, 64, 100, 300};
  const double scales[7] = {21, 45, 99, 153, 207, 261, 315};
  const std::vector<std::vector<double>> ratios = {{2}, {2, 3}, {2, 3}, {2, 3}, {2}, {2}};
  const auto clamp = [](double v) { return std::min(std::max(v, 0.0), 1.0); };
  std::vector<double> out;
  for (int k = 0; k < 6; ++k) {
    const double f = 300.0 / steps[k], s1 = scales[k] / 300.0, s2 = scales[k + 1] / 300.0;
    std::vector<std::pair<double, double>> sizes = {{s1, s1}, {std::sqrt(s1 * s2), std::sqrt(s1 * s2)}};
    for (double a : ratios[static_cast<size_t>(k)]) {
      sizes.push_back({s1 * std::sqrt(a), s1 / std::sqrt(a)});
      sizes.push_back({s1 / std::sqrt(a), s1 * std::sqrt(a)});
    }
    for (const auto& [w0, h0] : sizes) {
      for (int i = 0; i < maps[k]; ++i) {
        for (int j = 0; j < maps[k]; ++j) {
          const double cx = clamp((j + 0.5) / f), cy = clamp((i + 0.5) / f), w = clamp(w0), h = clamp(h0);
          out.insert(out.end(), {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2});
        }
      }
    }
  }
  return out;
}

// A 6 x 6 grid in two sizes, then 12 of its anchors again (a box's best anchor ties with its
// duplicate: the first must win).
inline std::vector<double> GridAnchorsWithDuplicates() {
  std::vector<double> a;
  for (double size : {0.2, 0.45}) {
    for (int y = 0; y < 6; ++y) {
      for (int x = 0; x < 6; ++x) {
        const double cx = (x + 0.5) / 6, cy = (y + 0.5) / 6;
        a.insert(a.end(), {cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2});
      }
    }
  }
  for (size_t i = 0; i < 12; ++i) {
    const size_t from = 4 * (i * 5 % 72);
    a.insert(a.end(), a.begin() + static_cast<std::ptrdiff_t>(from), a.begin() + static_cast<std::ptrdiff_t>(from + 4));
  }
  return a;
}

// `n` random anchors, some reaching outside [0, 1], every third a copy of an earlier one.
inline std::vector<double> RandomAnchors(size_t n) {
  std::vector<double> a;
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 2) {
      const size_t from = 4 * (i / 2);
      a.insert(a.end(), a.begin() + static_cast<std::ptrdiff_t>(from), a.begin() + static_cast<std::ptrdiff_t>(from + 4));
      continue;
    }
    const auto v = RandomVector<double>(4, -0.2, 1.2);
    const double w = RandomVector<double>(1, 0.05, 0.7)[0], h = RandomVector<double>(1, 0.05, 0.7)[0];
    a.insert(a.end(), {v[0], v[1], v[0] + w, v[1] + h});
  }
  return a;
}

// Three quarters of the image (box_encoder_test's kQuarters): a box in the top-right quarter
// touches no anchor, so it claims none.
inline std::vector<double> QuarterAnchors() { return {0, 0, 0.5, 0.5, 0.5, 0.5, 1, 1, 0, 0.5, 0.5, 1}; }

// `n` ltrb boxes of every kind: ordinary, reaching outside [0, 1], degenerate (zero or negative
// extent, NaN, infinities), tiny, copies of an earlier box (ties between boxes), and an anchor's own
// coordinates (IoU 1, and a tie when that anchor is duplicated).
inline std::vector<float> RandomBoxes(size_t n, const std::vector<double>& anchors) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> v;
  for (size_t i = 0; i < n; ++i) {
    const int kind = RandomVector<int>(1, 0, 9)[0];
    float box[4];
    if (kind <= 3 || (kind == 6 && i == 0)) {
      const float w = RandomVector<float>(1, 0.01f, 0.8f)[0], h = RandomVector<float>(1, 0.01f, 0.8f)[0];
      const float l = RandomVector<float>(1, 0.f, 1.f - w)[0], t = RandomVector<float>(1, 0.f, 1.f - h)[0];
      box[0] = l, box[1] = t, box[2] = l + w, box[3] = t + h;
    } else if (kind == 4) {
      const auto c = RandomVector<float>(4, -0.4f, 1.4f);
      std::copy(c.begin(), c.end(), box);
    } else if (kind == 5) {
      const auto c = RandomVector<float>(4, 0.f, 1.f);
      std::copy(c.begin(), c.end(), box);
      const int how = RandomVector<int>(1, 0, 4)[0];
      const size_t at = static_cast<size_t>(RandomVector<int>(1, 0, 3)[0]);
      if (how == 0) box[2] = box[0];                  // zero width
      if (how == 1) std::swap(box[1], box[3]);        // maybe negative height
      if (how == 2) box[at] = nan;                    // the empty box
      if (how == 3) box[at] = at < 2 ? -inf : inf;    // clipped to the edge
      if (how == 4) box[at] = at < 2 ? inf : -inf;    // collapses
    } else if (kind == 6) {
      const size_t from = 4 * static_cast<size_t>(RandomVector<int>(1, 0, static_cast<int>(i) - 1)[0]);
      std::copy(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(from + 4), box);
    } else if (kind == 7) {
      const size_t a = 4 * static_cast<size_t>(RandomVector<int>(1, 0, static_cast<int>(anchors.size() / 4) - 1)[0]);
      for (size_t c = 0; c < 4; ++c) box[c] = static_cast<float>(anchors[a + c]);
    } else {
      const float s = RandomVector<float>(1, 1e-4f, 1e-2f)[0];
      const float l = RandomVector<float>(1, 0.f, 1.f - s)[0], t = RandomVector<float>(1, 0.f, 1.f - s)[0];
      box[0] = l, box[1] = t, box[2] = l + s, box[3] = t + s;
    }
    v.insert(v.end(), box, box + 4);
  }
  return v;
}

// Labels for `counts` boxes per sample: int32 [N], or int64 [N, 1] with values beyond 32 bits.
inline TensorListCPU RandomLabelBatch(const std::vector<int64_t>& counts, bool int64_labels) {
  std::vector<Shape> shapes;
  std::vector<std::vector<int64_t>> values;
  for (int64_t n : counts) {
    shapes.push_back(int64_labels ? Shape{n, 1} : Shape{n});
    std::vector<int64_t> v = RandomVector<int64_t>(static_cast<size_t>(n), 1, 90);
    if (int64_labels) {
      for (int64_t& x : v) x += int64_t{1} << 40;
    }
    values.push_back(v);
  }
  if (int64_labels) return MakeBatch<int64_t>(shapes, values);
  std::vector<std::vector<int32_t>> narrow;
  for (const auto& v : values) narrow.emplace_back(v.begin(), v.end());
  return MakeBatch<int32_t>(shapes, narrow);
}

inline std::string FloatText(float v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

inline int64_t UlpDistance(float a, float b) {
  if (a == b) return 0;  // also +0 and -0
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if ((ia < 0) != (ib < 0) || std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  return ia > ib ? int64_t{ia} - ib : int64_t{ib} - ia;
}

// The GPU's box_encoder outputs against the CPU's: labels bit for bit; boxes bit for bit, except,
// with offset, the w and h columns (log: CUDA's and glibc's may differ in a double's last bit),
// which may be 1 float ulp apart. Counts those in *ulp_diffs. "" when they pass.
inline std::string CompareEncoded(const TensorListCPU& gpu_boxes, const TensorListCPU& gpu_labels,
                                  const TensorListCPU& cpu_boxes, const TensorListCPU& cpu_labels, bool offset,
                                  int64_t* ulp_diffs) {
  const std::string labels = SameBytes(gpu_labels, cpu_labels);
  if (!labels.empty()) return "labels: " + labels;
  if (gpu_boxes.shapes() != cpu_boxes.shapes() || gpu_boxes.dtype() != cpu_boxes.dtype()) return "boxes: shapes differ";
  for (int s = 0; s < cpu_boxes.num_samples(); ++s) {
    const std::vector<float> g = Values<float>(gpu_boxes, s), c = Values<float>(cpu_boxes, s);
    for (size_t i = 0; i < c.size(); ++i) {
      const int64_t d = UlpDistance(g[i], c[i]);
      if (d == 0) continue;
      const bool log_column = offset && i % 4 >= 2;
      if (log_column && d == 1) {
        ++*ulp_diffs;
        continue;
      }
      return "boxes: sample " + std::to_string(s) + " anchor " + std::to_string(i / 4) + " column " +
             std::to_string(i % 4) + ": gpu " + FloatText(g[i]) + ", cpu " + FloatText(c[i]) + " (" +
             std::to_string(d) + " ulp)";
    }
  }
  return "";
}

// Anchors with a label other than 0, over the batch (a check that a comparison was not vacuous).
inline int64_t MatchedAnchors(const TensorListCPU& labels) {
  int64_t n = 0;
  for (int s = 0; s < labels.num_samples(); ++s) {
    for (int64_t a = 0; a < labels.shape(s)[0]; ++a) {
      const int64_t v = labels.dtype() == DType::kInt64 ? static_cast<const int64_t*>(labels.raw_sample(s))[a]
                                                        : static_cast<const int32_t*>(labels.raw_sample(s))[a];
      n += v != 0;
    }
  }
  return n;
}

}  // namespace conveyor::testing
