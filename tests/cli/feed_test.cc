// `--feed NODE=SHAPE`: the CLI feeds external_source nodes random batches of a declared shape
// (cli/feed.h) — shapes within the ranges, values of the dtype's documented range, the same
// batches on every run, new ones every iteration — and every mistake is one clear line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "operators/readers/npy_format.h"
#include "tests/cli/cli_runner.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;

constexpr int kBatch = 3;

// A CPU pipeline whose only node is an external_source "src" (line 3 of the file).
std::string SourcePipeline(const std::string& name, const std::string& args) {
  const std::string dir = MakeTempDir(name);
  WriteText(dir + "/p.yaml", "pipeline: {name: fed, batch_size: " + std::to_string(kBatch) +
                                 ", device: cpu, seed: 7}\nops:\n"
                                 "  - {op: external_source, name: src, args: " + args + ", outputs: [data]}\n"
                                 "outputs: [data]\n");
  return dir;
}

struct Sample {
  Shape shape;
  DType dtype = DType::kUInt8;
  std::string data;
};

// The samples of iteration `it` saved by --save-outputs (one file per batch or per sample).
std::vector<Sample> ReadSaved(const std::string& dir, int it) {
  auto read = [](const std::string& path) {
    const std::string bytes = ReadText(path);
    const ops::NpyHeader h = ops::ParseNpyHeader(bytes.data(), bytes.size(), path);
    return std::make_pair(h, bytes.substr(static_cast<size_t>(h.data_offset)));
  };
  char name[64];
  std::snprintf(name, sizeof(name), "/data_%06d.npy", it);
  std::vector<Sample> samples;
  if (std::filesystem::exists(dir + name)) {
    const auto [h, data] = read(dir + name);
    EXPECT_EQ(h.shape[0], kBatch);
    const Shape one(h.shape.begin() + 1, h.shape.end());
    const size_t bytes = data.size() / kBatch;
    for (int s = 0; s < kBatch; ++s) samples.push_back({one, h.dtype, data.substr(s * bytes, bytes)});
    return samples;
  }
  for (int s = 0; s < kBatch; ++s) {
    std::snprintf(name, sizeof(name), "/data_%06d_%04d.npy", it, s);
    EXPECT_TRUE(std::filesystem::exists(dir + name)) << dir + name;
    if (!std::filesystem::exists(dir + name)) return samples;
    const auto [h, data] = read(dir + name);
    samples.push_back({h.shape, h.dtype, data});
  }
  return samples;
}

TEST(CliFeed, RandomUint8BatchesOfTheDeclaredShapesRepeatable) {
  const std::string dir = SourcePipeline("feed_uint8", "{dtype: uint8, ndim: 2}");
  auto run = [&](const std::string& out) {
    const CliResult r = RunConveyor({"run", dir + "/p.yaml", "--feed", "src=2-9x7", "--iterations", "4",
                                     "--save-outputs", out, "--no-progress"});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("4 iterations (12 samples)"));
  };
  run(dir + "/a");
  run(dir + "/b");
  std::set<int64_t> heights;
  std::set<uint8_t> values;
  std::string previous;
  for (int it = 0; it < 4; ++it) {
    const std::vector<Sample> a = ReadSaved(dir + "/a", it), b = ReadSaved(dir + "/b", it);
    ASSERT_EQ(a.size(), static_cast<size_t>(kBatch));
    ASSERT_EQ(b.size(), a.size());
    std::string all;
    for (int s = 0; s < kBatch; ++s) {
      EXPECT_EQ(a[s].dtype, DType::kUInt8);
      ASSERT_EQ(a[s].shape.ndim(), 2);
      EXPECT_GE(a[s].shape[0], 2);
      EXPECT_LE(a[s].shape[0], 9);
      EXPECT_EQ(a[s].shape[1], 7);
      heights.insert(a[s].shape[0]);
      EXPECT_EQ(a[s].shape, b[s].shape) << "iteration " << it << " sample " << s;
      EXPECT_EQ(a[s].data, b[s].data) << "iteration " << it << " sample " << s << ": runs differ";
      for (char c : a[s].data) values.insert(static_cast<uint8_t>(c));
      all += a[s].data;
    }
    EXPECT_NE(all, previous) << "iteration " << it << " repeats the previous batch";
    previous = all;
  }
  EXPECT_GE(heights.size(), 3u) << "heights are drawn per sample from 2..9";
  EXPECT_GE(values.size(), 150u) << "uint8 values are uniform over 0..255";
}

TEST(CliFeed, FloatSamplesLieInTheUnitInterval) {
  const std::string dir = SourcePipeline("feed_float", "{dtype: float32, layout: HW}");
  const CliResult r = RunConveyor({"run", dir + "/p.yaml", "--feed", "src=16x16", "--iterations", "1",
                                   "--save-outputs", dir + "/out", "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("data: float32 3 samples of (16, 16) HW on the host"));
  const std::vector<Sample> samples = ReadSaved(dir + "/out", 0);
  ASSERT_EQ(samples.size(), static_cast<size_t>(kBatch));
  float lo = 1, hi = 0;
  for (const Sample& s : samples) {
    ASSERT_EQ(s.data.size(), 16u * 16 * sizeof(float));
    const float* v = reinterpret_cast<const float*>(s.data.data());
    for (int i = 0; i < 256; ++i) {
      lo = std::min(lo, v[i]);
      hi = std::max(hi, v[i]);
    }
  }
  EXPECT_GE(lo, 0.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, 0.05f);
  EXPECT_GT(hi, 0.95f);
}

TEST(CliFeed, MistakesAreOneClearLine) {
  const std::string dir = SourcePipeline("feed_errors", "{dtype: uint8, ndim: 2}");
  auto err = [&](const std::vector<std::string>& feeds) {
    std::vector<std::string> args = {"run", dir + "/p.yaml", "--iterations", "1"};
    for (const std::string& f : feeds) args.insert(args.end(), {"--feed", f});
    const CliResult r = RunConveyor(args);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_THAT(r.err, HasSubstr("conveyor run: error: "));
    return r.err;
  };
  const std::string missing = err({});
  EXPECT_THAT(missing, HasSubstr(dir + "/p.yaml:3:"));
  EXPECT_THAT(missing, HasSubstr("(src): an external_source node needs data from the application"));
  EXPECT_THAT(missing, HasSubstr("--feed src=SHAPE"));
  EXPECT_THAT(err({"src"}), HasSubstr("--feed src: no NODE=; expected NODE=SHAPE with SHAPE like 224x224x3"));
  EXPECT_THAT(err({"src=4xa"}), HasSubstr("--feed src=4xa: \"a\" is not an extent (N or LO-HI)"));
  EXPECT_THAT(err({"src=5-2x3"}), HasSubstr("--feed src=5-2x3: range 5-2 has LO > HI"));
  EXPECT_THAT(err({"src=4x"}), HasSubstr("\"\" is not an extent"));
  EXPECT_THAT(err({"src=4x4", "sr=4x4"}),
              HasSubstr("--feed sr=4x4: the pipeline has no external_source node \"sr\"; did you mean \"src\"?"));
  EXPECT_THAT(err({"src=4x4", "src=5x5"}), HasSubstr("--feed src=5x5: node \"src\" is fed twice"));
  const std::string rank = err({"src=4x4x3"});
  EXPECT_THAT(rank, HasSubstr(dir + "/p.yaml:3:"));
  EXPECT_THAT(rank, HasSubstr("--feed src=4x4x3 gives 3-D samples; the node declares ndim 2"));
}

}  // namespace
}  // namespace conveyor::cli_test
