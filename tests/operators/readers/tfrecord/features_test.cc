// The feature spec: its grammar and every parse error; values of each kind and shape read from
// Examples serialized by protobuf's Python runtime (write_tfrecords.py), defaults, VarLen, and the
// record errors (missing without default, wrong count, wrong kind).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/error.h"
#include "operators/readers/io/byte_source.h"
#include "operators/readers/tfrecord/features.h"
#include "operators/readers/tfrecord/tf_example.pb.h"
#include "operators/readers/tfrecord/tfrecord_format.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"

namespace conveyor::ops {
namespace {

using ::testing::HasSubstr;
using testing::PlanFeature;
using testing::PlanRecord;

using testing::ErrorOf;
FeatureSpec Spec(const std::string& text) { return ParseFeatureSpec(text, 0, "w"); }

TEST(FeatureSpec, Grammar) {
  FeatureSpec s = Spec("image/encoded: bytes");
  EXPECT_EQ(s.name, "image/encoded");
  EXPECT_EQ(s.kind, FeatureKind::kBytes);
  EXPECT_FALSE(s.var_len || s.has_shape || s.has_default);
  EXPECT_EQ(s.dtype(), DType::kUInt8);
  s = Spec("  image/class/label :int64[1]=-1 ");
  EXPECT_EQ(s.name, "image/class/label");
  EXPECT_EQ(s.kind, FeatureKind::kInt64);
  EXPECT_EQ(s.shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.int_default, (std::vector<int64_t>{-1}));
  s = Spec("a:b:c: float32[2, 3] = [1, 2, 3, 4, 5, 6.5]");  // the name runs to the last ':'
  EXPECT_EQ(s.name, "a:b:c");
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_EQ(s.count(), 6);
  EXPECT_EQ(s.float_default, (std::vector<float>{1, 2, 3, 4, 5, 6.5f}));
  s = Spec("boxes: float[]");
  EXPECT_TRUE(s.var_len);
  s = Spec("text: string = 'none'");
  EXPECT_EQ(s.kind, FeatureKind::kBytes);
  EXPECT_EQ(s.bytes_default, "none");
  EXPECT_EQ(Spec("t: bytes = \"\"").bytes_default, "");
  EXPECT_EQ(Spec("t: bytes[4] = ab").bytes_default, "ab");
}

TEST(FeatureSpec, ErrorsNamePositionAndWhatWasExpected) {
  const auto error = [](const std::string& text) {
    return ErrorOf([&] { ParseFeatureSpecs({"ok: int64", text}, "op \"readers.tfrecord\" (r): argument \"features\""); });
  };
  EXPECT_EQ(error("label int64"), "op \"readers.tfrecord\" (r): argument \"features\": entry 1 (\"label int64\"): "
                                  "expected \"name: type\", e.g. \"image/class/label: int64[1] = -1\"");
  EXPECT_THAT(error(": int64"), HasSubstr("entry 1 (\": int64\"): expected a feature name before ':'"));
  EXPECT_THAT(error("label: int32"),
              HasSubstr("expected a type (bytes, string, int64, float, float32) after ':', got \"int32\""));
  EXPECT_THAT(error("label: int64[2"), HasSubstr("expected the shape to end with ']', got \"[2\""));
  EXPECT_THAT(error("label: int64[2, 0]"), HasSubstr("expected the shape's extents as integers >= 1, e.g. [2, 3], got \"0\""));
  EXPECT_THAT(error("label: int64[x]"), HasSubstr("got \"x\""));
  EXPECT_THAT(error("jpegs: bytes[2, 2]"), HasSubstr("expected at most 1 extent for bytes (bytes values form rows: [count]), got 2"));
  EXPECT_THAT(error("label: int64[1,1,1,1,1,1,1,1,1]"), HasSubstr("expected at most 8 extents for int64"));
  EXPECT_THAT(error("boxes: float[] = 0"), HasSubstr("a variable-length feature ([]) takes no default: a missing one is empty"));
  EXPECT_THAT(error("label: int64 = 1.5"), HasSubstr("expected the default as an integer (or a list of them), got \"1.5\""));
  EXPECT_THAT(error("label: float = x"), HasSubstr("expected the default as a number (or a list of them), got \"x\""));
  EXPECT_THAT(error("label: float = 1e100"), HasSubstr("got \"1e100\""));
  EXPECT_THAT(error("grid: int64[2,2] = [1, 2, 3]"),
              HasSubstr("expected a default of 4 values (one per element) or one number, got 3"));
  EXPECT_THAT(error("grid: int64[2,2] = [1, 2"), HasSubstr("expected the default list to end with ']'"));
  EXPECT_THAT(error("ok: float[]"), HasSubstr("entry 1 (\"ok: float[]\"): feature \"ok\" is already entry 0"));
  EXPECT_THAT(ErrorOf([] { ParseFeatureSpecs({}, "w"); }), HasSubstr("w: expected at least one feature"));
}

class FeaturesFromPython : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = testing::FreshTempDir("features");
    files_ = testing::MakeTfRecordDataset(dir, 1, 30, rng_);
    const auto source = OpenByteSource(files_[0].path);
    for (const TfRecordSpan& span : ScanTfRecords(*source)) {
      std::vector<uint8_t> framed(static_cast<size_t>(span.size));
      source->ReadAt(span.offset, framed.data(), span.size);
      const auto data = CheckTfRecord(framed.data(), span.size, "w");
      tfexample::Example example;
      ASSERT_TRUE(example.ParseFromArray(data.data(), static_cast<int>(data.size())));
      examples_.push_back(example);
    }
    ASSERT_EQ(examples_.size(), 30u);
  }

  // Reads feature `spec` of record r: its shape and bytes.
  std::pair<Shape, std::vector<uint8_t>> Read(const std::string& spec_text, size_t r) {
    const FeatureSpec spec = Spec(spec_text);
    const FeatureValue v = LookupFeature(spec, examples_[r], "\"f\": record " + std::to_string(r));
    std::vector<uint8_t> out(static_cast<size_t>(v.shape.num_elements()) * DTypeSize(spec.dtype()) + 1, 0xAB);
    WriteFeature(spec, v, out.data());
    EXPECT_EQ(out.back(), 0xAB) << "wrote past the value";  // poisoned guard byte
    out.pop_back();
    return {v.shape, out};
  }

  template <typename T>
  static std::vector<T> As(const std::vector<uint8_t>& bytes) {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }

  std::mt19937 rng_{std::random_device{}()};
  std::vector<testing::PlanFile> files_;
  std::vector<tfexample::Example> examples_;
};

TEST_F(FeaturesFromPython, EveryKindAndShapeReadsBackEqual) {
  for (size_t r = 0; r < examples_.size(); ++r) {
    const PlanRecord& want = files_[0].records[r];
    const std::string jpeg = want.Find("image/encoded")->bytes[0];
    auto [shape, bytes] = Read("image/encoded: bytes", r);
    EXPECT_EQ(shape, Shape{static_cast<int64_t>(jpeg.size())});
    EXPECT_EQ(std::string(bytes.begin(), bytes.end()), jpeg);
    std::tie(shape, bytes) = Read("label: int64", r);
    EXPECT_EQ(shape, Shape{1});
    EXPECT_EQ(As<int64_t>(bytes), want.Find("label")->ints);
    std::tie(shape, bytes) = Read("label: int64[1] = -1", r);
    EXPECT_EQ(As<int64_t>(bytes), want.Find("label")->ints);
    std::tie(shape, bytes) = Read("grid: int64[2, 3]", r);
    EXPECT_EQ(shape, (Shape{2, 3}));
    EXPECT_EQ(As<int64_t>(bytes), want.Find("grid")->ints);
    std::tie(shape, bytes) = Read("bbox: float[]", r);
    EXPECT_EQ(shape, Shape{static_cast<int64_t>(want.Find("bbox")->floats.size())});
    EXPECT_EQ(As<float>(bytes), want.Find("bbox")->floats);
    // Several bytes values: rows padded with zeros to the longest (VarLen, missing: [0, 0]).
    const std::vector<std::string>& captions = want.Find("captions")->bytes;
    size_t longest = 0;
    for (const std::string& c : captions) longest = std::max(longest, c.size());
    std::tie(shape, bytes) = Read("captions: bytes[]", r);
    EXPECT_EQ(shape, (Shape{static_cast<int64_t>(captions.size()), static_cast<int64_t>(longest)}));
    for (size_t k = 0; k < captions.size(); ++k) {
      std::string row(captions[k]);
      row.resize(longest, '\0');
      EXPECT_EQ(std::string(bytes.begin() + static_cast<int64_t>(k * longest),
                            bytes.begin() + static_cast<int64_t>((k + 1) * longest)),
                row);
    }
    // Defaults: the record's value when present, else the default (one value broadcast).
    std::tie(shape, bytes) = Read("weight: float = 0.25", r);
    EXPECT_EQ(As<float>(bytes), want.Find("weight") ? want.Find("weight")->floats : std::vector<float>{0.25f});
    std::tie(shape, bytes) = Read("absent: int64[2, 2] = [4, 3, 2, 1]", r);
    EXPECT_EQ(shape, (Shape{2, 2}));
    EXPECT_EQ(As<int64_t>(bytes), (std::vector<int64_t>{4, 3, 2, 1}));
    std::tie(shape, bytes) = Read("absent: float[3] = -2", r);
    EXPECT_EQ(As<float>(bytes), (std::vector<float>{-2, -2, -2}));
    std::tie(shape, bytes) = Read("absent: bytes = 'none'", r);
    EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "none");
    std::tie(shape, bytes) = Read("absent: bytes[2] = ab", r);
    EXPECT_EQ(shape, (Shape{2, 2}));
    EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "abab");
    EXPECT_EQ(Read("absent: float[]", r).first, Shape{0});
    EXPECT_EQ(Read("absent: bytes[]", r).first, (Shape{0, 0}));
  }
}

TEST_F(FeaturesFromPython, RecordErrorsNameRecordFeatureAndSpec) {
  size_t without_weight = 1;  // records 1, 2, 4, 5, ... have no "weight"
  EXPECT_EQ(ErrorOf([&] { Read("weight: float", without_weight); }),
            "\"f\": record 1: feature \"weight\" (spec \"weight: float\"): missing from the record, and the spec has "
            "no default");
  EXPECT_EQ(ErrorOf([&] { Read("grid: int64[4]", 0); }),
            "\"f\": record 0: feature \"grid\" (spec \"grid: int64[4]\"): expected 4 int64 values, the record has 6");
  EXPECT_EQ(ErrorOf([&] { Read("grid: int64", 0); }),
            "\"f\": record 0: feature \"grid\" (spec \"grid: int64\"): expected 1 int64 value, the record has 6");
  EXPECT_EQ(ErrorOf([&] { Read("label: float", 3); }),
            "\"f\": record 3: feature \"label\" (spec \"label: float\"): expected float values, the record has an "
            "int64_list of 1");
  EXPECT_THAT(ErrorOf([&] { Read("image/encoded: int64[]", 3); }), HasSubstr("the record has a bytes_list of 1"));
  EXPECT_THAT(ErrorOf([&] { Read("bbox: bytes[]", 3); }), HasSubstr("the record has a float_list of"));
  // Several bytes values where one is expected.
  size_t r = 0;
  while (files_[0].records[r].Find("captions")->bytes.size() == 1) ++r;
  EXPECT_THAT(ErrorOf([&] { Read("captions: bytes", r); }),
              HasSubstr("expected 1 bytes value, the record has " +
                        std::to_string(files_[0].records[r].Find("captions")->bytes.size())));
}

TEST(Features, AFeatureWithNoListSetIsEmpty) {
  const std::string dir = testing::FreshTempDir("features_nokind");
  testing::PlanFile file{dir + "/n.tfrecord", {}};
  PlanRecord rec;
  rec.features.push_back({PlanFeature::kNoKind, "x", {}, {}, {}});
  file.records.push_back(rec);
  testing::WriteTfRecords({file});
  const auto source = OpenByteSource(file.path);
  const TfRecordSpan span = ScanTfRecords(*source).at(0);
  std::vector<uint8_t> framed(static_cast<size_t>(span.size));
  source->ReadAt(span.offset, framed.data(), span.size);
  const auto data = CheckTfRecord(framed.data(), span.size, "w");
  tfexample::Example example;
  ASSERT_TRUE(example.ParseFromArray(data.data(), static_cast<int>(data.size())));
  EXPECT_EQ(LookupFeature(Spec("x: float[]"), example, "w").shape, Shape{0});
  EXPECT_EQ(LookupFeature(Spec("x: bytes[]"), example, "w").shape, (Shape{0, 0}));
  EXPECT_THAT(ErrorOf([&] { LookupFeature(Spec("x: int64 = 3"), example, "w"); }),
              HasSubstr("expected 1 int64 value, the record has 0"));
}

// Keys are bytes (no UTF-8 check, no protobuf error log) and a repeated key's last value wins, as
// in TensorFlow's map<string, Feature>.
TEST(Features, KeysAreBytesAndTheLastOfARepeatedKeyWins) {
  tfexample::Example example;
  auto* features = example.mutable_features();
  for (int64_t v : {1, 2}) {
    tfexample::FeatureEntry* entry = features->add_feature();
    entry->set_key("label");
    entry->mutable_value()->mutable_int64_list()->add_value(v);
  }
  tfexample::FeatureEntry* odd = features->add_feature();
  odd->set_key(std::string("\xff\xfe", 2));
  odd->mutable_value()->mutable_float_list()->add_value(0.5f);
  tfexample::Example parsed;
  const std::string wire = example.SerializeAsString();
  ASSERT_TRUE(parsed.ParseFromString(wire));
  const FeatureSpec spec = Spec("label: int64");
  int64_t value = 0;
  WriteFeature(spec, LookupFeature(spec, parsed, "w"), &value);
  EXPECT_EQ(value, 2);
  const FeatureSpec odd_spec = Spec(std::string("\xff\xfe: float"));
  float f = 0;
  WriteFeature(odd_spec, LookupFeature(odd_spec, parsed, "w"), &f);
  EXPECT_EQ(f, 0.5f);
}

}  // namespace
}  // namespace conveyor::ops
