// readers.numpy and the .npy format: files written by NumPy (testdata/, see make_fixtures.py) for
// every dtype, both orders and header versions 1-3; our writer against NumPy's bytes; corrupt,
// truncated and unsupported files; a batch of mixed dtypes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/op/harness.h"
#include "core/pipeline/graph.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/half.h"
#include "operators/readers/npy_format.h"
#include "tests/conformance/conformance.h"
#include "tests/operators/readers/dataset_fixture.h"

namespace conveyor {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ops::MakeNpyHeader;
using ops::ParseNpyHeader;

const std::string kDir = "tests/operators/readers/testdata/";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Element i (C order) of every fixture, as make_fixtures.py computes it.
double Value(DType dtype, int64_t i) {
  if (dtype == DType::kBool) return i % 3 == 0;
  const int64_t v = (i * 7 + 3) % 11;
  if (dtype == DType::kUInt8 || dtype == DType::kUInt16) return static_cast<double>(v);
  if (IsFloatingPoint(dtype)) return static_cast<double>(v - 5) / 4.0;
  return static_cast<double>(v - 5);
}

double Element(const TensorListCPU& list, int s, int64_t i) {
  const void* p = list.raw_sample(s);
  switch (list.dtype()) {
    case DType::kBool: return static_cast<const bool*>(p)[i];
    case DType::kUInt8: return static_cast<const uint8_t*>(p)[i];
    case DType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(p)[i];
    case DType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::kFloat16: return HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]);
    case DType::kFloat32: return static_cast<const float*>(p)[i];
    case DType::kFloat64: return static_cast<const double*>(p)[i];
    default: ADD_FAILURE() << "dtype"; return 0;
  }
}

OpSpec Reader(std::vector<std::string> files) {
  for (std::string& f : files) f = kDir + f;
  return OpSpec("readers.numpy", "np").AddOutput("data").SetArg("files", files);
}

void ExpectFixture(const TensorListCPU& out, int s, DType dtype, const Shape& shape) {
  ASSERT_EQ(out.dtype(), dtype);
  ASSERT_EQ(out.shape(s), shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) ASSERT_EQ(Element(out, s, i), Value(dtype, i)) << "element " << i;
}

TEST(NumpyReader, EveryDtypeInCOrder) {
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBFloat16) continue;  // NumPy has none
    SCOPED_TRACE(DTypeName(dtype));
    OpHarness h(Reader({std::string(DTypeName(dtype)) + "_c.npy"}), Device::kCpu, 1);
    h.Run();
    ExpectFixture(h.OutputCpu(0), 0, dtype, Shape{3, 4, 2});
  }
}

TEST(NumpyReader, FortranOrderIsTransposedToC) {
  OpHarness h(Reader({"float32_f.npy", "float32_c.npy"}), Device::kCpu, 2);
  h.Run();
  ExpectFixture(h.OutputCpu(0), 0, DType::kFloat32, Shape{3, 4, 2});
  ExpectFixture(h.OutputCpu(0), 1, DType::kFloat32, Shape{3, 4, 2});
  OpHarness i16(Reader({"int16_f.npy"}), Device::kCpu, 1);
  i16.Run();
  ExpectFixture(i16.OutputCpu(0), 0, DType::kInt16, Shape{3, 4, 2});
}

TEST(NumpyReader, HeaderVersionsOneTwoThreeAndOddShapes) {
  OpHarness h(Reader({"float32_v2.npy", "float32_v3.npy", "float32_c.npy"}), Device::kCpu, 3);
  h.Run();
  for (int s = 0; s < 3; ++s) ExpectFixture(h.OutputCpu(0), s, DType::kFloat32, Shape{3, 4, 2});
  OpHarness scalar(Reader({"scalar_int32.npy"}), Device::kCpu, 1);
  scalar.Run();
  ExpectFixture(scalar.OutputCpu(0), 0, DType::kInt32, Shape{});
  OpHarness vec(Reader({"vector_float64.npy"}), Device::kCpu, 1);
  vec.Run();
  ExpectFixture(vec.OutputCpu(0), 0, DType::kFloat64, Shape{5});
  OpHarness empty(Reader({"empty_uint8.npy"}), Device::kCpu, 1);
  empty.Run();
  EXPECT_EQ(empty.OutputCpu(0).shape(0), (Shape{0, 3}));
}

TEST(NpyFormat, OurHeaderIsNumpysHeader) {
  struct Case { std::string file; DType dtype; Shape shape; bool fortran; int version; };
  for (const Case& c : {Case{"float32_c.npy", DType::kFloat32, {3, 4, 2}, false, 1},
                        Case{"int16_f.npy", DType::kInt16, {3, 4, 2}, true, 1},
                        Case{"bool_c.npy", DType::kBool, {3, 4, 2}, false, 1},
                        Case{"float32_v2.npy", DType::kFloat32, {3, 4, 2}, false, 2},
                        Case{"float32_v3.npy", DType::kFloat32, {3, 4, 2}, false, 3},
                        Case{"vector_float64.npy", DType::kFloat64, {5}, false, 1},
                        Case{"scalar_int32.npy", DType::kInt32, {}, false, 1}}) {
    const std::string numpy = ReadAll(kDir + c.file);
    const std::string ours = MakeNpyHeader(c.dtype, c.shape, c.fortran, c.version);
    EXPECT_EQ(numpy.substr(0, ours.size()), ours) << c.file;
    const ops::NpyHeader h = ParseNpyHeader(numpy.data(), numpy.size(), c.file);
    EXPECT_EQ(h.dtype, c.dtype);
    EXPECT_EQ(h.shape, c.shape);
    EXPECT_EQ(h.fortran_order, c.fortran);
    EXPECT_EQ(h.data_offset, static_cast<int64_t>(ours.size()));
    EXPECT_EQ(h.data_offset % 64, 0);
  }
}

void ExpectParseError(const std::string& bytes, const std::string& message) {
  EXPECT_THAT([&] { ParseNpyHeader(bytes.data(), bytes.size(), "f.npy"); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
}

TEST(NpyFormat, CorruptHeadersSayWhatIsWrong) {
  const std::string good = MakeNpyHeader(DType::kFloat32, {2, 2}, false);
  ExpectParseError("GIF89a..........", "f.npy: not a .npy file (expected the magic \\x93NUMPY, got 47 49 46 38 39 61)");
  ExpectParseError("", "got an empty file");
  std::string v9 = good;
  v9[6] = 9;
  ExpectParseError(v9, "unsupported .npy format version 9.0 (supported: 1.0, 2.0, 3.0)");
  ExpectParseError(good.substr(0, 40), "truncated .npy header (expected " + std::to_string(good.size()) +
                                           " bytes, the file has 40)");
  auto with_dict = [](const std::string& dict) {
    std::string h = MakeNpyHeader(DType::kUInt8, {1}, false);
    std::string body = dict;
    body.append(h.size() - 10 - body.size() - 1, ' ');
    return h.substr(0, 10) + body + "\n";
  };
  ExpectParseError(with_dict("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"),
                   "big-endian data ('>f4') is not supported");
  ExpectParseError(with_dict("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"),
                   "object arrays ('|O') are not supported");
  ExpectParseError(with_dict("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }"), "unsupported dtype '<U3'");
  ExpectParseError(with_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }"),
                   "structured dtypes (descr is a list) are not supported");
  ExpectParseError(with_dict("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }"),
                   "fortran_order must be True or False");
  ExpectParseError(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }"),
                   "shape must be a tuple of non-negative integers");
  ExpectParseError(with_dict("{'descr': '<f4', 'shape': (2,), }"), "lacks one of 'descr', 'fortran_order', 'shape'");
  ExpectParseError(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"), "unexpected key 'x'");
}

TEST(NumpyReader, BadFilesNameTheFile) {
  auto expect = [](const std::vector<std::string>& files, const std::string& message) {
    EXPECT_THAT([&] { OpHarness h(Reader(files), Device::kCpu, static_cast<int>(files.size())); h.Run(); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
  };
  expect({"bigendian_float32.npy"}, "op \"readers.numpy\" (np): file \"" + kDir +
                                        "bigendian_float32.npy\": big-endian data ('>f4') is not supported");
  expect({"object.npy"}, "object.npy\": object arrays");
  expect({"float32_c.npy", "int16_c.npy"}, "int16_c.npy\": dtype int16 differs from float32 of \"" + kDir +
                                               "float32_c.npy\" in the same batch");
  // A truncated copy of a fixture: header intact, data short.
  const std::string dir = testing::FreshTempDir("npy");
  const std::string full = ReadAll(kDir + "float64_c.npy");
  std::ofstream(dir + "/cut.npy", std::ios::binary) << full.substr(0, full.size() - 8);
  EXPECT_THAT([&] { OpHarness h(OpSpec("readers.numpy", "np").AddOutput("data").SetArg("files", std::vector<std::string>{dir + "/cut.npy"}), Device::kCpu, 1); h.Run(); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(
                  "cut.npy\": truncated data: the header promises 192 bytes (float64 (3, 4, 2)), the file holds 184")));
}

TEST(NumpyReader, FileRootListsEveryArrayUnderIt) {
  const std::string dir = testing::FreshTempDir("npyroot");
  const std::string bytes = ReadAll(kDir + "int32_c.npy");
  for (const char* name : {"/b.npy", "/a.npy", "/sub/c.npy"}) {
    testing::WriteFile(dir + name, std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  testing::WriteFile(dir + "/readme.txt", {1});
  OpHarness h(OpSpec("readers.numpy", "np").AddOutput("data").SetArg("file_root", dir), Device::kCpu, 3);
  EXPECT_EQ(h.op().EpochSize(3), 3);
  h.Run();
  for (int s = 0; s < 3; ++s) ExpectFixture(h.OutputCpu(0), s, DType::kInt32, Shape{3, 4, 2});
}

// `layout` labels the arrays for the operators that read layouts: a uint8 (3, 4, 2) array read as
// HWC comes out labelled, unchanged, and flip (which mirrors along the layout's W) mirrors it along
// its second axis; labelled CHW, the same array is mirrored along its last axis instead — the
// label, not the rank, decides.
TEST(NumpyReader, LayoutLabelsTheArraysForImageOperators) {
  OpHarness h(Reader({"uint8_c.npy"}).SetArg("layout", std::string("HWC")), Device::kCpu, 1);
  h.Run();
  EXPECT_EQ(h.OutputCpu(0).layout(), Layout("HWC"));
  ExpectFixture(h.OutputCpu(0), 0, DType::kUInt8, Shape{3, 4, 2});

  auto flipped = [](const std::string& layout) {
    const std::string yaml =
        "pipeline: {name: npy_images, batch_size: 1, device: cpu, num_threads: 1}\n"
        "ops:\n"
        "  - {op: readers.numpy, name: np, args: {files: ['" + kDir + "uint8_c.npy'], layout: " + layout +
        "}, outputs: [images]}\n"
        "  - {op: flip, name: flip, inputs: [images], args: {horizontal: 1}, outputs: [flipped]}\n"
        "outputs: [flipped]\n";
    Pipeline p = Pipeline::FromYaml(yaml);
    p.Build();
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& list = out.Cpu(0);
    EXPECT_EQ(list.layout(), Layout(layout));
    EXPECT_EQ(list.shape(0), (Shape{3, 4, 2}));
    const auto* v = static_cast<const uint8_t*>(list.raw_sample(0));
    return std::vector<uint8_t>(v, v + 24);
  };
  const std::vector<uint8_t> hwc = flipped("HWC"), chw = flipped("CHW");
  for (int64_t a = 0; a < 3; ++a) {
    for (int64_t b = 0; b < 4; ++b) {
      for (int64_t c = 0; c < 2; ++c) {
        const int64_t i = (a * 4 + b) * 2 + c;
        EXPECT_EQ(hwc[i], Value(DType::kUInt8, (a * 4 + (3 - b)) * 2 + c)) << "HWC " << a << "," << b;
        EXPECT_EQ(chw[i], Value(DType::kUInt8, (a * 4 + b) * 2 + (1 - c))) << "CHW " << a << "," << b;
      }
    }
  }
}

TEST(NumpyReader, LayoutErrorsNameTheArgumentOrTheFile) {
  // One letter per dimension: a (3, 4, 2) array is not HW.
  EXPECT_THAT(
      [&] {
        OpHarness h(Reader({"float32_c.npy"}).SetArg("layout", std::string("HW")), Device::kCpu, 1);
        h.Run();
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("file \"" + kDir + "float32_c.npy\": array of shape (3, 4, 2) "
                                                          "has 3 dimensions; argument \"layout\" HW needs 2")));
  // A letter twice: refused where the argument stands in the file.
  const std::string text =
      "pipeline: {name: bad_layout, batch_size: 1, device: cpu}\n"
      "ops:\n"
      "  - op: readers.numpy\n"
      "    name: np\n"
      "    args: {files: ['" + kDir + "float32_c.npy'], layout: HWH}\n"
      "    outputs: [data]\n"
      "outputs: [data]\n";
  EXPECT_THAT([&] { Pipeline::FromYaml(text).Build(); },
              ::testing::ThrowsMessage<ArgumentError>(AllOf(
                  HasSubstr(":5:"), HasSubstr("op \"readers.numpy\" (np): argument \"layout\": layout \"HWH\": axis 'H' "
                                              "appears twice"))));
}

using testing::OperatorConformance;
INSTANTIATE_TEST_SUITE_P(NumpyReader, OperatorConformance,
                         ::testing::Values(testing::ConformanceCase{
                             "cpu", Reader({"float32_c.npy", "float32_f.npy", "float32_v3.npy"}), Device::kCpu}),
                         testing::CaseName);

}  // namespace
}  // namespace conveyor
