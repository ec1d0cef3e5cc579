// make_sample_data [OUTDIR] [--per-class N] [--coco-images M] [--threads T]
//
// Writes the sample dataset (default OUTDIR: data, relative to the current folder) that the
// README's quick start and the shipped pipelines (pipelines/*.yaml) read. Deterministic: the same
// arguments give byte-identical files on every machine with the same libjpeg-turbo.
//
// | path                              | contents                                                  |
// |-----------------------------------|-----------------------------------------------------------|
// | OUTDIR/samples/class_0K/NNNN.jpg  | 10 classes x N (default 26: 260 files) photo-like JPEGs,   |
// |                                   | each side 200..800 px, q85..95, mostly baseline 4:2:0,     |
// |                                   | some 4:4:4 and some progressive (a realistic decoder mix)  |
// | OUTDIR/file_list.txt              | `samples/class_0K/NNNN.jpg K` lines: 4 files per class     |
// | OUTDIR/samples_npy/hist_NNN.npy   | 16 float32 [3, 16] colour histograms of the first images  |
// | OUTDIR/tfrecord/train-0000F-of-00004.tfrecord | the same JPEGs as tf.train.Example records   |
// |                                   | (image/encoded, image/class/label), in order k, a quarter  |
// |                                   | per file, each with its tfrecord2idx index (.idx beside)   |
// | OUTDIR/webdataset/train-0000F-of-00004.tar | the same JPEGs as WebDataset samples: KKKKKK.jpg + |
// |                                   | KKKKKK.cls (the label as decimal text), key = k, a quarter |
// |                                   | per shard, each with its wds2idx index (.tar.idx beside)   |
// | OUTDIR/coco/images/NNNN.jpg       | M (default 32) synthetic detection scenes, each side       |
// |                                   | 320..640 px: 1-5 filled rectangles / ellipses of 4         |
// |                                   | categories (ids 1, 2, 3, 5) on a photo-like background     |
// | OUTDIR/coco/annotations.json      | their COCO instances file (readers.coco,                   |
// |                                   | pipelines/detection_train.yaml): images, annotations (bbox |
// |                                   | xywh in pixels, category_id, area = painted pixels,        |
// |                                   | iscrowd 0, segmentation polygon), categories               |
// | OUTDIR/videos/class_K/clip_J.mp4  | 3 classes x 2 small H.264 clips (64 x 48, 40 frames) whose |
// |                                   | frames carry their numbers (sample_videos.h;               |
// |                                   | pipelines/video_train.yaml)                                |
// | OUTDIR/samples/.complete          | written last: the set is whole (tools/quickstart.sh)       |
//
// Content: tools/testimages' MakePhotoLike (gradients, waves, shapes, two-scale texture, grain)
// plus a class motif, so classes differ visibly: a colour cast of the class's hue and, inside a
// random ellipse, stripes at the class's angle (18 degrees apart).
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "operators/readers/tfrecord/tfrecord_writer.h"
#include "operators/readers/webdataset/webdataset_writer.h"
#include "tools/make_sample_data/sample_videos.h"
#include "tools/testimages/test_images.h"

namespace {

using conveyor::testimages::Image8;
using conveyor::testimages::Subsampling;

constexpr int kClasses = 10;
constexpr int kListPerClass = 4;
constexpr int kHistograms = 16;
constexpr int kHistBins = 16;
constexpr int kTfRecordFiles = 4;
constexpr int kWebDatasetShards = 4;
constexpr double kPi = 3.14159265358979323846;

int Usage() {
  std::fprintf(stderr, "usage: make_sample_data [OUTDIR] [--per-class N] [--coco-images M] [--threads T]\n");
  return 2;
}

// splitmix64 (std distributions differ between standard libraries; files must not).
uint64_t Mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double Unit(uint64_t& state) { return static_cast<double>((state = Mix(state)) >> 11) * 0x1.0p-53; }

uint8_t Clamp8(double v) { return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 255.0))); }

// Hue in degrees → RGB in [0, 1] (full saturation and value).
void HueRgb(double hue, double rgb[3]) {
  for (int c = 0; c < 3; ++c) {
    const double k = std::fmod((c == 0 ? 5.0 : c == 1 ? 3.0 : 1.0) + hue / 60.0, 6.0);
    rgb[c] = 1.0 - std::max(0.0, std::min({k, 4.0 - k, 1.0}));
  }
}

Image8 MakeSampleImage(int label, uint64_t seed) {
  uint64_t rng = seed;
  const int height = 200 + static_cast<int>(Unit(rng) * 601);
  const int width = 200 + static_cast<int>(Unit(rng) * 601);
  Image8 img = conveyor::testimages::MakePhotoLike(height, width, 3, seed, 5.0);
  double tint[3];
  HueRgb(36.0 * label, tint);
  const double angle = kPi / 10.0 * label;
  const double dy = std::sin(angle), dx = std::cos(angle);
  const double period = 18 + 22 * Unit(rng);
  const double cy = height * (0.3 + 0.4 * Unit(rng)), cx = width * (0.3 + 0.4 * Unit(rng));
  const double ry = height * (0.2 + 0.2 * Unit(rng)), rx = width * (0.2 + 0.2 * Unit(rng));
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double ey = (y - cy) / ry, ex = (x - cx) / rx;
      const double inside = std::clamp((1.0 - (ey * ey + ex * ex)) * 4.0, 0.0, 1.0);  // soft edge
      const double stripe = 0.5 + 0.5 * std::sin(2 * kPi * (y * dy + x * dx) / period);
      for (int c = 0; c < 3; ++c) {
        uint8_t& p = img.pixels[(static_cast<size_t>(y) * width + x) * 3 + c];
        const double cast = 0.7 * p + 0.3 * 255.0 * tint[c];
        p = Clamp8((1 - inside) * cast + inside * (0.35 * p + 0.65 * 255.0 * tint[c] * (0.35 + 0.65 * stripe)));
      }
    }
  }
  return img;
}

// A .npy (format 1.0) file of float32 values in C order.
void WriteNpyFloat32(const std::string& path, const std::vector<int>& shape, const std::vector<float>& values) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  dict += "), }";
  const size_t unpadded = 10 + dict.size() + 1;  // magic(6) + version(2) + length(2) + dict + '\n'
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(dict.size() & 0xff);
  bytes += static_cast<char>(dict.size() >> 8);
  bytes += dict;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  conveyor::testimages::WriteFile(path, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

// Normalised per-channel histogram: [3, kHistBins], each row sums to 1.
std::vector<float> ColourHistogram(const Image8& img) {
  std::vector<float> h(3 * kHistBins, 0.0f);
  const size_t pixels = static_cast<size_t>(img.height) * img.width;
  for (size_t i = 0; i < pixels; ++i) {
    for (int c = 0; c < 3; ++c) h[c * kHistBins + img.pixels[i * 3 + c] * kHistBins / 256] += 1.0f;
  }
  for (float& v : h) v /= static_cast<float>(pixels);
  return h;
}

std::string FileName(int label, int index) {
  char name[48];
  std::snprintf(name, sizeof(name), "samples/class_%02d/%04d.jpg", label, index);
  return name;
}

std::string ReadSample(const std::string& dir, int k) {
  std::ifstream in(dir + "/" + FileName(k % kClasses, k / kClasses), std::ios::binary);
  const std::string jpeg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (jpeg.empty()) throw std::runtime_error("cannot read back " + FileName(k % kClasses, k / kClasses));
  return jpeg;
}

// The JPEGs again as WebDataset tar shards (readers.webdataset, pipelines/webdataset_train.yaml),
// written by `conveyor shards`' writer: sample k as <k>.jpg + <k>.cls in shard k * shards / total.
void WriteWebDataset(const std::string& dir, int total) {
  std::filesystem::create_directories(dir + "/webdataset");
  for (int f = 0; f < kWebDatasetShards; ++f) {
    char name[64];
    std::snprintf(name, sizeof(name), "/webdataset/train-%05d-of-%05d.tar", f, kWebDatasetShards);
    conveyor::ops::WebDatasetWriter writer(dir + name);
    for (int k = total * f / kWebDatasetShards; k < total * (f + 1) / kWebDatasetShards; ++k) {
      const std::string jpeg = ReadSample(dir, k), label = std::to_string(k % kClasses);
      char key[16];
      std::snprintf(key, sizeof(key), "%06d", k);
      writer.Write(key, {{"jpg", {reinterpret_cast<const uint8_t*>(jpeg.data()), jpeg.size()}},
                         {"cls", {reinterpret_cast<const uint8_t*>(label.data()), label.size()}}});
    }
    writer.Close();
  }
}

// The JPEGs again as TFRecord files (readers.tfrecord, pipelines/tfrecord_train.yaml): sample k
// (class k % 10) in file k * kTfRecordFiles / total.
void WriteTfRecords(const std::string& dir, int total) {
  std::filesystem::create_directories(dir + "/tfrecord");
  for (int f = 0; f < kTfRecordFiles; ++f) {
    char name[64];
    std::snprintf(name, sizeof(name), "/tfrecord/train-%05d-of-%05d.tfrecord", f, kTfRecordFiles);
    conveyor::ops::TfRecordWriter writer(dir + name);
    for (int k = total * f / kTfRecordFiles; k < total * (f + 1) / kTfRecordFiles; ++k) {
      const int label = k % kClasses;
      const std::string jpeg = ReadSample(dir, k);
      writer.Write({{conveyor::ops::ExampleFeature::kBytes, "image/encoded", {jpeg}, {}, {}},
                    {conveyor::ops::ExampleFeature::kInt64, "image/class/label", {}, {label}, {}}});
    }
    writer.Close();
  }
}


// ---- COCO detection scenes (coco/) ----
//
// Scene k (seed 0xD37EC7 + k * 7919, so file k depends on k only): a photo-like background of
// 320..640 px per side, dimmed and desaturated so the shapes stand out, then 1-5 shapes placed
// without overlapping (up to 50 tries each; a shape that finds no room is left out, never fewer
// than one). Each shape's category fixes its kind and colour; its pixels are the colour with a
// light texture. The annotation is exact: bbox = the painted pixels' bounding box, area = their
// count, the polygon = the rectangle's corners or 24 points on the ellipse.
struct CocoCategory {
  int id;
  const char* name;
  bool ellipse;
  double rgb[3];
};
constexpr CocoCategory kCocoCategories[] = {
    {1, "red_rectangle", false, {220, 40, 40}},
    {2, "green_ellipse", true, {40, 200, 60}},
    {3, "blue_rectangle", false, {40, 70, 230}},
    {5, "yellow_ellipse", true, {235, 215, 40}},  // ids with a gap, as COCO's (readers.coco remaps)
};
constexpr int kCocoImages = 32;
constexpr int kCocoQuality = 90;

struct CocoShape {
  int category;           // index into kCocoCategories
  double x0, y0, x1, y1;  // the shape's extent in pixels (ellipse: its bounding rectangle)
};

struct CocoScene {
  Image8 img;
  std::vector<CocoShape> shapes;
  std::vector<std::array<int, 4>> bbox;  // painted pixels: x, y, w, h
  std::vector<int64_t> area;
};

bool InsideShape(const CocoShape& s, double px, double py) {
  if (!kCocoCategories[s.category].ellipse) return px >= s.x0 && px < s.x1 && py >= s.y0 && py < s.y1;
  const double cx = (s.x0 + s.x1) / 2, cy = (s.y0 + s.y1) / 2, rx = (s.x1 - s.x0) / 2, ry = (s.y1 - s.y0) / 2;
  const double ex = (px - cx) / rx, ey = (py - cy) / ry;
  return ex * ex + ey * ey <= 1.0;
}

CocoScene MakeCocoScene(int k) {
  const uint64_t seed = 0xD37EC7ull + static_cast<uint64_t>(k) * 7919;
  uint64_t rng = seed;
  const int height = 320 + static_cast<int>(Unit(rng) * 321);
  const int width = 320 + static_cast<int>(Unit(rng) * 321);
  CocoScene scene;
  scene.img = conveyor::testimages::MakePhotoLike(height, width, 3, seed, 4.0);
  for (uint8_t& p : scene.img.pixels) p = Clamp8(40 + 0.45 * p);  // a muted background
  const int wanted = 1 + static_cast<int>(Unit(rng) * 5);
  for (int n = 0; n < wanted; ++n) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      CocoShape s;
      s.category = static_cast<int>(Unit(rng) * 4);
      const double w = std::round(width * (0.12 + 0.33 * Unit(rng)));
      const double h = std::round(height * (0.12 + 0.33 * Unit(rng)));
      s.x0 = std::floor(Unit(rng) * (width - w));
      s.y0 = std::floor(Unit(rng) * (height - h));
      s.x1 = s.x0 + w;
      s.y1 = s.y0 + h;
      bool overlaps = false;
      for (const CocoShape& o : scene.shapes) {
        overlaps |= s.x0 < o.x1 + 4 && o.x0 < s.x1 + 4 && s.y0 < o.y1 + 4 && o.y0 < s.y1 + 4;  // 4 px apart
      }
      if (overlaps) continue;
      scene.shapes.push_back(s);
      break;
    }
  }
  for (const CocoShape& s : scene.shapes) {
    const CocoCategory& cat = kCocoCategories[s.category];
    int minx = width, miny = height, maxx = -1, maxy = -1;
    int64_t count = 0;
    for (int y = static_cast<int>(s.y0); y < static_cast<int>(std::ceil(s.y1)); ++y) {
      for (int x = static_cast<int>(s.x0); x < static_cast<int>(std::ceil(s.x1)); ++x) {
        if (!InsideShape(s, x + 0.5, y + 0.5)) continue;
        const double texture = 0.85 + 0.15 * std::sin(0.35 * x + 0.2 * y);
        for (int c = 0; c < 3; ++c) {
          scene.img.pixels[(static_cast<size_t>(y) * width + x) * 3 + c] = Clamp8(cat.rgb[c] * texture);
        }
        minx = std::min(minx, x), miny = std::min(miny, y), maxx = std::max(maxx, x), maxy = std::max(maxy, y);
        ++count;
      }
    }
    scene.bbox.push_back({minx, miny, maxx - minx + 1, maxy - miny + 1});
    scene.area.push_back(count);
  }
  return scene;
}

nlohmann::json CocoPolygon(const CocoShape& s) {
  nlohmann::json poly = nlohmann::json::array();
  if (!kCocoCategories[s.category].ellipse) {
    for (double v : {s.x0, s.y0, s.x1, s.y0, s.x1, s.y1, s.x0, s.y1}) poly.push_back(v);
  } else {
    const double cx = (s.x0 + s.x1) / 2, cy = (s.y0 + s.y1) / 2, rx = (s.x1 - s.x0) / 2, ry = (s.y1 - s.y0) / 2;
    for (int i = 0; i < 24; ++i) {
      const double a = 2 * kPi * i / 24;
      poly.push_back(std::round((cx + rx * std::cos(a)) * 100) / 100);
      poly.push_back(std::round((cy + ry * std::sin(a)) * 100) / 100);
    }
  }
  return nlohmann::json::array({poly});
}

// item(k) for k in [0, count) on `threads` threads taking the next k; the first error is rethrown
// after all threads joined.
void ForEachOnThreads(int count, int threads, const std::function<void(int)>& item) {
  std::atomic<int> next{0};
  std::mutex error_mu;
  std::string error;
  auto work = [&] {
    for (int k = next++; k < count; k = next++) {
      try {
        item(k);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (error.empty()) error = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  if (!error.empty()) throw std::runtime_error(error);
}

// Writes OUTDIR/coco/: the scenes (threads share the work) and annotations.json; returns the
// number of boxes.
int WriteCoco(const std::string& dir, int count, int threads) {
  std::filesystem::create_directories(dir + "/coco/images");
  std::vector<CocoScene> scenes(static_cast<size_t>(count));
  ForEachOnThreads(count, threads, [&](int k) {
    CocoScene& scene = scenes[static_cast<size_t>(k)];
    scene = MakeCocoScene(k);
    char name[48];
    std::snprintf(name, sizeof(name), "/coco/images/%04d.jpg", k);
    conveyor::testimages::WriteFile(dir + name, conveyor::testimages::EncodeJpeg(scene.img, Subsampling::k420,
                                                                                 kCocoQuality, false));
    scene.img.pixels.clear();
    scene.img.pixels.shrink_to_fit();
  });

  nlohmann::json images = nlohmann::json::array(), annotations = nlohmann::json::array(),
                 categories = nlohmann::json::array();
  int ann_id = 1;
  for (int k = 0; k < count; ++k) {
    const CocoScene& scene = scenes[static_cast<size_t>(k)];
    char name[16];
    std::snprintf(name, sizeof(name), "%04d.jpg", k);
    images.push_back({{"id", k + 1}, {"file_name", name}, {"width", scene.img.width}, {"height", scene.img.height}});
    for (size_t j = 0; j < scene.shapes.size(); ++j) {
      const auto& b = scene.bbox[j];
      annotations.push_back({{"id", ann_id++},
                             {"image_id", k + 1},
                             {"category_id", kCocoCategories[scene.shapes[j].category].id},
                             {"bbox", {b[0], b[1], b[2], b[3]}},
                             {"area", scene.area[j]},
                             {"iscrowd", 0},
                             {"segmentation", CocoPolygon(scene.shapes[j])}});
    }
  }
  for (const CocoCategory& c : kCocoCategories) {
    categories.push_back({{"id", c.id}, {"name", c.name}, {"supercategory", "shape"}});
  }
  // One entry a line: compact, and still readable and diffable.
  const nlohmann::json info = {{"description", "Conveyor synthetic detection scenes (tools/make_sample_data)"},
                               {"version", "1"}};
  std::string text = "{\"info\": " + info.dump();
  for (const auto& [key, list] : {std::pair<const char*, const nlohmann::json*>{"images", &images},
                                  {"annotations", &annotations}, {"categories", &categories}}) {
    text += ",\n\"" + std::string(key) + "\": [";
    for (size_t j = 0; j < list->size(); ++j) text += (j ? ",\n  " : "\n  ") + (*list)[j].dump();
    text += "\n]";
  }
  text += "}\n";
  conveyor::testimages::WriteFile(dir + "/coco/annotations.json", std::vector<uint8_t>(text.begin(), text.end()));
  return ann_id - 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "data";
  int per_class = 26, coco_images = kCocoImages, threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int i = 1;
  if (i < argc && argv[i][0] != '-') dir = argv[i++];
  for (; i < argc; i += 2) {
    if (i + 1 >= argc) return Usage();
    const int value = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--per-class") == 0) per_class = value;
    else if (std::strcmp(argv[i], "--threads") == 0) threads = value;
    else if (std::strcmp(argv[i], "--coco-images") == 0) coco_images = value;
    else return Usage();
  }
  if (per_class < kListPerClass || threads < 1 || coco_images < 1) return Usage();
  try {
    namespace fs = std::filesystem;
    fs::remove(dir + "/samples/.complete");
    for (int c = 0; c < kClasses; ++c) fs::create_directories(dir + "/" + FileName(c, 0).substr(0, 17));
    fs::create_directories(dir + "/samples_npy");

    const int total = kClasses * per_class;
    std::atomic<int64_t> bytes{0};
    std::vector<std::vector<float>> histograms(kHistograms);
    ForEachOnThreads(total, threads, [&](int k) {
      const int label = k % kClasses, index = k / kClasses;  // classes interleaved: balanced prefix
      const Image8 img = MakeSampleImage(label, 0xC0FFEEull + static_cast<uint64_t>(k) * 7919);
      const Subsampling sub = k % 5 == 3 ? Subsampling::k444 : Subsampling::k420;
      const std::vector<uint8_t> jpeg =
          conveyor::testimages::EncodeJpeg(img, sub, 85 + k % 11, /*progressive=*/k % 8 == 5);
      conveyor::testimages::WriteFile(dir + "/" + FileName(label, index), jpeg);
      bytes += static_cast<int64_t>(jpeg.size());
      if (k < kHistograms) histograms[static_cast<size_t>(k)] = ColourHistogram(img);
    });

    std::string list = "# path label (relative to this file): " + std::to_string(kListPerClass) + " images per class\n";
    for (int c = 0; c < kClasses; ++c) {
      for (int j = 0; j < kListPerClass; ++j) list += FileName(c, j) + " " + std::to_string(c) + "\n";
    }
    conveyor::testimages::WriteFile(dir + "/file_list.txt", std::vector<uint8_t>(list.begin(), list.end()));
    for (int k = 0; k < kHistograms; ++k) {
      char name[32];
      std::snprintf(name, sizeof(name), "/samples_npy/hist_%03d.npy", k);
      WriteNpyFloat32(dir + name, {3, kHistBins}, histograms[static_cast<size_t>(k)]);
    }
    WriteTfRecords(dir, total);
    WriteWebDataset(dir, total);
    const int coco_boxes = WriteCoco(dir, coco_images, threads);
    const long video_bytes = conveyor::sampledata::WriteSampleVideos(dir);
    conveyor::testimages::WriteFile(dir + "/samples/.complete", {});
    std::printf("sample data in %s: %d JPEGs in %d classes (samples/, %.1f MB), file_list.txt (%d files), "
                "%d .npy files (samples_npy/), %d TFRecord files (tfrecord/), %d tar shards (webdataset/), "
                "%d detection scenes with %d boxes (coco/), %d video clips in %d classes (videos/, %.0f KB)\n",
                dir.c_str(), total, kClasses, static_cast<double>(bytes.load()) / 1e6, kClasses * kListPerClass,
                kHistograms, kTfRecordFiles, kWebDatasetShards, coco_images, coco_boxes,
                conveyor::sampledata::kVideoClasses * conveyor::sampledata::kVideosPerClass,
                conveyor::sampledata::kVideoClasses, static_cast<double>(video_bytes) / 1e3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_sample_data: %s\n", e.what());
    return 1;
  }
  return 0;
}
