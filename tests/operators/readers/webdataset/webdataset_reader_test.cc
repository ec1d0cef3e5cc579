// readers.webdataset through OpHarness on shards written by Python's tarfile: outputs equal the
// members byte for byte with their sources named shard:key.ext, ext alternatives, every
// missing_component_behavior, dtypes, case-insensitive extensions, globs and brace ranges, index
// files equal to the scan, the open-shard bound, and each error message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/op/harness.h"
#include "operators/readers/shards/shard_reader_op.h"
#include "operators/readers/webdataset/tar_scan.h"
#include "operators/readers/webdataset/wds_index.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor {
namespace {

using ::testing::HasSubstr;
using testing::MakeWdsShard;
using testing::RandomBytes;
using testing::TarMemberSpec;
using testing::WdsShard;

using Strings = std::vector<std::string>;

OpSpec Reader(const Strings& paths, const Strings& ext) {
  OpSpec spec("readers.webdataset", "r");
  spec.SetArg("paths", paths).SetArg("ext", ext);
  for (size_t i = 0; i < ext.size(); ++i) spec.AddOutput("out" + std::to_string(i));
  return spec;
}

std::vector<uint8_t> Bytes(const TensorListCPU& t, int i) {
  const auto* p = static_cast<const uint8_t*>(t.raw_sample(i));
  return {p, p + t.shape(i).num_elements() * static_cast<int64_t>(DTypeSize(t.dtype()))};
}

std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// Three shards of 7, 3 and 5 samples with jpg and cls members; the samples in global order.
struct Set {
  std::string dir;
  std::vector<WdsShard> shards;
  std::vector<std::pair<std::string, testing::WdsSample>> samples;  // shard path, sample
};

Set MakeSet(std::mt19937& rng, const std::vector<int>& counts = {7, 3, 5}, const Strings& exts = {"jpg", "cls"}) {
  Set set{testing::FreshTempDir("wds"), {}, {}};
  for (size_t s = 0; s < counts.size(); ++s) {
    char name[64];
    std::snprintf(name, sizeof(name), "/shard-%06zu.tar", s);
    set.shards.push_back(MakeWdsShard(set.dir + name, counts[s], exts, rng, "s" + std::to_string(s)));
    for (const auto& sample : set.shards.back().samples) set.samples.emplace_back(set.dir + name, sample);
  }
  return set;
}

TEST(WebDatasetReader, ServesEveryMemberByteIdenticalWithItsSource) {
  std::mt19937 rng(std::random_device{}());
  const Set set = MakeSet(rng);
  OpHarness h(Reader({set.dir + "/shard-*.tar"}, {"cls", "jpg"}), Device::kCpu, 5);
  for (int it = 0; it < 3; ++it) {  // 15 samples: one epoch in file order
    h.Run();
    for (int i = 0; i < 5; ++i) {
      const auto& [shard, sample] = set.samples[static_cast<size_t>(it * 5 + i)];
      EXPECT_EQ(Bytes(h.OutputCpu(0), i), sample.members.at("cls"));
      EXPECT_EQ(Bytes(h.OutputCpu(1), i), sample.members.at("jpg"));
      EXPECT_EQ(h.OutputCpu(0).dtype(), DType::kUInt8);
      EXPECT_EQ(h.OutputCpu(1).source(i)->file, shard + ":" + sample.key + ".jpg");
      EXPECT_EQ(h.OutputCpu(0).source(i)->file, shard + ":" + sample.key + ".cls");
      EXPECT_EQ(h.OutputCpu(0).source(i)->index, it * 5 + i);
    }
  }
  EXPECT_EQ(h.op().EpochSize(5), 15);
}

TEST(WebDatasetReader, ExtAlternativesMissingBehavioursAndCase) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("missing");
  // a: jpg + cls, b: PNG + cls, c: cls only, d: jpg only.
  const auto jpg_a = RandomBytes(rng, 700), png_b = RandomBytes(rng, 900), cls_a = RandomBytes(rng, 3),
             cls_b = RandomBytes(rng, 4), cls_c = RandomBytes(rng, 5), jpg_d = RandomBytes(rng, 600);
  testing::WriteTar(dir + "/s.tar", {{"a.jpg", jpg_a}, {"a.cls", cls_a}, {"b.PNG", png_b}, {"b.cls", cls_b},
                                     {"c.cls", cls_c}, {"d.jpg", jpg_d}});
  const auto run = [&](const std::string& missing, bool case_sensitive, int batch) {
    OpSpec spec = Reader({dir + "/s.tar"}, {"jpg;png", "cls"});
    spec.SetArg("missing_component_behavior", missing).SetArg("case_sensitive_extensions", case_sensitive);
    auto h = std::make_unique<OpHarness>(spec, Device::kCpu, batch);
    h->Run();
    return h;
  };
  {
    auto h = run("fill", false, 4);
    EXPECT_EQ(Bytes(h->OutputCpu(0), 0), jpg_a);
    EXPECT_EQ(Bytes(h->OutputCpu(0), 1), png_b) << "PNG matches png without case";
    EXPECT_EQ(h->OutputCpu(0).source(1)->file, dir + "/s.tar:b.PNG");
    EXPECT_EQ(h->OutputCpu(0).shape(2), Shape{0}) << "c has no image: filled empty";
    EXPECT_EQ(h->OutputCpu(0).source(2)->file, dir + "/s.tar:c");
    EXPECT_EQ(Bytes(h->OutputCpu(1), 2), cls_c);
    EXPECT_EQ(h->OutputCpu(1).shape(3), Shape{0});
  }
  {
    auto h = run("skip", true, 2);  // case-sensitive: b.PNG does not match; b, c, d are skipped
    EXPECT_EQ(h->op().EpochSize(2), 1);
    EXPECT_EQ(Bytes(h->OutputCpu(0), 0), jpg_a);
    EXPECT_EQ(Bytes(h->OutputCpu(0), 1), jpg_a) << "the next epoch";
  }
  EXPECT_THAT(ErrorOf([&] { run("error", false, 1); }),
              HasSubstr("op \"readers.webdataset\" (r): " + dir + "/s.tar:c: no member with extension \"jpg\" or \"png\" "
                        "(output 0; it has \"cls\"); missing_component_behavior: error"));
  EXPECT_THAT(ErrorOf([&] { run("skip", true, 1); run("skip", false, 1); Reader({dir + "/s.tar"}, {"txt"}); }),
              HasSubstr("no error"));
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({dir + "/s.tar"}, {"txt"}).SetArg("missing_component_behavior",
                                                                                std::string("skip")), Device::kCpu); }),
              HasSubstr("op \"readers.webdataset\" (r): no samples in any of the 1 shards (first: \"" + dir + "/s.tar\")"));
}

TEST(WebDatasetReader, DtypesReinterpretTheBytesAndCheckTheirSize) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("dtypes");
  MakeWdsShard(dir + "/s.tar", 6, {"f32", "cls"}, rng, "k");
  OpSpec spec = Reader({dir + "/s.tar"}, {"f32", "cls"});
  spec.SetArg("dtypes", std::vector<DType>{DType::kFloat32, DType::kUInt8});
  OpHarness h(spec, Device::kCpu, 6);
  h.Run();
  const auto scanned = ops::GroupMembers(ops::ScanTar(*ops::OpenByteSource(dir + "/s.tar")));
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(h.OutputCpu(0).dtype(), DType::kFloat32);
    EXPECT_EQ(h.OutputCpu(0).shape(i), Shape{scanned[static_cast<size_t>(i)].components[0].size / 4});
  }
  testing::WriteTar(dir + "/odd.tar", {{"x.f32", RandomBytes(rng, 10)}});
  EXPECT_THAT(ErrorOf([&] {
                OpHarness(Reader({dir + "/odd.tar"}, {"f32"}).SetArg("dtypes", std::vector<DType>{DType::kFloat32}),
                          Device::kCpu);
              }),
              HasSubstr("(r): " + dir + "/odd.tar:x.f32: 10 bytes are not a whole number of float32 values (4 bytes each)"));
  EXPECT_THAT(ErrorOf([&] {
                OpHarness(Reader({dir + "/odd.tar"}, {"f32"}).SetArg("dtypes", std::vector<DType>{DType::kFloat32,
                                                                                                  DType::kUInt8}),
                          Device::kCpu);
              }),
              HasSubstr("(r): dtypes: expected one per ext entry (1), got 2"));
}

TEST(WebDatasetReader, IndexFilesGiveTheScansSamplesAndBraceRangesExpand) {
  std::mt19937 rng(std::random_device{}());
  const Set set = MakeSet(rng);
  for (const WdsShard& s : set.shards) {
    const auto samples = ops::GroupMembers(ops::ScanTar(*ops::OpenByteSource(s.path)));
    std::ofstream(s.path.substr(0, s.path.size() - 4) + ".idx") << ops::FormatWdsIndex(samples, s.path);
  }
  OpSpec scanned = Reader({set.dir + "/shard-{000000..000002}.tar"}, {"jpg", "cls"});
  OpSpec indexed = Reader({set.dir + "/shard-{000000..000002}.tar"}, {"jpg", "cls"});
  indexed.SetArg("index_paths", Strings{set.dir + "/shard-{000000..000002}.idx"});
  for (OpSpec* spec : {&scanned, &indexed}) spec->SetArg("random_shuffle", true);
  OpHarness a(scanned, Device::kCpu, 4), b(indexed, Device::kCpu, 4);
  EXPECT_EQ(dynamic_cast<ops::ShardReaderOp&>(a.op()).index().num_samples(), 15);
  for (int it = 0; it < 8; ++it) {
    a.Run();
    b.Run();
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(Bytes(a.OutputCpu(0), i), Bytes(b.OutputCpu(0), i));
      EXPECT_EQ(a.OutputCpu(0).source(i)->file, b.OutputCpu(0).source(i)->file);
    }
  }
  EXPECT_THAT(ErrorOf([&] {
                OpSpec s = Reader({set.dir + "/shard-{000000..000002}.tar"}, {"jpg"});
                OpHarness(s.SetArg("index_paths", Strings{set.dir + "/shard-000000.idx"}), Device::kCpu);
              }),
              HasSubstr("(r): index_paths: expected one index per shard (3), got 1"));
}

TEST(WebDatasetReader, AtMostMaxOpenShardsStayOpen) {
  std::mt19937 rng(std::random_device{}());
  const Set set = MakeSet(rng, {4, 4, 4, 4, 4});
  OpSpec spec = Reader({set.dir + "/*.tar"}, {"jpg"});
  spec.SetArg("max_open_shards", int64_t{2}).SetArg("random_shuffle", true);
  OpHarness h(spec, Device::kCpu, 3);
  const auto& reader = dynamic_cast<const ops::ShardReaderOp&>(h.op());
  for (int it = 0; it < 20; ++it) {
    h.Run();
    EXPECT_LE(reader.open_shards(), 2);
  }
  EXPECT_GT(reader.shard_opens(), 5) << "shards closed and opened again";
}

TEST(WebDatasetReader, ErrorsNameTheReaderAndTheShard) {
  std::mt19937 rng(std::random_device{}());
  const Set set = MakeSet(rng, {3});
  const std::string tar = set.shards[0].path, dir = set.dir;
  // A missing shard: scanned at construction, or opened at the first batch when indexed.
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({tar, dir + "/gone.tar"}, {"jpg"}), Device::kCpu); }),
              HasSubstr("op \"readers.webdataset\" (r): shard \"" + dir + "/gone.tar\": cannot open: No such file"));
  std::ofstream(dir + "/one.idx") << "v1.2 1\njpg 512 10 s0_00000.jpg\n";
  EXPECT_THAT(ErrorOf([&] {
                OpHarness h(Reader({dir + "/gone.tar"}, {"jpg"}).SetArg("index_paths", Strings{dir + "/one.idx"}),
                            Device::kCpu);
                h.Run();
              }),
              HasSubstr("(r): shard \"" + dir + "/gone.tar\": cannot open: No such file"));
  // An index of another (smaller) shard: its sizes are checked before any output is sized.
  std::ofstream(dir + "/wrong.idx") << "v1.2 1\njpg 512 999999 s0_00000.jpg\n";
  EXPECT_THAT(ErrorOf([&] {
                OpHarness h(Reader({tar}, {"jpg"}).SetArg("index_paths", Strings{dir + "/wrong.idx"}), Device::kCpu);
                h.Run();
              }),
              HasSubstr("(r): index \"" + dir + "/wrong.idx\" line 2: \"s0_00000.jpg\" is 999999 bytes at offset 512, but "
                        "shard \"" + tar + "\" holds " + std::to_string(std::filesystem::file_size(tar)) + " bytes"));
  std::ofstream(dir + "/bad.idx") << "v1.2 1\njpg 512\n";
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({tar}, {"jpg"}).SetArg("index_paths", Strings{dir + "/bad.idx"}),
                                      Device::kCpu); }),
              HasSubstr("(r): index \"" + dir + "/bad.idx\" line 2: expected \"<ext> <offset> <size> <name>\""));
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({tar}, {"jpg"}).SetArg("index_paths", Strings{dir + "/none.idx"}),
                                      Device::kCpu); }),
              HasSubstr("(r): index \"" + dir + "/none.idx\": cannot open"));
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({dir + "/*.tgz"}, {"jpg"}), Device::kCpu); }),
              HasSubstr("(r): paths: \"" + dir + "/*.tgz\" matches no file"));
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({dir + "/s-{000..002.tar"}, {"jpg"}), Device::kCpu); }),
              HasSubstr("(r): paths: unbalanced \"{\" in \"" + dir + "/s-{000..002.tar\""));
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({dir + "/s-{9..2}.tar"}, {"jpg"}), Device::kCpu); }),
              HasSubstr("(r): paths: the range {9..2} runs backwards"));
  EXPECT_THAT(ErrorOf([&] { OpHarness(Reader({tar}, {"jpg;"}), Device::kCpu); }),
              HasSubstr("(r): ext: expected extensions separated by ';', got \"jpg;\""));
  // Nothing listens on port 9: one attempt (http_max_retries 0) instead of 5 with back-off.
  OpSpec refused = Reader({"http://127.0.0.1:9/s.tar"}, {"jpg"});
  refused.SetArg("http_max_retries", int64_t{0});
  EXPECT_THAT(ErrorOf([&] { OpHarness(refused, Device::kCpu); }),
              HasSubstr("(r): shard \"http://127.0.0.1:9/s.tar\": cannot open: "));
  EXPECT_THAT(ErrorOf([&] { OpHarness(refused, Device::kCpu); }), HasSubstr(" after 1 attempt"));
  // A shard cut after it was scanned: when next opened its size no longer matches; when cut while
  // open, the read names the sample, the shard and the offsets.
  OpHarness scanned(Reader({tar}, {"jpg"}), Device::kCpu, 1), open(Reader({tar}, {"jpg"}), Device::kCpu, 1);
  open.Run();
  const auto size = std::filesystem::file_size(tar);
  std::filesystem::resize_file(tar, 600);
  EXPECT_THAT(ErrorOf([&] { scanned.Run(); }),
              HasSubstr("(r): shard \"" + tar + "\" holds 600 bytes now, " + std::to_string(size) +
                        " when it was scanned (changed since?)"));
  EXPECT_THAT(ErrorOf([&] { open.Run(); }), HasSubstr("(r): " + tar + ":s0_00001.jpg: \"" + tar + "\": expected "));
}

}  // namespace
}  // namespace conveyor
