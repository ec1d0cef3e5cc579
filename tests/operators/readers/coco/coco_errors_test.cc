// Every error readers.coco raises, each with its message: arguments, the annotation file (syntax,
// structure, every field, references between images, annotations and categories, segmentation),
// the image files, mask sizes, and the preprocessed-annotations index (stale, damaged, foreign).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/readers/coco/coco_index.h"
#include "tests/operators/readers/coco/coco_fixture.h"

namespace conveyor {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::Json;

// The outputs the spec's arguments enable (DALI's sets), added when it has none yet.
OpSpec WithOutputs(OpSpec spec) {
  if (!spec.outputs().empty()) return spec;
  const auto on = [&](const char* arg) { return spec.HasArg(arg) && spec.args().at(arg).As<bool>(); };
  for (const char* name : {"images", "bboxes", "labels"}) spec.AddOutput(name);
  if (on("polygon_masks")) spec.AddOutput("polygons").AddOutput("vertices");
  if (on("pixelwise_masks")) spec.AddOutput("masks");
  if (on("image_ids")) spec.AddOutput("image_ids");
  return spec;
}

// A small valid set: images 1 (12x10) and 2 (8x6) as real JPEGs, categories 3 and 5, one
// polygon annotation and one RLE.
struct Small {
  std::string dir = testing::FreshCocoDir("coco_errors");
  std::string root = dir + "/images", json_path = dir + "/instances.json";
  Json json = Json::parse(R"({
    "images": [{"id": 1, "file_name": "a.jpg", "width": 12, "height": 10},
               {"id": 2, "file_name": "b.jpg", "width": 8, "height": 6}],
    "categories": [{"id": 3, "name": "x"}, {"id": 5, "name": "y"}],
    "annotations": [
      {"id": 10, "image_id": 1, "category_id": 3, "bbox": [1, 2, 5, 4], "iscrowd": 0,
       "segmentation": [[1, 2, 6, 2, 6, 6]]},
      {"id": 11, "image_id": 2, "category_id": 5, "bbox": [0, 0, 8, 6], "iscrowd": 1,
       "segmentation": {"size": [6, 8], "counts": [10, 20, 18]}}]})");
  Small() {
    for (const auto& [file, w, h] : {std::tuple{"a.jpg", 12, 10}, std::tuple{"b.jpg", 8, 6}}) {
      testimages::WriteFile(root + "/" + file, testimages::EncodeJpeg(testimages::MakePhotoLike(h, w, 3, 1), testimages::Subsampling::k444, 90, false));
    }
  }
  void Write() const { testing::WriteText(json_path, json.dump()); }
  OpSpec Spec() const {
    // Outputs are added when it runs (WithOutputs), after the test has set its arguments.
    return OpSpec("readers.coco", "r").SetArg("file_root", root).SetArg("annotations_file", json_path);
  }
  // The message of building and running the reader on the current JSON ("" when it works).
  std::string Error(OpSpec spec) const {
    Write();
    return ErrorAsIs(std::move(spec));
  }
  // The same without writing the JSON (its modification time stays).
  std::string ErrorAsIs(OpSpec spec) const {
    try {
      OpHarness h(WithOutputs(std::move(spec)), Device::kCpu, 2);
      h.Run();
    } catch (const conveyor::Error& e) {
      return e.what();
    }
    return "";
  }
  std::string Error() const { return Error(Spec()); }
  std::string Where() const { return "op \"readers.coco\" (r): annotations_file \"" + json_path + "\": "; }
};

TEST(CocoErrors, TheSmallSetReads) {
  Small s;
  EXPECT_EQ(s.Error(), "");
}

TEST(CocoErrors, Arguments) {
  Small s;
  for (const char* arg : {"file_list", "files", "labels", "file_filters"}) {
    OpSpec spec = s.Spec();
    if (std::string(arg) == "file_list") spec.SetArg(arg, s.dir + "/list.txt");
    if (std::string(arg) == "files") spec.SetArg(arg, std::vector<std::string>{"a.jpg"});
    if (std::string(arg) == "labels") spec.SetArg(arg, std::vector<int64_t>{1});
    if (std::string(arg) == "file_filters") spec.SetArg(arg, std::vector<std::string>{"*.jpg"});
    EXPECT_THAT(s.Error(spec), HasSubstr("argument \"" + std::string(arg) + "\" is not for readers.coco")) << arg;
  }
  EXPECT_THAT(s.Error(s.Spec().SetArg("file_root", "")), HasSubstr("file_root (the folder of the images) is required"));
  EXPECT_THAT(s.Error(s.Spec().SetArg("polygon_masks", true).SetArg("pixelwise_masks", true)),
              HasSubstr("polygon_masks and pixelwise_masks exclude each other"));
  EXPECT_THAT(s.Error(s.Spec().SetArg("save_preprocessed_annotations", true)),
              HasSubstr("save_preprocessed_annotations needs preprocessed_annotations"));
  EXPECT_THAT(s.Error(s.Spec().SetArg("size_threshold", -1.0)), HasSubstr("argument \"size_threshold\""));
  EXPECT_THAT(s.Error(s.Spec().SetArg("annotations_file", s.dir + "/none.json")),
              HasSubstr("annotations_file \"" + s.dir + "/none.json\": cannot open: No such file or directory"));
  EXPECT_THAT(s.Error(s.Spec().SetArg("annotations_file", s.dir)), HasSubstr("\": not a regular file"));
}

TEST(CocoErrors, FileStructure) {
  Small s;
  s.Write();
  testing::WriteText(s.dir + "/broken.json", "{\"images\": [}");
  EXPECT_THAT(s.Error(s.Spec().SetArg("annotations_file", s.dir + "/broken.json")),
              AllOf(HasSubstr("broken.json\": not valid JSON: "), HasSubstr("parse error at line 1, column 13")));
  testing::WriteText(s.dir + "/array.json", "[1, 2]");
  EXPECT_THAT(s.Error(s.Spec().SetArg("annotations_file", s.dir + "/array.json")),
              HasSubstr("array.json\": expected a JSON object at the top, got array [1,2]"));
  for (const char* key : {"images", "annotations", "categories"}) {
    Small t;
    t.json.erase(key);
    EXPECT_THAT(t.Error(), HasSubstr(t.Where() + "no \"" + key + "\" array"));
    t.json[key] = {{"k", 1}};
    EXPECT_THAT(t.Error(), HasSubstr(t.Where() + "\"" + key + "\": expected an array, got object {\"k\":1}"));
    t.json[key] = Json::array({5});
    EXPECT_THAT(t.Error(), HasSubstr(t.Where() + key + "[0]: expected an object, got number 5"));
  }
}

TEST(CocoErrors, OutputsMustMatchTheEnabledSet) {
  Small s;
  s.Write();
  OpSpec seven = s.Spec().SetArg("pixelwise_masks", true);
  for (const char* name : {"images", "bboxes", "labels", "polygons", "vertices", "masks", "image_ids"}) seven.AddOutput(name);
  EXPECT_EQ(s.ErrorAsIs(seven),
            "op \"readers.coco\" (r): expected 4 outputs (images, bboxes, labels, masks), got 7; optional outputs "
            "follow their arguments: polygons and vertices need polygon_masks: true (it is false, the default); masks "
            "needs pixelwise_masks: true (it is true); image_ids needs image_ids: true (it is false, the default)");
  OpSpec three = s.Spec().SetArg("polygon_masks", true).SetArg("image_ids", true);
  for (const char* name : {"images", "bboxes", "labels"}) three.AddOutput(name);
  EXPECT_THAT(s.ErrorAsIs(three), HasSubstr("expected 6 outputs (images, bboxes, labels, polygons, vertices, image_ids), "
                                            "got 3; optional outputs follow their arguments: polygons and vertices need "
                                            "polygon_masks: true (it is true); "));
  OpSpec spec = WithOutputs(s.Spec());
  EXPECT_EQ(spec.OutputSlot("labels"), 2);
  EXPECT_EQ(spec.OutputSlot("masks"), -1);
  try {
    spec.OutputSlot("boxes");
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("op \"readers.coco\" (r): the schema has no output \"boxes\""));
  }
}

TEST(CocoErrors, ImageFields) {
  const auto error = [](const std::function<void(Json&)>& edit) {
    Small s;
    edit(s.json["images"][1]);
    return std::pair{s.Error(), s.Where()};
  };
  auto [e, where] = error([](Json& im) { im.erase("id"); });
  EXPECT_THAT(e, HasSubstr(where + "images[1]: no \"id\""));
  std::tie(e, where) = error([](Json& im) { im["id"] = 3000000000LL; });
  EXPECT_THAT(e, HasSubstr("images[1] (id 3000000000): \"id\": expected an integer in [-2147483648, 2147483647], got number 3000000000"));
  std::tie(e, where) = error([](Json& im) { im["width"] = -5; });
  EXPECT_THAT(e, HasSubstr(where + "images[1] (id 2): \"width\": expected an integer in [1, 2147483647], got number -5"));
  std::tie(e, where) = error([](Json& im) { im["height"] = 6.5; });
  EXPECT_THAT(e, HasSubstr("images[1] (id 2): \"height\": expected an integer in [1, 2147483647], got number 6.5"));
  std::tie(e, where) = error([](Json& im) { im["height"] = "6"; });
  EXPECT_THAT(e, HasSubstr("images[1] (id 2): \"height\": expected an integer in [1, 2147483647], got string \"6\""));
  std::tie(e, where) = error([](Json& im) { im.erase("file_name"); });
  EXPECT_THAT(e, HasSubstr("images[1] (id 2): no \"file_name\""));
  std::tie(e, where) = error([](Json& im) { im["file_name"] = 7; });
  EXPECT_THAT(e, HasSubstr("images[1] (id 2): \"file_name\": expected a string, got number 7"));
  std::tie(e, where) = error([](Json& im) { im["file_name"] = "/etc/passwd"; });
  EXPECT_THAT(e, HasSubstr("images[1] (id 2): \"file_name\": expected a path relative to file_root, got string \"/etc/passwd\""));
  std::tie(e, where) = error([](Json& im) { im["id"] = 1; });
  EXPECT_THAT(e, HasSubstr(where + "images[1] (id 1): image id 1 appears twice (also images[0] (id 1))"));
  // An integral float is an integer.
  std::tie(e, where) = error([](Json& im) { im["width"] = 8.0; });
  EXPECT_EQ(e, "");
}

TEST(CocoErrors, CategoriesAndReferences) {
  Small s;
  s.json["categories"][1]["id"] = 3;
  EXPECT_THAT(s.Error(), HasSubstr(s.Where() + "categories[1] (id 3): category id 3 appears twice"));
  Small t;
  t.json["annotations"][1]["image_id"] = 99;
  EXPECT_THAT(t.Error(), HasSubstr(t.Where() + "annotations[1] (id 11): image_id 99 is not among the images"));
  Small u;
  u.json["annotations"][0]["category_id"] = 4;
  EXPECT_THAT(u.Error(), HasSubstr(u.Where() + "annotations[0] (id 10): category_id 4 is not among the categories"));
}

TEST(CocoErrors, AnnotationFields) {
  const std::vector<std::pair<std::function<void(Json&)>, std::string>> cases = {
      {[](Json& a) { a.erase("id"); }, "annotations[0]: no \"id\""},
      {[](Json& a) { a.erase("image_id"); }, "annotations[0] (id 10): no \"image_id\""},
      {[](Json& a) { a["category_id"] = nullptr; }, "annotations[0] (id 10): \"category_id\": expected an integer in [-2147483648, 2147483647], got null null"},
      {[](Json& a) { a.erase("bbox"); }, "annotations[0] (id 10): no \"bbox\""},
      {[](Json& a) { a["bbox"] = {1, 2, 3}; }, "annotations[0] (id 10): \"bbox\": expected [x, y, width, height], got array [1,2,3]"},
      {[](Json& a) { a["bbox"] = {1, 2, "3", 4}; }, "annotations[0] (id 10): \"bbox\": expected a number, got string \"3\""},
      {[](Json& a) { a["bbox"] = {1, 2, -3, 4}; }, "annotations[0] (id 10): \"bbox\": negative size (width -3, height 4)"},
      {[](Json& a) { a["bbox"] = {1, 2, 3, -0.5}; }, "annotations[0] (id 10): \"bbox\": negative size (width 3, height -0.5)"},
      {[](Json& a) { a["bbox"] = {1e300, 2, 3, 4}; }, "annotations[0] (id 10): \"bbox\": expected a finite number, got number 1e+300"},
      {[](Json& a) { a["iscrowd"] = 2; }, "annotations[0] (id 10): \"iscrowd\": expected an integer in [0, 1], got number 2"},
      {[](Json& a) { a["segmentation"] = {{1, 2, 3}}; }, "annotations[0] (id 10): \"segmentation\"[0]: expected a polygon [x0, y0, x1, y1, ...], got array [1,2,3]"},
      {[](Json& a) { a["segmentation"] = {5}; }, "annotations[0] (id 10): \"segmentation\"[0]: expected a polygon"},
      {[](Json& a) { a["segmentation"] = {{1, 2, 3, "x"}}; }, "annotations[0] (id 10): \"segmentation\"[0]: expected a number, got string \"x\""},
      {[](Json& a) { a["segmentation"] = "abc"; }, "annotations[0] (id 10): \"segmentation\": expected a list of polygons or an RLE object, got string \"abc\""},
  };
  for (const auto& [edit, message] : cases) {
    Small s;
    edit(s.json["annotations"][0]);
    EXPECT_THAT(s.Error(), HasSubstr(s.Where() + message)) << message;
  }
}

TEST(CocoErrors, RleFields) {
  const std::vector<std::pair<Json, std::string>> cases = {
      {{{"counts", {48}}}, "\"segmentation\": an RLE needs \"size\": [height, width]"},
      {{{"size", {6}}, {"counts", {48}}}, "\"segmentation\": an RLE needs \"size\": [height, width], got array [6]"},
      {{{"size", {6, 8}}}, "\"segmentation\": an RLE needs \"counts\""},
      {{{"size", {6, 8}}, {"counts", 48}}, "\"segmentation\": \"counts\": expected a list of run lengths or a compressed RLE string, got number 48"},
      {{{"size", {6, 8}}, {"counts", {40, -8}}}, "\"segmentation\": \"counts\"[1]: expected a run length in [0, 2^32-1], got number -8"},
      {{{"size", {6, 8}}, {"counts", "0 1"}}, "\"segmentation\": \"counts\": not a compressed RLE: character 1 (' ') is not an RLE digit"},
      {{{"size", {6, 8}}, {"counts", {40, 7}}}, "\"segmentation\": the runs cover 47 pixels, expected height * width = 48"},
      {{{"size", {8, 6}}, {"counts", {48}}}, "\"segmentation\": RLE size [8, 6] differs from image 2's [height, width] = [6, 8]"},
  };
  for (const auto& [rle, message] : cases) {
    Small s;
    s.json["annotations"][1]["segmentation"] = rle;
    EXPECT_THAT(s.Error(), HasSubstr(s.Where() + "annotations[1] (id 11): " + message)) << message;
  }
  Small s;  // the compressed form of the same runs reads
  s.json["annotations"][1]["segmentation"]["counts"] = testing::EncodeRleString({10, 20, 18});
  EXPECT_EQ(s.Error(), "");
}

TEST(CocoErrors, ImagesAndMasks) {
  Small s;
  s.json["images"][1]["file_name"] = "sub/missing.jpg";
  EXPECT_THAT(s.Error(), HasSubstr(s.Where() + "image id 2 (\"sub/missing.jpg\"): file \"" + s.root +
                                   "/sub/missing.jpg\": No such file or directory"));
  Small t;
  std::filesystem::create_directories(t.root + "/dir.jpg");
  t.json["images"][0]["file_name"] = "dir.jpg";
  EXPECT_THAT(t.Error(), HasSubstr(t.Where() + "image id 1 (\"dir.jpg\"): file \"" + t.root + "/dir.jpg\" is not a regular file"));
  Small u;
  u.json["images"][0]["width"] = 20000;
  u.json["images"][0]["height"] = 20000;
  EXPECT_THAT(u.Error(u.Spec().SetArg("pixelwise_masks", true)),
              HasSubstr(u.Where() + "image id 1 (\"a.jpg\"): 20000x20000 is more than 268435456 pixels for a pixelwise mask"));
  EXPECT_EQ(u.Error(), "") << "without pixelwise_masks the size does not matter";
  Small v;
  v.json["images"] = Json::array();
  v.json["annotations"] = Json::array();
  EXPECT_THAT(v.Error(), HasSubstr(v.Where() + "no images to read (0 in the file)"));
  Small w;
  w.json["annotations"] = Json::array();
  EXPECT_THAT(w.Error(w.Spec().SetArg("skip_empty", true)),
              HasSubstr(w.Where() + "no images to read (2 in the file, none with a kept box: skip_empty is on)"));
  // A file deleted after the reader was built: the reader core's message names it.
  Small x;
  x.Write();
  OpHarness h(WithOutputs(x.Spec()), Device::kCpu, 2);
  std::filesystem::remove(x.root + "/b.jpg");
  try {
    h.Run();
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("file \"" + x.root + "/b.jpg\": cannot open: No such file or directory"));
  }
}

// The index: built, then the annotation file or the index changed behind the reader's back.
class CocoIndexErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    s_.Write();
    ASSERT_EQ(s_.ErrorAsIs(s_.Spec().SetArg("preprocessed_annotations", index_).SetArg("save_preprocessed_annotations", true)), "");
    ASSERT_EQ(Load(), "");
  }
  std::string Load() const { return s_.ErrorAsIs(s_.Spec().SetArg("preprocessed_annotations", index_)); }
  std::string Where() const {
    return "op \"readers.coco\" (r): preprocessed_annotations \"" + index_ + "\" (of annotations_file \"" + s_.json_path + "\"): ";
  }
  std::vector<char> Bytes() const {
    std::ifstream in(index_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void Put(const std::vector<char>& bytes) const {
    testing::WriteText(index_, std::string(bytes.begin(), bytes.end()));
  }
  // Rewrites the payload after the header, with a matching size and hash (a well-formed file a
  // buggy writer could have made).
  void PutPayload(const std::vector<char>& payload) const {
    std::vector<char> bytes = Bytes();
    bytes.resize(56);
    const uint64_t size = payload.size(), hash = ops::coco::HashBytes(payload.data(), payload.size());
    std::memcpy(bytes.data() + 40, &size, 8);
    std::memcpy(bytes.data() + 48, &hash, 8);
    bytes.insert(bytes.end(), payload.begin(), payload.end());
    Put(bytes);
  }
  Small s_;
  std::string index_ = s_.dir + "/instances.idx";
};

TEST_F(CocoIndexErrors, StaleIndexSaysWhatChanged) {
  s_.json["annotations"][0]["bbox"][0] = 2.5;  // another size
  s_.Write();
  EXPECT_THAT(Load(), HasSubstr(Where() + "stale: made from another version of the annotation file (size "));
  EXPECT_THAT(Load(), HasSubstr("; rebuild it with save_preprocessed_annotations: true"));
}

TEST_F(CocoIndexErrors, StaleByTimeAndByContent) {
  const auto stamp_time = std::filesystem::last_write_time(s_.json_path);
  // Same text written again later: the time differs.
  s_.Write();
  std::filesystem::last_write_time(s_.json_path, stamp_time + std::chrono::seconds(5));
  OpSpec spec = WithOutputs(s_.Spec().SetArg("preprocessed_annotations", index_));
  try {
    OpHarness h(spec, Device::kCpu, 1);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("stale: made from another version of the annotation file (modification time "));
  }
  // Same size and time, other content (one digit changed, the time put back).
  std::string text = s_.json.dump();
  text[text.find("\"x\"") + 1] = 'z';
  testing::WriteText(s_.json_path, text);
  std::filesystem::last_write_time(s_.json_path, stamp_time);
  try {
    OpHarness h(spec, Device::kCpu, 1);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("stale: made from another version of the annotation file (the same size and time but other content)"));
  }
}

TEST_F(CocoIndexErrors, DamagedOrForeignIndexes) {
  const std::vector<char> good = Bytes();
  auto bytes = good;
  bytes[good.size() - 9] ^= 0x40;
  Put(bytes);
  EXPECT_THAT(Load(), HasSubstr(Where() + "damaged: the data does not match its hash; rebuild it"));
  Put(std::vector<char>(good.begin(), good.end() - 8));
  EXPECT_THAT(Load(), HasSubstr(Where() + "damaged: the header promises " + std::to_string(good.size() - 56) +
                                " bytes of data, the file holds " + std::to_string(good.size() - 64)));
  Put(std::vector<char>(good.begin(), good.begin() + 20));
  EXPECT_THAT(Load(), HasSubstr(Where() + "not a readers.coco index (no CVCOCOIX header)"));
  testing::WriteText(index_, "{\"images\": []}");
  EXPECT_THAT(Load(), HasSubstr(Where() + "not a readers.coco index"));
  bytes = good;
  bytes[8] = 2;
  Put(bytes);
  EXPECT_THAT(Load(), HasSubstr(Where() + "format version 2, this reader reads version 1; rebuild it"));
  bytes = good;
  std::swap(bytes[12], bytes[15]);
  Put(bytes);
  EXPECT_THAT(Load(), HasSubstr(Where() + "written on a machine of the other byte order"));
  std::filesystem::remove(index_);
  EXPECT_THAT(Load(), HasSubstr(Where() + "cannot open: No such file or directory; rebuild it"));
}

TEST_F(CocoIndexErrors, WellFormedButInconsistentData) {
  const std::vector<char> good = Bytes();
  std::vector<char> payload(good.begin() + 56, good.end());
  // The first array (image ids) claims far more elements than the file holds.
  std::vector<char> huge = payload;
  const uint64_t count = uint64_t{1} << 60;
  std::memcpy(huge.data(), &count, 8);
  PutPayload(huge);
  EXPECT_THAT(Load(), HasSubstr(Where() + "damaged: array 0 claims 1152921504606846976 elements"));
  // Extra bytes after the last array.
  std::vector<char> longer = payload;
  longer.resize(longer.size() + 8, 0);
  PutPayload(longer);
  EXPECT_THAT(Load(), HasSubstr(Where() + "damaged: 8 bytes follow the data"));
  // Image ids out of order (ids 1, 2 → 2, 1): arrays well-formed, Validate refuses.
  std::vector<char> swapped = payload;
  int32_t ids[2];
  std::memcpy(ids, swapped.data() + 8, 8);
  std::swap(ids[0], ids[1]);
  std::memcpy(swapped.data() + 8, ids, 8);
  PutPayload(swapped);
  EXPECT_THAT(Load(), HasSubstr(Where() + "damaged: image ids are not sorted and unique at image 1"));
}

}  // namespace
}  // namespace conveyor
