// readers.coco through OpHarness on generated datasets (coco_fixture.h): every output of every
// sample against the values the fixture computes independently — bytes, boxes under each option,
// labels remapped or raw, ids, polygons and vertices, pixelwise masks painted from polygons and
// both RLE forms — and the preprocessed-annotations index giving the same outputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "core/op/harness.h"
#include "core/util/strings.h"
#include "tests/operators/readers/coco/coco_fixture.h"

namespace conveyor {
namespace {

using testing::CocoExpect;
using testing::CocoSet;
using testing::Expected;
using testing::ExpectedSample;
using testing::MakeCocoSet;

// Without outputs yet (WithOutputs adds them once the arguments are set); image_ids on.
OpSpec Coco(const CocoSet& set) {
  return OpSpec("readers.coco", "r").SetArg("file_root", set.root).SetArg("annotations_file", set.json).SetArg(
      "image_ids", true);
}

// DALI's output sets, written out here independently of the schema: images, bboxes, labels, then
// polygons and vertices with polygon_masks, masks with pixelwise_masks, image_ids with image_ids.
std::vector<std::string> OutputSet(const OpSpec& spec) {
  const auto on = [&](const char* arg) { return spec.HasArg(arg) && spec.args().at(arg).As<bool>(); };
  std::vector<std::string> names = {"images", "bboxes", "labels"};
  if (on("polygon_masks")) names.insert(names.end(), {"polygons", "vertices"});
  if (on("pixelwise_masks")) names.push_back("masks");
  if (on("image_ids")) names.push_back("image_ids");
  return names;
}

OpSpec WithOutputs(OpSpec spec) {
  for (const std::string& name : OutputSet(spec)) spec.AddOutput(name);
  return spec;
}

// The slot of output `name`, -1 when the set leaves it out.
int Slot(const OpSpec& spec, const std::string& name) {
  const std::vector<std::string> names = OutputSet(spec);
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

template <typename T>
std::vector<T> Values(const TensorListCPU& t, int i) {
  const auto* p = static_cast<const T*>(t.raw_sample(i));
  return std::vector<T>(p, p + t.shape(i).num_elements());
}

struct Sample {
  int32_t id = 0;
  std::vector<uint8_t> bytes;
  Shape box_shape, mask_shape;
  std::vector<float> boxes, vertices;
  std::vector<int32_t> labels, polygons, mask;
};

std::vector<Sample> ReadAll(OpSpec spec, int batch, int iterations) {
  const int ids = Slot(spec, "image_ids"), polygons = Slot(spec, "polygons"), vertices = Slot(spec, "vertices"),
            masks = Slot(spec, "masks");
  OpHarness h(WithOutputs(std::move(spec)), Device::kCpu, batch);
  std::vector<Sample> out;
  for (int it = 0; it < iterations; ++it) {
    h.set_iteration(it);
    h.Run();
    for (int i = 0; i < batch; ++i) {
      Sample s;
      s.id = Values<int32_t>(h.OutputCpu(ids), i).at(0);
      EXPECT_EQ(h.OutputCpu(ids).shape(i), Shape{1});
      s.bytes = Values<uint8_t>(h.OutputCpu(0), i);
      s.box_shape = h.OutputCpu(1).shape(i);
      s.boxes = Values<float>(h.OutputCpu(1), i);
      s.labels = Values<int32_t>(h.OutputCpu(2), i);
      EXPECT_EQ(h.OutputCpu(2).shape(i), Shape{static_cast<int64_t>(s.labels.size())});
      if (polygons >= 0) {
        s.polygons = Values<int32_t>(h.OutputCpu(polygons), i);
        s.vertices = Values<float>(h.OutputCpu(vertices), i);
        EXPECT_EQ(h.OutputCpu(polygons).shape(i), (Shape{static_cast<int64_t>(s.polygons.size() / 3), 3}));
      }
      if (masks >= 0) {
        s.mask_shape = h.OutputCpu(masks).shape(i);
        s.mask = Values<int32_t>(h.OutputCpu(masks), i);
        EXPECT_EQ(h.OutputCpu(masks).layout(), Layout("HWC"));
      }
      EXPECT_EQ(h.OutputCpu(1).dtype(), DType::kFloat32);
      out.push_back(std::move(s));
    }
  }
  return out;
}

void ExpectBoxes(const Sample& s, const ExpectedSample& e) {
  ASSERT_EQ(s.box_shape, (Shape{static_cast<int64_t>(e.labels.size()), 4})) << "image " << s.id;
  for (size_t k = 0; k < e.boxes.size(); ++k) EXPECT_NEAR(s.boxes[k], e.boxes[k], 1e-4) << "image " << s.id << " [" << k << "]";
  EXPECT_EQ(s.labels, e.labels) << "image " << s.id;
}

std::vector<int32_t> SortedIds(const CocoSet& set) {
  std::vector<int32_t> ids;
  for (const auto& im : set.images) ids.push_back(im.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(CocoReader, ServesImagesInIdOrderWithTheirBoxesLabelsAndMasks) {
  const CocoSet set = MakeCocoSet(15, std::random_device{}());
  const std::vector<Sample> got = ReadAll(Coco(set).SetArg("pixelwise_masks", true), 4, 4);  // 16: one epoch and one more
  const std::vector<int32_t> ids = SortedIds(set);
  ASSERT_EQ(got.size(), 16u);
  int boxes = 0, painted = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    const Sample& s = got[k];
    EXPECT_EQ(s.id, ids[k % ids.size()]) << "sample " << k;
    const testing::CocoImage& im = set.Image(s.id);
    EXPECT_EQ(s.bytes, im.jpeg) << "image " << s.id;
    const ExpectedSample e = Expected(set, s.id, {});
    ExpectBoxes(s, e);
    EXPECT_EQ(s.mask_shape, (Shape{im.height, im.width, 1}));
    EXPECT_EQ(s.mask, testing::ExpectedMask(im, e)) << "image " << s.id;
    boxes += static_cast<int>(e.labels.size());
    painted += static_cast<int>(std::count_if(s.mask.begin(), s.mask.end(), [](int32_t v) { return v != 0; }));
  }
  EXPECT_GE(boxes, 12) << "12 of the 15 images hold a box the defaults keep";
  EXPECT_GT(painted, 0) << "the masks should hold objects";
}

TEST(CocoReader, BoxOptionsFollowTheBoxRule) {
  const CocoSet set = MakeCocoSet(10, std::random_device{}());
  struct Case {
    const char* name;
    std::function<void(OpSpec&)> set_args;
    CocoExpect expect;
  };
  const std::vector<Case> cases = {
      {"ltrb", [](OpSpec& s) { s.SetArg("ltrb", true); }, {.ltrb = true}},
      {"ratio", [](OpSpec& s) { s.SetArg("ratio", true); }, {.ratio = true}},
      {"ltrb+ratio", [](OpSpec& s) { s.SetArg("ltrb", true).SetArg("ratio", true); }, {.ltrb = true, .ratio = true}},
      {"no crowd", [](OpSpec& s) { s.SetArg("include_iscrowd", false); }, {.include_iscrowd = false}},
      {"raw ids", [](OpSpec& s) { s.SetArg("avoid_class_remapping", true); }, {.avoid_class_remapping = true}},
      {"threshold 0", [](OpSpec& s) { s.SetArg("size_threshold", 0.0); }, {.size_threshold = 0.0}},
      {"threshold 6", [](OpSpec& s) { s.SetArg("size_threshold", 6.0); }, {.size_threshold = 6.0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    OpSpec spec = Coco(set);
    c.set_args(spec);
    for (const Sample& s : ReadAll(spec, 5, 2)) ExpectBoxes(s, Expected(set, s.id, c.expect));
  }
}

TEST(CocoReader, SkipEmptyLeavesOutImagesWithoutKeptBoxes) {
  const CocoSet set = MakeCocoSet(20, std::random_device{}());
  std::vector<int32_t> kept;
  for (int32_t id : SortedIds(set)) {
    if (!Expected(set, id, {}).labels.empty()) kept.push_back(id);
  }
  ASSERT_LT(kept.size(), set.images.size()) << "every fifth image has no annotation";
  OpHarness h(WithOutputs(Coco(set).SetArg("skip_empty", true)), Device::kCpu, 1);
  EXPECT_EQ(h.op().EpochSize(1), static_cast<int64_t>(kept.size()));
  for (int32_t id : kept) {
    h.Run();
    EXPECT_EQ(Values<int32_t>(h.OutputCpu(3), 0).at(0), id);
    EXPECT_GT(h.OutputCpu(1).shape(0)[0], 0);
  }
}

TEST(CocoReader, OutputsFollowDalisSets) {
  const CocoSet set = MakeCocoSet(4, std::random_device{}());
  const std::map<std::string, DType> dtypes = {{"images", DType::kUInt8},    {"bboxes", DType::kFloat32},
                                               {"labels", DType::kInt32},    {"polygons", DType::kInt32},
                                               {"vertices", DType::kFloat32}, {"masks", DType::kInt32},
                                               {"image_ids", DType::kInt32}};
  for (const char* masks : {"", "polygon_masks", "pixelwise_masks"}) {
    for (const bool ids : {false, true}) {
      OpSpec spec = OpSpec("readers.coco", "r").SetArg("file_root", set.root).SetArg("annotations_file", set.json);
      if (*masks != 0) spec.SetArg(masks, true);
      if (ids) spec.SetArg("image_ids", true);
      spec = WithOutputs(std::move(spec));
      SCOPED_TRACE(Join(spec.outputs(), ", "));
      ASSERT_NO_THROW(spec.Validate());
      for (const auto& [name, dtype] : dtypes) EXPECT_EQ(spec.OutputSlot(name), Slot(spec, name)) << name;
      OpHarness h(spec, Device::kCpu, 2);
      h.Run();
      ASSERT_EQ(h.descs().size(), spec.outputs().size());
      for (size_t o = 0; o < spec.outputs().size(); ++o) {
        EXPECT_EQ(h.OutputCpu(static_cast<int>(o)).dtype(), dtypes.at(spec.outputs()[o])) << spec.outputs()[o];
        EXPECT_EQ(h.OutputCpu(static_cast<int>(o)).num_samples(), 2);
      }
    }
  }
}

TEST(CocoReader, EmptyImagesGiveZeroBoxes) {
  const CocoSet set = MakeCocoSet(5, std::random_device{}());  // image 4 of the file has no annotation
  for (const Sample& s : ReadAll(Coco(set), 5, 1)) {
    if (s.id != set.images[4].id) continue;
    EXPECT_EQ(s.box_shape, (Shape{0, 4}));
    EXPECT_TRUE(s.labels.empty());
  }
}

TEST(CocoReader, PolygonMasksListEachKeptBoxsPolygons) {
  const CocoSet set = MakeCocoSet(12, std::random_device{}());
  for (const bool ratio : {false, true}) {
    SCOPED_TRACE(ratio ? "ratio" : "pixels");
    for (const Sample& s : ReadAll(Coco(set).SetArg("polygon_masks", true).SetArg("ratio", ratio), 6, 2)) {
      const testing::CocoImage& im = set.Image(s.id);
      const ExpectedSample e = Expected(set, s.id, {.ratio = ratio});
      std::vector<int32_t> polygons;
      std::vector<float> vertices;
      for (size_t k = 0; k < e.anns.size(); ++k) {
        for (const auto& poly : e.anns[k]->polygons) {  // RLE annotations have none
          polygons.push_back(static_cast<int32_t>(k));
          polygons.push_back(static_cast<int32_t>(vertices.size() / 2));
          for (size_t c = 0; c < poly.size(); c += 2) {
            vertices.push_back(static_cast<float>(poly[c]) / (ratio ? static_cast<float>(im.width) : 1.0f));
            vertices.push_back(static_cast<float>(poly[c + 1]) / (ratio ? static_cast<float>(im.height) : 1.0f));
          }
          polygons.push_back(static_cast<int32_t>(vertices.size() / 2));
        }
      }
      EXPECT_EQ(s.polygons, polygons) << "image " << s.id;
      ASSERT_EQ(s.vertices.size(), vertices.size()) << "image " << s.id;
      for (size_t v = 0; v < vertices.size(); ++v) EXPECT_NEAR(s.vertices[v], vertices[v], 1e-5) << "image " << s.id;
    }
  }
}

TEST(CocoReader, PreprocessedAnnotationsGiveTheSameOutputsForAnyOptions) {
  const CocoSet set = MakeCocoSet(9, std::random_device{}());
  const std::string index = set.dir + "/instances.idx";
  // Saved with default options, loaded with others: the index holds the file, not a configuration.
  ReadAll(Coco(set).SetArg("preprocessed_annotations", index).SetArg("save_preprocessed_annotations", true), 1, 1);
  ASSERT_TRUE(std::filesystem::exists(index));
  for (const bool skip : {false, true}) {
    OpSpec from_json = Coco(set).SetArg("skip_empty", skip).SetArg("pixelwise_masks", true).SetArg("ltrb", true);
    OpSpec from_index = from_json;
    from_index.SetArg("preprocessed_annotations", index);
    const std::vector<Sample> a = ReadAll(from_json, 3, 3), b = ReadAll(from_index, 3, 3);
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].id, b[k].id);
      EXPECT_EQ(a[k].boxes, b[k].boxes);
      EXPECT_EQ(a[k].labels, b[k].labels);
      EXPECT_EQ(a[k].mask, b[k].mask);
      EXPECT_EQ(a[k].bytes, b[k].bytes);
    }
  }
}

}  // namespace
}  // namespace conveyor
