// A generated COCO dataset for readers.coco's tests: real JPEGs (tools/testimages) and an
// instances JSON written with nlohmann-json, random every run; and the outputs the reader should
// give, computed here independently of the reader (doubles and min/max for the box rule, a
// per-pixel crossing test for polygons, an RLE encoder and a column-major bitmap for RLE).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tools/testimages/test_images.h"

namespace conveyor::testing {

using Json = nlohmann::json;

inline std::string FreshCocoDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::filesystem::path dir = std::filesystem::path(base ? base : "/tmp") / (name + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir / "images" / "sub");
  return dir.string();
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

struct CocoImage {
  int32_t id = 0;
  std::string file;  // relative to the image root
  int width = 0, height = 0;
  std::vector<uint8_t> jpeg;
};

struct CocoAnn {
  int64_t id = 0;
  int32_t image_id = 0;
  int32_t category = 0;
  double box[4] = {};  // x, y, w, h
  int crowd = 0;
  std::vector<std::vector<double>> polygons;
  enum class Rle { kNone, kCounts, kString } rle = Rle::kNone;
  std::vector<uint32_t> runs;  // column-major, 0s first, summing to w * h of its image
};

struct CocoSet {
  std::string dir, root, json;
  std::vector<CocoImage> images;  // in the JSON's order (not id order)
  std::vector<CocoAnn> anns;      // in the JSON's order
  std::vector<int32_t> categories;
  const CocoImage& Image(int32_t id) const {
    for (const CocoImage& im : images) {
      if (im.id == id) return im;
    }
    throw std::runtime_error("no image " + std::to_string(id));
  }
};

// COCO's compressed RLE: 6-bit groups (+48), 5 data bits, 0x20 = more, sign in the last group's
// 0x10; runs from the fourth on (index > 2) as the difference from the run two before.
inline std::string EncodeRleString(const std::vector<uint32_t>& runs) {
  std::string out;
  for (size_t i = 0; i < runs.size(); ++i) {
    int64_t x = runs[i];
    if (i > 2) x -= runs[i - 2];
    bool more = true;
    while (more) {
      int64_t c = x & 0x1f;
      x >>= 5;  // arithmetic shift keeps the sign
      more = (c & 0x10) ? x != -1 : x != 0;
      if (more) c |= 0x20;
      out.push_back(static_cast<char>(c + 48));
    }
  }
  return out;
}

// Runs of a random mask of `pixels` pixels (column-major), 0s first.
inline std::vector<uint32_t> RandomRuns(std::mt19937& rng, int64_t pixels) {
  std::vector<uint32_t> runs;
  int64_t left = pixels;
  bool first = true;
  while (left > 0) {
    int64_t run = std::uniform_int_distribution<int64_t>(first ? 0 : 1, std::max<int64_t>(1, pixels / 6))(rng);
    run = std::min(run, left);
    runs.push_back(static_cast<uint32_t>(run));
    left -= run;
    first = false;
  }
  return runs;
}

inline Json ToJson(const CocoSet& set) {
  Json j;
  j["info"] = {{"description", "readers.coco test"}, {"year", 2026}};
  j["licenses"] = Json::array({{{"id", 1}, {"name", "none"}}});
  j["images"] = Json::array();
  for (const CocoImage& im : set.images) {
    j["images"].push_back({{"id", im.id}, {"file_name", im.file}, {"width", im.width}, {"height", im.height}, {"license", 1}});
  }
  j["categories"] = Json::array();
  for (int32_t c : set.categories) j["categories"].push_back({{"id", c}, {"name", "c" + std::to_string(c)}});
  j["annotations"] = Json::array();
  for (const CocoAnn& a : set.anns) {
    Json e = {{"id", a.id}, {"image_id", a.image_id}, {"category_id", a.category}, {"iscrowd", a.crowd},
              {"bbox", {a.box[0], a.box[1], a.box[2], a.box[3]}}, {"area", a.box[2] * a.box[3]}};
    if (a.rle == CocoAnn::Rle::kNone) {
      e["segmentation"] = a.polygons;
    } else {
      const CocoImage& im = set.Image(a.image_id);
      e["segmentation"] = {{"size", {im.height, im.width}}};
      if (a.rle == CocoAnn::Rle::kCounts) e["segmentation"]["counts"] = a.runs;
      if (a.rle == CocoAnn::Rle::kString) e["segmentation"]["counts"] = EncodeRleString(a.runs);
    }
    j["annotations"].push_back(e);
  }
  return j;
}

// `num_images` JPEGs (ids shuffled, not sorted in the file, some in a subfolder) with 1-5
// annotations each (every fifth image none; the first of an image a polygon box inside it): polygons (some vertices outside the image), RLE in both forms (crowd), boxes
// partly or wholly outside the image, tiny boxes; categories with gaps, listed unsorted.
inline CocoSet MakeCocoSet(int num_images, uint32_t seed) {
  std::mt19937 rng(seed);
  CocoSet set;
  set.dir = FreshCocoDir("coco");
  set.root = set.dir + "/images";
  set.json = set.dir + "/instances.json";
  set.categories = {90, 3, 17, 44, 1};
  std::vector<int32_t> ids(static_cast<size_t>(num_images));
  for (int i = 0; i < num_images; ++i) ids[static_cast<size_t>(i)] = 1000 + 7 * i;
  std::shuffle(ids.begin(), ids.end(), rng);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  int64_t next_ann = 50000;
  for (int i = 0; i < num_images; ++i) {
    CocoImage im;
    im.id = ids[static_cast<size_t>(i)];
    im.width = 16 + static_cast<int>(rng() % 40);
    im.height = 16 + static_cast<int>(rng() % 40);
    im.file = (i % 3 == 0 ? "sub/" : "") + std::string("img_") + std::to_string(im.id) + ".jpg";
    im.jpeg = testimages::EncodeJpeg(testimages::MakePhotoLike(im.height, im.width, 3, rng()), testimages::Subsampling::k444, 95, false);
    testimages::WriteFile(set.root + "/" + im.file, im.jpeg);
    const int anns = (i % 5 == 4) ? 0 : 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < anns; ++k) {
      CocoAnn a;
      a.id = next_ann += 1 + static_cast<int64_t>(rng() % 3);
      a.image_id = im.id;
      a.category = set.categories[rng() % set.categories.size()];
      const int kind = k == 0 ? 7 : static_cast<int>(rng() % 8);  // the first: a polygon box the defaults keep
      double w = uniform(0.5, im.width * 0.8), h = uniform(0.5, im.height * 0.8);
      double x = uniform(k == 0 ? 0 : -5, im.width - 1), y = uniform(k == 0 ? 0 : -5, im.height - 1);
      if (kind == 0) x = im.width + uniform(1, 10);  // wholly outside: dropped by the default threshold
      if (kind == 1) w = uniform(0.0, 0.09);         // below the default threshold
      a.box[0] = x, a.box[1] = y, a.box[2] = w, a.box[3] = h;
      if (kind == 2 || kind == 3) {
        a.crowd = 1;
        a.rle = kind == 2 ? CocoAnn::Rle::kCounts : CocoAnn::Rle::kString;
        a.runs = RandomRuns(rng, int64_t{im.width} * im.height);
      } else {
        const int polys = 1 + static_cast<int>(rng() % 2);
        for (int p = 0; p < polys; ++p) {
          std::vector<double> poly;
          const int n = 3 + static_cast<int>(rng() % 6);
          for (int v = 0; v < n; ++v) {
            poly.push_back(uniform(x - 3, x + w + 3));
            poly.push_back(uniform(y - 3, y + h + 3));
          }
          a.polygons.push_back(poly);
        }
      }
      set.anns.push_back(a);
    }
    set.images.push_back(im);
  }
  std::shuffle(set.anns.begin(), set.anns.end(), rng);  // annotations of one image interleave with others'
  WriteText(set.json, ToJson(set).dump());
  return set;
}

// What readers.coco should give for one image, computed independently.
struct CocoExpect {
  bool ltrb = false, ratio = false, include_iscrowd = true, avoid_class_remapping = false;
  double size_threshold = 0.1;
};

struct ExpectedSample {
  std::vector<float> boxes;
  std::vector<int32_t> labels;
  std::vector<const CocoAnn*> anns;
};

inline ExpectedSample Expected(const CocoSet& set, int32_t image_id, const CocoExpect& o) {
  const CocoImage& im = set.Image(image_id);
  std::vector<int32_t> sorted = set.categories;
  std::sort(sorted.begin(), sorted.end());
  ExpectedSample e;
  for (const CocoAnn& a : set.anns) {  // file order within the image
    if (a.image_id != image_id || (a.crowd && !o.include_iscrowd)) continue;
    const double x0 = static_cast<float>(a.box[0]), y0 = static_cast<float>(a.box[1]);
    const double x1 = x0 + static_cast<float>(a.box[2]), y1 = y0 + static_cast<float>(a.box[3]);
    const double l = std::min<double>(std::max(x0, 0.0), im.width), r = std::min<double>(std::max(x1, 0.0), im.width);
    const double t = std::min<double>(std::max(y0, 0.0), im.height), b = std::min<double>(std::max(y1, 0.0), im.height);
    if (r - l < o.size_threshold || b - t < o.size_threshold) continue;
    double v[4] = {l, t, o.ltrb ? r : r - l, o.ltrb ? b : b - t};
    if (o.ratio) v[0] /= im.width, v[2] /= im.width, v[1] /= im.height, v[3] /= im.height;
    for (double c : v) e.boxes.push_back(static_cast<float>(c));
    e.labels.push_back(o.avoid_class_remapping
                           ? a.category
                           : static_cast<int32_t>(std::find(sorted.begin(), sorted.end(), a.category) - sorted.begin() + 1));
    e.anns.push_back(&a);
  }
  return e;
}

// Whether (px, py) is inside the polygon: the crossing number, edge by edge, for one point.
inline bool PointInPolygon(const std::vector<double>& poly, double px, double py) {
  const size_t n = poly.size() / 2;
  bool inside = false;
  for (size_t i = 0, j = n - 1; i < n; j = i++) {
    const double xi = static_cast<float>(poly[2 * i]), yi = static_cast<float>(poly[2 * i + 1]);
    const double xj = static_cast<float>(poly[2 * j]), yj = static_cast<float>(poly[2 * j + 1]);
    if ((yi > py) != (yj > py) && px < xj + (py - yj) * (xi - xj) / (yi - yj)) inside = !inside;
  }
  return n >= 3 && inside;
}

// The label map of `e`'s annotations, pixel by pixel: the last annotation covering a pixel wins.
inline std::vector<int32_t> ExpectedMask(const CocoImage& im, const ExpectedSample& e) {
  std::vector<int32_t> mask(static_cast<size_t>(im.width) * static_cast<size_t>(im.height), 0);
  for (size_t k = 0; k < e.anns.size(); ++k) {
    const CocoAnn& a = *e.anns[k];
    std::vector<uint8_t> bits(mask.size(), 0);  // column-major, from the runs
    size_t pos = 0;
    for (size_t r = 0; r < a.runs.size(); ++r) {
      for (uint32_t q = 0; q < a.runs[r]; ++q) bits[pos++] = static_cast<uint8_t>(r % 2);
    }
    for (int y = 0; y < im.height; ++y) {
      for (int x = 0; x < im.width; ++x) {
        bool in = !a.runs.empty() && bits[static_cast<size_t>(x) * static_cast<size_t>(im.height) + static_cast<size_t>(y)];
        for (const auto& poly : a.polygons) in = in || PointInPolygon(poly, x + 0.5, y + 0.5);
        if (in) mask[static_cast<size_t>(y) * static_cast<size_t>(im.width) + static_cast<size_t>(x)] = e.labels[k];
      }
    }
  }
  return mask;
}

}  // namespace conveyor::testing
