// ParseCocoJson: the COCO instances file through nlohmann-json's parser callback. Each element of
// "images", "annotations" and "categories" is handed over as a small DOM when its closing brace is
// read, converted into flat arrays, and discarded: the document never exists whole (a 450 MB file
// would take several GB as one nlohmann DOM). Other top-level keys ("info", "licenses") are
// skipped. Annotations are then grouped by image (images sorted by id).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "operators/readers/coco/coco_annotations.h"
#include "operators/readers/coco/coco_masks.h"

namespace conveyor::ops::coco {
namespace {

using json = nlohmann::json;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();

// "number 12.5", "string \"abc\"", cut to a readable length.
std::string Got(const json& v) {
  std::string text = v.dump();
  if (text.size() > 48) text = text.substr(0, 45) + "...";
  return std::string(v.type_name()) + " " + text;
}

// Annotations in file order, before they are grouped by image.
struct Pending {
  std::vector<int64_t> ids, image_ids;
  std::vector<int32_t> categories;
  std::vector<float> boxes;
  std::vector<uint8_t> crowd;
  std::vector<uint64_t> poly_ends, polys;  // per annotation into polys; per polygon into coords
  std::vector<float> coords;
  std::vector<uint64_t> rle_ends;  // per annotation into counts
  std::vector<uint32_t> counts;
  std::vector<int64_t> rle_sizes;  // h, w per annotation (-1, -1: no RLE)
};

class CocoJsonParser {
 public:
  CocoJsonParser(std::string path, std::string where) : path_(std::move(path)), where_(std::move(where)) {}

  CocoAnnotations Parse() {
    const std::string text = ReadAll();
    json top;
    try {
      top = json::parse(text.begin(), text.end(),
                        [this](int depth, json::parse_event_t event, json& parsed) { return OnEvent(depth, event, parsed); });
    } catch (const json::exception& e) {
      throw InvalidArgument(Prefix() + "not valid JSON: " + e.what());
    }
    if (!top.is_object()) throw InvalidArgument(Prefix() + "expected a JSON object at the top, got " + Got(top));
    for (const char* key : {"images", "annotations", "categories"}) {
      auto it = top.find(key);
      if (it == top.end()) throw InvalidArgument(Prefix() + "no \"" + key + "\" array (a COCO instances file has one)");
      if (!it->is_array()) throw InvalidArgument(Prefix() + "\"" + key + "\": expected an array, got " + Got(*it));
    }
    return Assemble();
  }

 private:
  enum class Section { kOther, kImages, kAnnotations, kCategories };

  std::string Prefix() const { return where_ + ": annotations_file \"" + path_ + "\": "; }
  [[noreturn]] void Fail(const std::string& at, const std::string& what) const {
    throw InvalidArgument(Prefix() + at + ": " + what);
  }

  std::string ReadAll() const {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InvalidArgument(Prefix() + "cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw InvalidArgument(Prefix() + "not a regular file");
    }
    std::string text(static_cast<size_t>(st.st_size), '\0');
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        throw InvalidArgument(Prefix() + "read failed after " + std::to_string(done) + " of " +
                              std::to_string(text.size()) + " bytes" + (n < 0 ? std::string(": ") + std::strerror(errno) : ""));
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    return text;
  }

  // The callback: depth 1 holds the top-level keys, depth 2 the elements of their arrays.
  bool OnEvent(int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (depth == 1 && event == E::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      pending_ = key == "images" ? Section::kImages
                 : key == "annotations" ? Section::kAnnotations
                 : key == "categories" ? Section::kCategories : Section::kOther;
      section_ = Section::kOther;
      element_ = 0;
      return pending_ != Section::kOther;  // other keys' values are parsed and dropped
    }
    if (depth == 1 && event == E::array_start) section_ = pending_;
    if (depth == 1 && (event == E::array_end || event == E::object_end)) section_ = Section::kOther;
    if (depth != 2 || section_ == Section::kOther) return true;
    if (event == E::object_start || event == E::array_start) return true;  // its end brings the whole element
    const size_t index = element_++;
    if (!parsed.is_object()) Fail(SectionName() + "[" + std::to_string(index) + "]", "expected an object, got " + Got(parsed));
    if (section_ == Section::kImages) OnImage(parsed, index);
    if (section_ == Section::kCategories) OnCategory(parsed, index);
    if (section_ == Section::kAnnotations) OnAnnotation(parsed, index);
    return false;  // converted: drop the DOM
  }

  std::string SectionName() const {
    return section_ == Section::kImages ? "images" : section_ == Section::kCategories ? "categories" : "annotations";
  }

  // A required integer member in [min, max] (an integral float such as 640.0 counts).
  int64_t Int(const json& obj, const char* key, const std::string& at, int64_t min, int64_t max) const {
    auto it = obj.find(key);
    if (it == obj.end()) Fail(at, "no \"" + std::string(key) + "\"");
    const json& v = *it;
    bool ok = false;
    int64_t value = 0;
    if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      ok = u <= static_cast<uint64_t>(max);
      value = ok ? static_cast<int64_t>(u) : 0;
    } else if (v.is_number_integer()) {
      value = v.get<int64_t>();
      ok = true;
    } else if (v.is_number_float()) {
      const double d = v.get<double>();
      // Within 2^53 a double holds every integer exactly (and converts without overflow).
      ok = std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 9007199254740992.0 &&
           d >= static_cast<double>(min) && d <= static_cast<double>(max);
      value = ok ? static_cast<int64_t>(d) : 0;
    }
    if (!ok || value < min || value > max) {
      Fail(at, "\"" + std::string(key) + "\": expected an integer in [" + std::to_string(min) + ", " +
                   std::to_string(max) + "], got " + Got(v));
    }
    return value;
  }

  static std::string At(const char* section, size_t index, const json& obj) {
    std::string at = std::string(section) + "[" + std::to_string(index) + "]";
    auto id = obj.find("id");
    if (id != obj.end() && id->is_number()) at += " (id " + id->dump() + ")";
    return at;
  }

  void OnImage(const json& obj, size_t index) {
    const std::string at = At("images", index, obj);
    image_ids_.push_back(Int(obj, "id", at, kInt32Min, kInt32Max));
    widths_.push_back(static_cast<int32_t>(Int(obj, "width", at, 1, kInt32Max)));
    heights_.push_back(static_cast<int32_t>(Int(obj, "height", at, 1, kInt32Max)));
    auto name = obj.find("file_name");
    if (name == obj.end()) Fail(at, "no \"file_name\"");
    if (!name->is_string()) Fail(at, "\"file_name\": expected a string, got " + Got(*name));
    const std::string& file = name->get_ref<const std::string&>();
    if (file.empty() || file[0] == '/' || file.find('\0') != std::string::npos) {
      Fail(at, "\"file_name\": expected a path relative to file_root, got " + Got(*name));
    }
    names_.push_back(file);
  }

  void OnCategory(const json& obj, size_t index) {
    const std::string at = At("categories", index, obj);
    const auto id = static_cast<int32_t>(Int(obj, "id", at, kInt32Min, kInt32Max));
    if (!category_set_.insert(id).second) Fail(at, "category id " + std::to_string(id) + " appears twice");
    category_ids_.push_back(id);
  }

  void OnAnnotation(const json& obj, size_t index) {
    const std::string at = At("annotations", index, obj);
    ann_.ids.push_back(Int(obj, "id", at, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
    ann_.image_ids.push_back(Int(obj, "image_id", at, kInt32Min, kInt32Max));
    ann_.categories.push_back(static_cast<int32_t>(Int(obj, "category_id", at, kInt32Min, kInt32Max)));
    ann_.crowd.push_back(obj.contains("iscrowd") ? static_cast<uint8_t>(Int(obj, "iscrowd", at, 0, 1)) : 0);
    auto bbox = obj.find("bbox");
    if (bbox == obj.end()) Fail(at, "no \"bbox\"");
    if (!bbox->is_array() || bbox->size() != 4) Fail(at, "\"bbox\": expected [x, y, width, height], got " + Got(*bbox));
    float box[4];
    for (int k = 0; k < 4; ++k) box[k] = Coordinate((*bbox)[static_cast<size_t>(k)], at + ": \"bbox\"");
    if (box[2] < 0 || box[3] < 0) {
      Fail(at, "\"bbox\": negative size (width " + (*bbox)[2].dump() + ", height " + (*bbox)[3].dump() + ")");
    }
    ann_.boxes.insert(ann_.boxes.end(), box, box + 4);
    Segmentation(obj, at);
  }

  float Coordinate(const json& v, const std::string& at) const {
    if (!v.is_number()) Fail(at, "expected a number, got " + Got(v));
    const auto f = static_cast<float>(v.get<double>());
    if (!std::isfinite(f)) Fail(at, "expected a finite number, got " + Got(v));
    return f;
  }

  void Segmentation(const json& obj, const std::string& at) {
    auto seg = obj.find("segmentation");
    int64_t rle_h = -1, rle_w = -1;
    if (seg == obj.end()) {
    } else if (seg->is_array()) {
      for (size_t p = 0; p < seg->size(); ++p) {
        const json& poly = (*seg)[p];
        const std::string here = at + ": \"segmentation\"[" + std::to_string(p) + "]";
        if (!poly.is_array() || poly.size() % 2 != 0) Fail(here, "expected a polygon [x0, y0, x1, y1, ...], got " + Got(poly));
        for (const json& c : poly) ann_.coords.push_back(Coordinate(c, here));
        ann_.polys.push_back(ann_.coords.size());
      }
    } else if (seg->is_object()) {
      const std::string here = at + ": \"segmentation\"";
      auto size = seg->find("size");
      if (size == seg->end() || !size->is_array() || size->size() != 2 || !(*size)[0].is_number_integer() ||
          !(*size)[1].is_number_integer() || (*size)[0].get<int64_t>() < 0 || (*size)[1].get<int64_t>() < 0) {
        Fail(here, "an RLE needs \"size\": [height, width]" + (size == seg->end() ? std::string() : ", got " + Got(*size)));
      }
      rle_h = (*size)[0].get<int64_t>();
      rle_w = (*size)[1].get<int64_t>();
      auto counts = seg->find("counts");
      if (counts == seg->end()) Fail(here, "an RLE needs \"counts\"");
      if (counts->is_string()) {
        const std::string bad = DecodeRleString(counts->get_ref<const std::string&>(), ann_.counts);
        if (!bad.empty()) Fail(here + ": \"counts\"", "not a compressed RLE: " + bad);
      } else if (counts->is_array()) {
        for (size_t k = 0; k < counts->size(); ++k) {
          const json& c = (*counts)[k];
          if (!c.is_number_integer() || c.get<int64_t>() < 0 || c.get<int64_t>() > std::numeric_limits<uint32_t>::max()) {
            Fail(here + ": \"counts\"[" + std::to_string(k) + "]", "expected a run length in [0, 2^32-1], got " + Got(c));
          }
          ann_.counts.push_back(static_cast<uint32_t>(c.get<int64_t>()));
        }
      } else {
        Fail(here + ": \"counts\"", "expected a list of run lengths or a compressed RLE string, got " + Got(*counts));
      }
    } else {
      Fail(at + ": \"segmentation\"", "expected a list of polygons or an RLE object, got " + Got(*seg));
    }
    ann_.poly_ends.push_back(ann_.polys.size());
    ann_.rle_ends.push_back(ann_.counts.size());
    ann_.rle_sizes.push_back(rle_h);
    ann_.rle_sizes.push_back(rle_w);
  }

  CocoAnnotations Assemble();
  // How messages name element i of a section once it has been converted (the id is known valid).
  std::string ImageWhere(size_t i) const {
    return "images[" + std::to_string(i) + "] (id " + std::to_string(image_ids_[i]) + ")";
  }
  std::string AnnWhere(size_t a) const {
    return "annotations[" + std::to_string(a) + "] (id " + std::to_string(ann_.ids[a]) + ")";
  }

  std::string path_, where_;
  Section pending_ = Section::kOther, section_ = Section::kOther;
  size_t element_ = 0;
  std::vector<int64_t> image_ids_;
  std::vector<int32_t> widths_, heights_;
  std::vector<std::string> names_;
  std::vector<int32_t> category_ids_;
  std::unordered_set<int32_t> category_set_;
  Pending ann_;
};

CocoAnnotations CocoJsonParser::Assemble() {
  CocoAnnotations out;
  const size_t num_images = image_ids_.size();
  std::vector<size_t> order(num_images);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return image_ids_[a] < image_ids_[b]; });
  std::unordered_map<int64_t, size_t> image_of;  // id -> sorted position
  image_of.reserve(num_images);
  for (size_t k = 0; k < num_images; ++k) {
    const size_t i = order[k];
    if (k > 0 && image_ids_[order[k - 1]] == image_ids_[i]) {
      Fail(ImageWhere(i), "image id " + std::to_string(image_ids_[i]) + " appears twice (also " + ImageWhere(order[k - 1]) + ")");
    }
    image_of[image_ids_[i]] = k;
    out.image_ids.push_back(static_cast<int32_t>(image_ids_[i]));
    out.image_widths.push_back(widths_[i]);
    out.image_heights.push_back(heights_[i]);
    out.names += names_[i];
    out.name_ends.push_back(out.names.size());
  }
  out.category_ids = category_ids_;
  // Resolve and check each annotation, then group by image (stable: file order within an image).
  const size_t num_ann = ann_.ids.size();
  std::vector<size_t> image_pos(num_ann);
  std::vector<uint64_t> per_image(num_images + 1, 0);
  for (size_t a = 0; a < num_ann; ++a) {
    auto it = image_of.find(ann_.image_ids[a]);
    if (it == image_of.end()) Fail(AnnWhere(a), "image_id " + std::to_string(ann_.image_ids[a]) + " is not among the images");
    if (category_set_.count(ann_.categories[a]) == 0) {
      Fail(AnnWhere(a), "category_id " + std::to_string(ann_.categories[a]) + " is not among the categories");
    }
    image_pos[a] = it->second;
    ++per_image[it->second + 1];
    const int64_t h = ann_.rle_sizes[2 * a], w = ann_.rle_sizes[2 * a + 1];
    if (h < 0) continue;
    const size_t img = it->second;
    if (h != out.image_heights[img] || w != out.image_widths[img]) {
      Fail(AnnWhere(a) + ": \"segmentation\"", "RLE size [" + std::to_string(h) + ", " + std::to_string(w) +
                                                     "] differs from image " + std::to_string(out.image_ids[img]) +
                                                     "'s [height, width] = [" + std::to_string(out.image_heights[img]) +
                                                     ", " + std::to_string(out.image_widths[img]) + "]");
    }
    const uint64_t b = CocoAnnotations::Begin(ann_.rle_ends, a);
    const std::string bad = CheckRleSize(ann_.counts.data() + b, ann_.rle_ends[a] - b, h, w);
    if (!bad.empty()) Fail(AnnWhere(a) + ": \"segmentation\"", bad);
  }
  std::partial_sum(per_image.begin(), per_image.end(), per_image.begin());
  std::vector<size_t> slot(num_ann);
  {
    std::vector<uint64_t> next(per_image.begin(), per_image.end() - 1);
    for (size_t a = 0; a < num_ann; ++a) slot[next[image_pos[a]]++] = a;
  }
  out.image_ann_ends.assign(per_image.begin() + 1, per_image.end());
  for (size_t s = 0; s < num_ann; ++s) {
    const size_t a = slot[s];
    out.ann_ids.push_back(ann_.ids[a]);
    out.ann_categories.push_back(ann_.categories[a]);
    out.ann_boxes.insert(out.ann_boxes.end(), ann_.boxes.begin() + static_cast<int64_t>(4 * a),
                         ann_.boxes.begin() + static_cast<int64_t>(4 * a + 4));
    out.ann_crowd.push_back(ann_.crowd[a]);
    for (uint64_t p = CocoAnnotations::Begin(ann_.poly_ends, a); p < ann_.poly_ends[a]; ++p) {
      const uint64_t cb = CocoAnnotations::Begin(ann_.polys, p);
      out.coords.insert(out.coords.end(), ann_.coords.begin() + static_cast<int64_t>(cb),
                        ann_.coords.begin() + static_cast<int64_t>(ann_.polys[p]));
      out.poly_ends.push_back(out.coords.size());
    }
    out.ann_poly_ends.push_back(out.poly_ends.size());
    const uint64_t rb = CocoAnnotations::Begin(ann_.rle_ends, a);
    out.rle_counts.insert(out.rle_counts.end(), ann_.counts.begin() + static_cast<int64_t>(rb),
                          ann_.counts.begin() + static_cast<int64_t>(ann_.rle_ends[a]));
    out.ann_rle_ends.push_back(out.rle_counts.size());
  }
  return out;
}

}  // namespace

CocoAnnotations ParseCocoJson(const std::string& path, const std::string& where) {
  return CocoJsonParser(path, where).Parse();
}

}  // namespace conveyor::ops::coco
