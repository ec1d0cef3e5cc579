// The shipped pipelines (pipelines/*.yaml) run through the CLI on the CPU over the sample dataset
// that tools/make_sample_data generates (the one the README's quick start uses), found through
// the variables the pipelines read (shipped_pipelines.h). The GPU twin: pipelines_gpu_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "operators/readers/npy_format.h"
#include "tests/cli/cli_runner.h"
#include "tests/cli/shipped_pipelines.h"

namespace conveyor::cli_test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Height and width from a JPEG's SOF0/SOF2 header; {0, 0} when there is none.
std::pair<int, int> JpegSize(const std::string& bytes) {
  for (size_t i = 2; i + 9 < bytes.size();) {
    if (static_cast<uint8_t>(bytes[i]) != 0xFF) return {0, 0};
    const uint8_t marker = static_cast<uint8_t>(bytes[i + 1]);
    const size_t length = static_cast<uint8_t>(bytes[i + 2]) * 256u + static_cast<uint8_t>(bytes[i + 3]);
    if (marker == 0xC0 || marker == 0xC2) {
      auto u16 = [&](size_t at) { return static_cast<uint8_t>(bytes[at]) * 256 + static_cast<uint8_t>(bytes[at + 1]); };
      return {u16(i + 5), u16(i + 7)};
    }
    i += 2 + length;
  }
  return {0, 0};
}

TEST(SampleData, TenClassesOfVaryingRealJpegsAListAndArrays) {
  const std::string data = SampleData();
  std::map<std::string, int> per_class;
  std::set<int> heights, widths;
  bool progressive = false;
  for (const auto& entry : fs::recursive_directory_iterator(data + "/samples")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".jpg") continue;
    ++per_class[entry.path().parent_path().filename().string()];
    const std::string bytes = ReadText(entry.path().string());
    ASSERT_GT(bytes.size(), 2000u) << entry.path() << ": photo-like content is not tiny";
    const auto [h, w] = JpegSize(bytes);
    ASSERT_GE(h, 200) << entry.path();
    ASSERT_LE(h, 800) << entry.path();
    ASSERT_GE(w, 200) << entry.path();
    ASSERT_LE(w, 800) << entry.path();
    heights.insert(h);
    widths.insert(w);
    progressive |= bytes.find("\xFF\xC2") != std::string::npos;
  }
  ASSERT_EQ(per_class.size(), 10u);
  int total = 0;
  for (const auto& [name, count] : per_class) {
    EXPECT_EQ(count, 26) << name;
    total += count;
  }
  EXPECT_GE(total, 256);
  EXPECT_GE(heights.size(), 100u) << "sizes vary";
  EXPECT_GE(widths.size(), 100u) << "sizes vary";
  EXPECT_TRUE(progressive) << "some progressive JPEGs for a realistic decoder mix";
  EXPECT_THAT(ReadText(data + "/file_list.txt"), HasSubstr("\nsamples/class_09/0003.jpg 9\n"));
  int arrays = 0;
  for (const auto& entry : fs::directory_iterator(data + "/samples_npy")) arrays += entry.path().extension() == ".npy";
  EXPECT_EQ(arrays, 16);
}

TEST(SampleData, Deterministic) {
  // A smaller run writes the same first files byte for byte (file k depends on k only).
  const std::string again = MakeTempDir("sample_data_again");
  ASSERT_EQ(std::system(("tools/make_sample_data/make_sample_data '" + again + "' --per-class 4 >/dev/null").c_str()), 0);
  for (const char* file : {"samples/class_00/0000.jpg", "samples/class_07/0003.jpg", "file_list.txt",
                           "samples_npy/hist_005.npy"}) {
    EXPECT_EQ(ReadText(again + "/" + file), ReadText(SampleData() + "/" + file)) << file;
  }
}

TEST(ShippedPipelines, EveryFileHasACase) {
  std::vector<std::string> cases;
  for (const ShippedPipeline& p : ShippedPipelines(1)) cases.push_back(p.file);
  EXPECT_EQ(PipelineFiles(), cases) << "add a case for each new pipeline to shipped_pipelines.cc";
}

TEST(ShippedPipelines, EachValidatesAndRunsOnTheCpu) {
  SampleData();
  for (const ShippedPipeline& p : ShippedPipelines(4)) {
    SCOPED_TRACE(p.file);
    const CliResult v = RunConveyor({"validate", p.file});
    EXPECT_EQ(v.status, 0) << v.err;
    std::vector<std::string> args = {"run", p.file, "--device", "cpu", "--batch-size", "4", "--iterations", "2",
                                     "--no-progress"};
    args.insert(args.end(), p.args.begin(), p.args.end());
    const CliResult r = RunConveyor(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(" on cpu, batch 4, 2 iterations (8 samples)"));
    for (const std::string& output : p.outputs) EXPECT_THAT(r.out, HasSubstr(output + " on the host"));
    if (p.decodes) {
      EXPECT_THAT(r.out, HasSubstr("decoders        decode (cpu): libjpeg-turbo, libpng, libtiff"));
    }
  }
}

TEST(ShippedPipelines, TrainReadsTheWholeSetOrTheFileList) {
  SampleData();
  const CliResult all = RunConveyor({"run", "pipelines/image_classification_train.yaml", "--device", "cpu",
                                     "--batch-size", "64", "--epochs", "1", "--no-progress"});
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("epoch of reader \"reader\": 260 samples = 5 iterations"));
  EXPECT_THAT(all.out, HasSubstr("5 iterations (320 samples)"));
  const CliResult list = RunConveyor({"run", "pipelines/image_classification_train.yaml", "--device", "cpu",
                                      "--batch-size", "8", "--iterations", "1", "--no-progress", "--set",
                                      "reader.file_root=", "--set", "reader.file_list=" + SampleData() + "/file_list.txt"});
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("40 samples = 5 iterations"));
}

TEST(ShippedPipelines, PluginScalesHistogramsToPercent) {
  SampleData();
  const std::string out = MakeTempDir("plugin_out");
  const CliResult r = RunConveyor({"run", "pipelines/plugin_example.yaml", "--device", "cpu", "--batch-size", "4",
                                   "--iterations", "1", "--save-outputs", out, "--no-progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string bytes = ReadText(out + "/percent_000000.npy");
  const ops::NpyHeader h = ops::ParseNpyHeader(bytes.data(), bytes.size(), "percent");
  ASSERT_EQ(h.shape, (Shape{4, 3, 16}));
  const float* v = reinterpret_cast<const float*>(bytes.data() + h.data_offset);
  for (int row = 0; row < 4 * 3; ++row) {
    double sum = 0;
    for (int b = 0; b < 16; ++b) sum += v[row * 16 + b];
    EXPECT_NEAR(sum, 100.0, 1e-3) << "row " << row << ": each channel's histogram sums to 1, scaled by 100";
  }
}

TEST(ShippedPipelines, TrainPreviewWithDecodedInputs) {
  SampleData();
  const std::string png = MakeTempDir("train_preview") + "/grid.png";
  const CliResult p = RunConveyor({"preview", "pipelines/image_classification_train.yaml", "--device", "cpu",
                                   "--batch-size", "6", "--inputs", "images", "--tile-size", "96", "-o", png});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_THAT(p.out, HasSubstr("6 samples of \"images_out\" (float16), normalization undone from "
                               "crop_mirror_normalize, captions from \"labels\", \"images\" beside them"));
  EXPECT_GT(fs::file_size(png), 10000u);
}

// The sample data's tar shards (make_sample_data, through conveyor shards' writer) and TFRecord
// files hold the same 260 JPEGs in the same order, and both readers draw readers.file's exact
// permutation: the two pipelines (same seed, same node names) give the same batches bit for bit,
// the .cls text matching the int64 label.
TEST(ShippedPipelines, WebDatasetTrainGivesTfRecordTrainsBatches) {
  SampleData();
  const std::string dir = MakeTempDir("wds_vs_tfrecord");
  for (const char* name : {"webdataset", "tfrecord"}) {
    const CliResult r = RunConveyor({"run", std::string("pipelines/") + name + "_train.yaml", "--device", "cpu",
                                     "--batch-size", "8", "--iterations", "2", "--no-progress", "--save-outputs",
                                     dir + "/" + name});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("epoch of reader \"reader\": 260 samples = 33 iterations"));
  }
  for (const char* it : {"000000", "000001"}) {
    const std::string images = ReadText(dir + "/webdataset/images_out_" + it + ".npy");
    ASSERT_GT(images.size(), 8u * 3 * 224 * 224 * 2);
    EXPECT_EQ(images, ReadText(dir + "/tfrecord/images_out_" + it + ".npy")) << it;
    const std::string text = ReadText(dir + "/webdataset/labels_" + it + ".npy");
    const std::string ints = ReadText(dir + "/tfrecord/labels_" + it + ".npy");
    ASSERT_GE(text.size(), 8u);
    ASSERT_GE(ints.size(), 64u);
    for (size_t i = 0; i < 8; ++i) {
      int64_t label = -1;
      std::memcpy(&label, ints.data() + ints.size() - 64 + 8 * i, 8);
      EXPECT_EQ(text[text.size() - 8 + i], static_cast<char>('0' + label)) << "iteration " << it << " sample " << i;
    }
  }
}

TEST(ShippedPipelines, TrainSkipsABrokenFileAndNamesItInTheSummary) {
  // Two sample classes plus a truncated JPEG: on_error: skip runs on and lists it; error stops.
  const std::string dir = MakeTempDir("skip_data");
  for (const char* cls : {"class_00", "class_01"}) {
    fs::copy(SampleData() + "/samples/" + cls, dir + "/" + cls, fs::copy_options::recursive);
  }
  const std::string whole = ReadText(dir + "/class_01/0000.jpg");
  const std::string broken = dir + "/class_01/0000_truncated.jpg";
  WriteText(broken, whole.substr(0, whole.size() / 2));
  auto run = [&](const std::string& on_error) {
    return RunConveyor({"run", "pipelines/image_classification_train.yaml", "--device", "cpu", "--batch-size", "8",
                        "--epochs", "1", "--no-progress", "--set", "reader.file_root=" + dir, "--set",
                        "decode.on_error=" + on_error});
  };
  const CliResult skip = run("skip");
  ASSERT_EQ(skip.status, 0) << skip.err;
  EXPECT_THAT(skip.out, HasSubstr("53 samples = 7 iterations"));
  EXPECT_THAT(skip.out, HasSubstr("  skipped         1 sample of 1 file (on_error: skip"));
  EXPECT_THAT(skip.out, HasSubstr("reader: " + broken + ": "));
  const CliResult stop = run("error");
  EXPECT_EQ(stop.status, 1);
  EXPECT_THAT(stop.err, HasSubstr("0000_truncated.jpg"));
}

// recipe_train's random erasing (probability 0.25): about a quarter of the samples carry one
// rectangle of zeros (the mean colour after normalization) covering 2% to 1/3 of the image (sides
// rounded to pixels); the others none.
TEST(ShippedPipelines, RecipeTrainErasesOneRectangleInAQuarterOfTheSamples) {
  SampleData();
  const std::string dir = MakeTempDir("recipe_train");
  const CliResult r = RunConveyor({"run", "pipelines/recipe_train.yaml", "--device", "cpu", "--batch-size", "64",
                                   "--iterations", "2", "--no-progress", "--save-outputs", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  int erased = 0, samples = 0;
  for (const char* it : {"000000", "000001"}) {
    for (const ZeroRegion& z : ZeroRegions(dir + "/images_out_" + it + ".npy")) {
      ++samples;
      if (z.fraction == 0) continue;
      ++erased;
      EXPECT_TRUE(z.rectangle) << "iteration " << it << " sample " << samples - 1;
      EXPECT_GE(z.fraction, 0.015) << "iteration " << it << " sample " << samples - 1;
      EXPECT_LE(z.fraction, 0.345) << "iteration " << it << " sample " << samples - 1;
    }
  }
  ASSERT_EQ(samples, 128);
  // Binomial(128, 0.25): 32 +- 4.9; these bounds are 3.7 sigma out.
  EXPECT_GE(erased, 14);
  EXPECT_LE(erased, 50);
}

TEST(ShippedPipelines, ExternalSourceNeedsAFeed) {
  const CliResult r = RunConveyor({"run", "pipelines/external_source.yaml", "--device", "cpu"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("pipelines/external_source.yaml:20:"));
  EXPECT_THAT(r.err, HasSubstr("--feed frames=SHAPE"));
}

}  // namespace
}  // namespace conveyor::cli_test
