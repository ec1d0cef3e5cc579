// Parsing a COCO-sized annotation file vs loading its preprocessed index (docs/readers.md has the
// figures). Writes a synthetic instances file like COCO train2017's shape — 100,000 images of
// 640x480, 8.6 annotations each (860,000), one polygon of 8-32 vertices per annotation, 1% crowd
// annotations with an uncompressed RLE — then times, best of `repeats`:
//   parse   ParseCocoJson (nlohmann-json, element by element)
//   save    SaveCocoIndex
//   load    StampOf + LoadCocoIndex (incl. hash and Validate)
//
//   bazel run -c opt //tests/operators/readers/coco:coco_index_bench -- [folder] [repeats]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "operators/readers/coco/coco_annotations.h"
#include "operators/readers/coco/coco_index.h"

namespace {

using conveyor::ops::coco::CocoAnnotations;

constexpr int kImages = 100000;
constexpr int kAnnotations = 860000;

std::string MakeJson() {
  std::mt19937 rng(37);
  std::string out = "{\"info\": {\"description\": \"synthetic\"}, \"licenses\": [], \"images\": [";
  out.reserve(size_t{400} << 20);
  char buf[256];
  for (int i = 0; i < kImages; ++i) {
    std::snprintf(buf, sizeof(buf), "%s{\"id\": %d, \"file_name\": \"%012d.jpg\", \"width\": 640, \"height\": 480, \"license\": 1}",
                  i ? ", " : "", i + 1, i + 1);
    out += buf;
  }
  out += "], \"categories\": [";
  for (int c = 1; c <= 80; ++c) {
    std::snprintf(buf, sizeof(buf), "%s{\"id\": %d, \"name\": \"c%d\", \"supercategory\": \"s\"}", c > 1 ? ", " : "", c + c / 10, c);
    out += buf;
  }
  out += "], \"annotations\": [";
  std::uniform_real_distribution<double> u(0, 1);
  for (int a = 0; a < kAnnotations; ++a) {
    const int image = 1 + static_cast<int>(rng() % kImages);
    const double x = u(rng) * 600, y = u(rng) * 440, w = 1 + u(rng) * 200, h = 1 + u(rng) * 200;
    const int cat = 1 + static_cast<int>(rng() % 80);
    const bool crowd = rng() % 100 == 0;
    std::snprintf(buf, sizeof(buf), "%s{\"id\": %d, \"image_id\": %d, \"category_id\": %d, \"iscrowd\": %d, \"area\": %.2f, \"bbox\": [%.2f, %.2f, %.2f, %.2f], \"segmentation\": ",
                  a ? ", " : "", a + 1, image, cat + cat / 10, crowd ? 1 : 0, w * h, x, y, w, h);
    out += buf;
    if (crowd) {
      out += "{\"size\": [480, 640], \"counts\": [";
      int left = 480 * 640;
      for (int r = 0; left > 0; ++r) {
        const int run = std::min(left, 1 + static_cast<int>(rng() % 6000));
        out += (r ? ", " : "") + std::to_string(run);
        left -= run;
      }
      out += "]}";
    } else {
      out += "[[";
      const int n = 8 + static_cast<int>(rng() % 25);
      for (int v = 0; v < n; ++v) {
        std::snprintf(buf, sizeof(buf), "%s%.2f, %.2f", v ? ", " : "", x + u(rng) * w, y + u(rng) * h);
        out += buf;
      }
      out += "]]";
    }
    out += "}";
  }
  out += "]}";
  return out;
}

template <typename Fn>
double BestSeconds(int repeats, Fn&& fn) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const fs::path dir = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "coco_index_bench";
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  fs::create_directories(dir);
  const std::string json = (dir / "instances.json").string(), index = (dir / "instances.idx").string();
  {
    const std::string text = MakeJson();
    std::FILE* f = std::fopen(json.c_str(), "wb");
    if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "cannot write %s\n", json.c_str());
      return 1;
    }
  }
  const std::string where = "coco_index_bench";
  CocoAnnotations parsed;
  const double parse = BestSeconds(repeats, [&] { parsed = conveyor::ops::coco::ParseCocoJson(json, where); });
  const auto stamp = conveyor::ops::coco::StampOf(json, where);
  const double save = BestSeconds(repeats, [&] { conveyor::ops::coco::SaveCocoIndex(index, parsed, stamp, where); });
  CocoAnnotations loaded;
  const double load = BestSeconds(repeats, [&] {
    loaded = conveyor::ops::coco::LoadCocoIndex(index, json, conveyor::ops::coco::StampOf(json, where), where);
  });
  const bool same = loaded.ann_boxes == parsed.ann_boxes && loaded.coords == parsed.coords &&
                    loaded.rle_counts == parsed.rle_counts && loaded.names == parsed.names;
  std::printf("images %zu, annotations %zu, polygon vertices %zu, RLE runs %zu\n", parsed.num_images(),
              parsed.num_annotations(), parsed.coords.size() / 2, parsed.rle_counts.size());
  std::printf("annotation file %.1f MB, index %.1f MB\n", static_cast<double>(fs::file_size(json)) / 1e6,
              static_cast<double>(fs::file_size(index)) / 1e6);
  std::printf("parse JSON  %.3f s\nsave index  %.3f s\nload index  %.3f s  (%.0fx faster than parsing)\nsame data: %s\n",
              parse, save, load, parse / load, same ? "yes" : "NO");
  return same ? 0 : 1;
}
