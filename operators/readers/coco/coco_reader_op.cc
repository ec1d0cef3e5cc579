// readers.coco: images of a COCO dataset with their boxes, labels, masks and ids (DALI's
// fn.readers.coco). The samples are the images of annotations_file in id order (coco_samples.h
// has the box rule); the reader core shuffles, shards, pads and resumes them as readers.file's.
//
// | output    | present with     | dtype   | shape per sample | content                                      |
// |-----------|------------------|---------|------------------|----------------------------------------------|
// | images    | always           | uint8   | [file size]      | the image file's bytes (file_root/file_name) |
// | bboxes    | always           | float32 | [N, 4]           | xywh, or ltrb with ltrb; / (W, H) with ratio |
// | labels    | always           | int32   | [N]              | remapped category (1..C), or the raw id      |
// | polygons  | polygon_masks    | int32   | [P, 3]           | box index, first vertex, one past last       |
// | vertices  | polygon_masks    | float32 | [V, 2]           | x, y (/ (W, H) with ratio)                   |
// | masks     | pixelwise_masks  | int32   | [H, W, 1] (HWC)  | label of the last box covering it, else 0    |
// | image_ids | image_ids        | int32   | [1]              | the image's COCO id                          |
//
// DALI's output sets: a node lists the outputs its arguments enable, in this order (OptionalOutput);
// N = 0 for an image without kept boxes.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/op/registry.h"
#include "operators/readers/coco/coco_annotations.h"
#include "operators/readers/coco/coco_index.h"
#include "operators/readers/coco/coco_masks.h"
#include "operators/readers/coco/coco_samples.h"
#include "operators/readers/reader_op.h"

namespace conveyor::ops {
namespace {

using coco::CocoAnnotations;
using coco::CocoSamples;

enum Output : int { kImages, kBboxes, kLabels, kPolygons, kVertices, kMasks, kImageIds, kNumOutputs };
constexpr const char* kOutputNames[kNumOutputs] = {"images",   "bboxes", "labels",   "polygons",
                                                   "vertices", "masks",  "image_ids"};
constexpr DType kOutputDTypes[kNumOutputs] = {DType::kUInt8, DType::kFloat32, DType::kInt32, DType::kInt32,
                                              DType::kFloat32, DType::kInt32,   DType::kInt32};

// A pixelwise mask is allocated per sample: larger images are refused when the reader is built.
constexpr int64_t kMaxMaskPixels = int64_t{1} << 28;

const OpSchema kCocoReaderSchema =
    WithReaderArgs(
        OpSchema("readers.coco")
            .Doc("Reads a COCO dataset: the images under file_root named by annotations_file, with their boxes, "
                 "labels, ids and masks; sharded and shuffled per epoch like readers.file.")
            .Output("images", "uint8 [file size]: the encoded image file's bytes.")
            .Output("bboxes", "float32 [N, 4]: the kept boxes (xywh, or ltrb), in pixels or / (width, height) with ratio.")
            .Output("labels", "int32 [N]: each box's category (1..C in sorted id order, or the raw id).")
            .OptionalOutput("polygons", "polygon_masks",
                            "int32 [P, 3]: per polygon its box index, first vertex, one past last.")
            .OptionalOutput("vertices", "polygon_masks", "float32 [V, 2]: the polygons' vertices (x, y).")
            .OptionalOutput("masks", "pixelwise_masks", "int32 [H, W, 1]: each pixel's label (0: no object).")
            .OptionalOutput("image_ids", "image_ids", "int32 [1]: the image's id in the annotation file.")
            .RequiredArg<std::string>("annotations_file", "The COCO instances JSON file.")
            .Path()
            .Arg<bool>("ltrb", false, "Boxes as [left, top, right, bottom] (default: [x, y, width, height]).")
            .Arg<bool>("ratio", false, "Box and polygon coordinates divided by the image's width and height.")
            .Arg<bool>("skip_empty", false, "Leave out images without (kept) boxes.")
            .Arg<double>("size_threshold", 0.1, "Drop boxes whose clipped width or height is below this (pixels).")
            .Min(0)
            .Arg<bool>("include_iscrowd", true, "Keep annotations marked iscrowd: 1.")
            .Arg<bool>("avoid_class_remapping", false,
                       "Labels are the raw category ids (default: 1..C, the position among the sorted ids).")
            .Arg<bool>("image_ids", false, "Add the image_ids output.")
            .Arg<bool>("polygon_masks", false, "Add the polygons and vertices outputs, from the annotations' polygons.")
            .Arg<bool>("pixelwise_masks", false,
                       "Add the masks output: polygons and RLE painted with each box's label (not with polygon_masks).")
            .Arg<std::string>("preprocessed_annotations", "",
                              "A binary index of annotations_file, loaded instead of parsing it (checked against "
                              "the file's size, time and content).")
            .Path()
            .Arg<bool>("save_preprocessed_annotations", false,
                       "Parse annotations_file and write the index to preprocessed_annotations."),
        {});

struct Loaded {
  std::shared_ptr<const CocoAnnotations> data;
  CocoSamples samples;
  Dataset dataset;
};

void RefuseFileArgs(const OpSpec& spec, const std::string& where) {
  for (const char* arg : {"file_list", "files", "labels", "file_filters"}) {
    if (spec.HasArg(arg)) {
      throw InvalidArgument(where + ": argument \"" + std::string(arg) +
                            "\" is not for readers.coco: its images are file_root / the annotation file's file_name "
                            "entries, its labels the annotations' categories");
    }
  }
  if (spec.Arg<std::string>("file_root").empty()) {
    throw InvalidArgument(where + ": file_root (the folder of the images) is required");
  }
  if (spec.Arg<bool>("polygon_masks") && spec.Arg<bool>("pixelwise_masks")) {
    throw InvalidArgument(where + ": polygon_masks and pixelwise_masks exclude each other (DALI's rule); choose one");
  }
}

std::shared_ptr<const CocoAnnotations> ReadAnnotations(const OpSpec& spec, const std::string& where) {
  const std::string json = spec.Arg<std::string>("annotations_file");
  const std::string index = spec.Arg<std::string>("preprocessed_annotations");
  const bool save = spec.Arg<bool>("save_preprocessed_annotations");
  if (save && index.empty()) {
    throw InvalidArgument(where + ": save_preprocessed_annotations needs preprocessed_annotations (the file to write)");
  }
  const coco::SourceStamp stamp = coco::StampOf(json, where);
  if (!index.empty() && !save) {
    return std::make_shared<const CocoAnnotations>(coco::LoadCocoIndex(index, json, stamp, where));
  }
  auto data = std::make_shared<const CocoAnnotations>(coco::ParseCocoJson(json, where));
  if (save) coco::SaveCocoIndex(index, *data, stamp, where);
  return data;
}

Loaded Load(const OpSpec& spec) {
  const std::string where = spec.Describe();
  RefuseFileArgs(spec, where);
  Loaded out;
  out.data = ReadAnnotations(spec, where);
  coco::CocoOptions options;
  options.ltrb = spec.Arg<bool>("ltrb");
  options.ratio = spec.Arg<bool>("ratio");
  options.skip_empty = spec.Arg<bool>("skip_empty");
  options.size_threshold = static_cast<float>(spec.Arg<double>("size_threshold"));
  options.include_iscrowd = spec.Arg<bool>("include_iscrowd");
  options.avoid_class_remapping = spec.Arg<bool>("avoid_class_remapping");
  out.samples = coco::SelectSamples(*out.data, options);
  const CocoAnnotations& data = *out.data;
  const std::string json_at = where + ": annotations_file \"" + spec.Arg<std::string>("annotations_file") + "\": ";
  if (out.samples.size() == 0) {
    throw InvalidArgument(json_at + "no images to read (" + std::to_string(data.num_images()) + " in the file" +
                          (options.skip_empty ? ", none with a kept box: skip_empty is on)" : ")"));
  }
  const std::string root = spec.Arg<std::string>("file_root");
  const bool masks = spec.Arg<bool>("pixelwise_masks");
  out.dataset.paths.reserve(out.samples.size());
  for (uint32_t image : out.samples.images) {
    const std::string image_at = json_at + "image id " + std::to_string(data.image_ids[image]) + " (\"" +
                                 std::string(data.file_name(image)) + "\"): ";
    const int64_t pixels = int64_t{data.image_widths[image]} * data.image_heights[image];
    if (masks && pixels > kMaxMaskPixels) {
      throw InvalidArgument(image_at + std::to_string(data.image_widths[image]) + "x" +
                            std::to_string(data.image_heights[image]) + " is more than " +
                            std::to_string(kMaxMaskPixels) + " pixels for a pixelwise mask");
    }
    std::string path = root + "/" + std::string(data.file_name(image));
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      throw InvalidArgument(image_at + "file \"" + path + "\": " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) throw InvalidArgument(image_at + "file \"" + path + "\" is not a regular file");
    out.dataset.paths.push_back(std::move(path));
    out.dataset.labels.push_back(data.image_ids[image]);
  }
  return out;
}

class CocoReaderOp final : public ReaderOp {
 public:
  explicit CocoReaderOp(const OpSpec& spec) : CocoReaderOp(spec, Load(spec)) {}

 protected:
  OutputDescs SetupSamples(const Workspace& ws, const std::vector<OpenFile>& files) override {
    (void)ws;
    OutputDescs d(static_cast<size_t>(num_slots_));
    for (int o = 0; o < kNumOutputs; ++o) {
      if (slot_[o] >= 0) d[static_cast<size_t>(slot_[o])].dtype = kOutputDTypes[o];
    }
    if (slot_[kMasks] >= 0) d[static_cast<size_t>(slot_[kMasks])].layout = Layout("HWC");
    const auto add = [&](Output o, Shape shape) {
      if (slot_[o] >= 0) d[static_cast<size_t>(slot_[o])].shapes.push_back(std::move(shape));
    };
    for (const OpenFile& f : files) {
      const auto s = static_cast<size_t>(f.index);
      const auto n = static_cast<int64_t>(samples_.count(s));
      int64_t polygons = 0, vertices = 0;
      if (slot_[kPolygons] >= 0) CountPolygons(s, polygons, vertices);
      const uint32_t image = samples_.images[s];
      add(kImages, Shape{f.size});
      add(kBboxes, Shape{n, 4});
      add(kLabels, Shape{n});
      add(kPolygons, Shape{polygons, 3});
      add(kVertices, Shape{vertices, 2});
      add(kMasks, Shape{data_->image_heights[image], data_->image_widths[image], 1});
      add(kImageIds, Shape{1});
    }
    return d;
  }

  bool OutputIsFileBytes(int output) const override { return output == slot_[kImages]; }

  void ReadSample(Workspace& ws, int i, const OpenFile& file) override {
    const auto s = static_cast<size_t>(file.index);
    ReadExactly(file, Out(ws, kImages, i), file.size, 0);
    const uint64_t b = samples_.begin(s), n = samples_.count(s);
    if (n > 0) {
      std::memcpy(Out(ws, kBboxes, i), &samples_.boxes[4 * b], 4 * n * sizeof(float));
      std::memcpy(Out(ws, kLabels, i), &samples_.labels[b], n * sizeof(int32_t));
    }
    const uint32_t image = samples_.images[s];
    if (slot_[kImageIds] >= 0) *static_cast<int32_t*>(Out(ws, kImageIds, i)) = data_->image_ids[image];
    if (slot_[kPolygons] >= 0) {
      WritePolygons(s, static_cast<int32_t*>(Out(ws, kPolygons, i)), static_cast<float*>(Out(ws, kVertices, i)));
    }
    if (slot_[kMasks] >= 0) PaintMask(s, static_cast<int32_t*>(Out(ws, kMasks, i)));
  }

 private:
  CocoReaderOp(const OpSpec& spec, Loaded loaded)
      : ReaderOp(spec, std::move(loaded.dataset)),
        data_(std::move(loaded.data)),
        samples_(std::move(loaded.samples)),
        ratio_(spec.Arg<bool>("ratio")) {
    for (int o = 0; o < kNumOutputs; ++o) {
      slot_[o] = spec.OutputSlot(kOutputNames[o]);
      if (slot_[o] >= 0) ++num_slots_;
    }
  }

  // Sample i of output `o` (enabled), wherever its slot is.
  void* Out(Workspace& ws, Output o, int i) const { return ws.OutputCpu(slot_[o]).raw_sample(i); }

  void CountPolygons(size_t s, int64_t& polygons, int64_t& vertices) const {
    for (uint64_t k = samples_.begin(s); k < samples_.box_ends[s]; ++k) {
      const uint64_t a = samples_.anns[k];
      const uint64_t pb = CocoAnnotations::Begin(data_->ann_poly_ends, a), pe = data_->ann_poly_ends[a];
      polygons += static_cast<int64_t>(pe - pb);
      if (pe > pb) vertices += static_cast<int64_t>(data_->poly_ends[pe - 1] - CocoAnnotations::Begin(data_->poly_ends, pb)) / 2;
    }
  }

  // polygons: [box index, first vertex, one past last]; vertices (x, y), / (W, H) with ratio.
  void WritePolygons(size_t s, int32_t* polygons, float* vertices) const {
    const uint32_t image = samples_.images[s];
    const float sx = ratio_ ? 1.0f / static_cast<float>(data_->image_widths[image]) : 1.0f;
    const float sy = ratio_ ? 1.0f / static_cast<float>(data_->image_heights[image]) : 1.0f;
    int32_t vertex = 0;
    for (uint64_t k = samples_.begin(s); k < samples_.box_ends[s]; ++k) {
      const uint64_t a = samples_.anns[k];
      for (uint64_t p = CocoAnnotations::Begin(data_->ann_poly_ends, a); p < data_->ann_poly_ends[a]; ++p) {
        const uint64_t cb = CocoAnnotations::Begin(data_->poly_ends, p), ce = data_->poly_ends[p];
        *polygons++ = static_cast<int32_t>(k - samples_.begin(s));
        *polygons++ = vertex;
        for (uint64_t c = cb; c < ce; c += 2) {
          *vertices++ = data_->coords[c] * sx;
          *vertices++ = data_->coords[c + 1] * sy;
        }
        vertex += static_cast<int32_t>((ce - cb) / 2);
        *polygons++ = vertex;
      }
    }
  }

  // Boxes in order: a later box's mask overwrites an earlier one's.
  void PaintMask(size_t s, int32_t* map) const {
    const uint32_t image = samples_.images[s];
    const int64_t h = data_->image_heights[image], w = data_->image_widths[image];
    std::fill_n(map, h * w, 0);
    for (uint64_t k = samples_.begin(s); k < samples_.box_ends[s]; ++k) {
      const uint64_t a = samples_.anns[k];
      const int32_t label = samples_.labels[k];
      for (uint64_t p = CocoAnnotations::Begin(data_->ann_poly_ends, a); p < data_->ann_poly_ends[a]; ++p) {
        const uint64_t cb = CocoAnnotations::Begin(data_->poly_ends, p);
        coco::PaintPolygon(data_->coords.data() + cb, data_->poly_ends[p] - cb, h, w, label, map);
      }
      const uint64_t rb = CocoAnnotations::Begin(data_->ann_rle_ends, a);
      if (data_->ann_rle_ends[a] > rb) coco::PaintRle(data_->rle_counts.data() + rb, data_->ann_rle_ends[a] - rb, h, w, label, map);
    }
  }

  std::shared_ptr<const CocoAnnotations> data_;
  CocoSamples samples_;
  bool ratio_;
  int slot_[kNumOutputs] = {};  // each output's slot, -1 when its argument leaves it out
  int num_slots_ = 0;
};

const OperatorRegistration<CocoReaderOp> kRegistration(kCocoReaderSchema);

}  // namespace
}  // namespace conveyor::ops
