// decoders.image / decoders.image_random_crop `on_error` in CPU pipelines over real files with
// damaged copies among them (on_error_fixture.h): `skip` keeps every batch full with labels
// aligned and lists exactly the damaged files in the pipeline's counters; `error` stops with the
// file's name and reader index; damage only the decode finds (the iteration is redone with the
// file replaced); a file deleted after Build; what skip cannot do (a dataset with no good file, an
// input not from a reader).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "core/error.h"
#include "core/pipeline/pipeline.h"
#include "tests/operators/decoders/on_error_fixture.h"
#include "tests/operators/decoders/stage_threads_fixture.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

std::string Yaml(const std::string& root, const std::string& decoder, const std::string& on_error, int batch,
                 bool shuffle, int prefetch = 2, const std::string& more_args = "") {
  return "pipeline: {name: on_error, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: 2, prefetch_depth: " + std::to_string(prefetch) +
         ", seed: 5}\nops:\n"
         "  - {op: readers.file, name: reader, args: {file_root: \"" +
         root + "\", random_shuffle: " + (shuffle ? "true" : "false") +
         "}, outputs: [jpegs, labels]}\n"
         "  - {op: " +
         decoder + ", name: decode, inputs: [jpegs], args: {output_type: RGB, on_error: " + on_error + more_args +
         "}, outputs: [images]}\n"
         "outputs: [images, labels]\n";
}

// Runs until an iteration fails; its message (or "" when `iterations` all succeeded).
std::string FirstError(Pipeline& p, int iterations) {
  for (int k = 0; k < iterations; ++k) {
    try {
      PipelineOutputs out = p.Outputs();
      out.Release();
      p.Run();
    } catch (const Error& e) {
      return e.what();
    }
  }
  return "";
}

const std::vector<std::pair<int, Damage>> kThreeBad = {
    {5, Damage::kTruncatedJpeg}, {17, Damage::kFlippedJpegMarker}, {29, Damage::kFlippedPngByte}};

// Runs `iterations` batches with skip: each full, every sample a good file with its label and
// decode (CheckBatch); every good file met in each of at least three epochs; the counters list
// exactly the damaged files, each under the reader with its damage's reason, once per epoch.
ExecutorCounters RunSkipAndCheck(const OnErrorDataset& ds, const std::string& decoder, int batch, int iterations) {
  Pipeline p = Pipeline::FromYaml(Yaml(ds.root, decoder, "skip", batch, /*shuffle=*/true));
  p.Build();
  std::multiset<std::string> seen;
  for (int k = 0; k < iterations; ++k) {
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& images = out.Cpu(out.Index("images"));
    CheckBatch(ds, images, images.sources(), out.Cpu(out.Index("labels")), batch, decoder != "decoders.image",
               /*gpu=*/false, &seen);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "iteration " << k;
      return {};
    }
    out.Release();
    p.Run();
  }
  for (const auto& [name, label] : ds.label) {
    if (!ds.bad.count(name)) {
      EXPECT_GE(seen.count(name), 3u) << name << ": every good file, every epoch";
    }
  }
  const ExecutorCounters c = p.counters();
  std::set<std::string> listed;
  for (const ExecutorCounters::SkippedFile& f : c.skipped_files) {
    EXPECT_EQ(f.node, "reader");
    EXPECT_EQ(f.file, ds.Path(FileName(f.file)));
    if (ds.bad.count(FileName(f.file)) != 1) {
      ADD_FAILURE() << f.file << " was skipped: " << f.reason;
      continue;
    }
    EXPECT_THAT(f.reason, HasSubstr(ReasonOf(ds.bad.at(FileName(f.file)))));
    EXPECT_GE(f.times, 3) << f.file << ": met once per epoch";
    listed.insert(FileName(f.file));
  }
  EXPECT_EQ(listed, ds.BadNames());
  EXPECT_EQ(c.skipped_files.size(), ds.bad.size()) << "each file listed once";
  return c;
}

TEST(OnError, SkipKeepsBatchesFullLabelsAlignedAndCountsTheDamagedFiles) {
  const OnErrorDataset ds = MakeOnErrorDataset(40, kThreeBad);
  for (const std::string decoder : {"decoders.image", "decoders.image_random_crop"}) {
    SCOPED_TRACE(decoder);
    // 112 samples: three epochs of 37 good files and one more.
    const ExecutorCounters c = RunSkipAndCheck(ds, decoder, /*batch=*/8, /*iterations=*/14);
    EXPECT_GE(c.skipped_samples, 9);
    EXPECT_EQ(c.refilled_iterations, 0) << "the reader's check found all three";
  }
}

TEST(OnError, TheSameSeedSkipsTheSameWay) {
  const OnErrorDataset ds = MakeOnErrorDataset(40, kThreeBad);
  std::vector<std::vector<SampleSource>> runs[2];
  for (int run = 0; run < 2; ++run) {
    Pipeline p = Pipeline::FromYaml(Yaml(ds.root, "decoders.image", "skip", 8, true));
    p.Build();
    for (int k = 0; k < 6; ++k) {
      PipelineOutputs out = p.Outputs();
      runs[run].push_back(out.Cpu(out.Index("labels")).sources());
      out.Release();
      p.Run();
    }
  }
  EXPECT_EQ(runs[0], runs[1]);
}

TEST(OnError, ErrorStopsNamingTheFileAndReaderIndex) {
  const std::pair<int, Damage> cases[] = {{5, Damage::kTruncatedJpeg},  {5, Damage::kFlippedJpegMarker},
                                          {4, Damage::kFlippedPngByte}, {4, Damage::kTruncatedPng},
                                          {5, Damage::kNotAnImage},     {5, Damage::kMarkerInEntropy},
                                          {5, Damage::kHugeFrameHeader}};
  for (const auto& [at, damage] : cases) {
    const OnErrorDataset ds = MakeOnErrorDataset(10, {{at, damage}});
    const std::string bad = *ds.BadNames().begin();
    for (const std::string decoder : {"decoders.image", "decoders.image_random_crop"}) {
      SCOPED_TRACE(decoder + " " + bad + " " + ReasonOf(damage));
      Pipeline p = Pipeline::FromYaml(Yaml(ds.root, decoder, "error", 10, false));
      p.Build();
      const std::string message = FirstError(p, 1);
      EXPECT_THAT(message, HasSubstr("node \"decode\" (op \"" + decoder + "\")"));
      EXPECT_THAT(message, HasSubstr("(file \"" + ds.Path(bad) + "\", reader index "));
      EXPECT_THAT(message, HasSubstr(ReasonOf(damage)));
    }
  }
}

// on_error: skip's check holds files to the decoder's max_pixels, so a file over it is skipped like
// any other bad header: at the default, a forged 20000x20000 frame header; with max_pixels 3000,
// also every real file of more pixels (listed with its size and the limit), and nothing else.
TEST(OnError, SkipDropsFilesOverMaxPixels) {
  const OnErrorDataset ds = MakeOnErrorDataset(20, {{6, Damage::kHugeFrameHeader}}, "on_error_max_pixels");
  for (const int64_t max_pixels : {int64_t{0}, int64_t{3000}}) {
    SCOPED_TRACE(max_pixels);
    OnErrorDataset expect = ds;
    for (const auto& [name, bytes] : ds.bytes) {
      if (ds.bad.count(name) || max_pixels == 0) continue;
      const Pixels p = DecodeOurs(bytes, ops::OutputColor::kRgb);
      if (p.height * p.width > max_pixels) expect.bad[name] = Damage::kNotAnImage;  // must not be delivered
    }
    if (max_pixels > 0) {
      ASSERT_GT(expect.bad.size(), 3u) << "some real files over the limit";
    }
    ASSERT_LT(expect.bad.size(), ds.bytes.size()) << "some under it";
    Pipeline p = Pipeline::FromYaml(Yaml(ds.root, "decoders.image", "skip", 4, true, 2,
                                         max_pixels ? ", max_pixels: " + std::to_string(max_pixels) : ""));
    p.Build();
    for (int k = 0; k < 10; ++k) {
      PipelineOutputs out = p.Outputs();
      const TensorListCPU& images = out.Cpu(out.Index("images"));
      ASSERT_NO_FATAL_FAILURE(
          CheckBatch(expect, images, images.sources(), out.Cpu(out.Index("labels")), 4, false, false, nullptr))
          << "iteration " << k;
      out.Release();
      p.Run();
    }
    std::set<std::string> listed;
    for (const ExecutorCounters::SkippedFile& f : p.counters().skipped_files) {
      const std::string name = FileName(f.file);
      listed.insert(name);
      if (ds.bad.count(name)) {
        EXPECT_THAT(f.reason, HasSubstr(max_pixels == 0 ? ReasonOf(Damage::kHugeFrameHeader)
                                                        : "JPEG frame header claims 20000x20000 (400000000 pixels), "
                                                          "more than max_pixels (3000)"));
      } else {
        EXPECT_THAT(f.reason, HasSubstr("pixels), more than max_pixels (3000): a forged or damaged header, or raise "
                                        "max_pixels")) << name;
      }
    }
    EXPECT_EQ(listed, expect.BadNames());
  }
}

TEST(OnError, DefaultIsError) {
  const OnErrorDataset ds = MakeOnErrorDataset(10, {{5, Damage::kTruncatedJpeg}});
  std::string yaml = Yaml(ds.root, "decoders.image", "error", 10, false);
  yaml.replace(yaml.find(", on_error: error"), std::string(", on_error: error").size(), "");
  Pipeline p = Pipeline::FromYaml(yaml);
  p.Build();
  EXPECT_THAT(FirstError(p, 1), HasSubstr("(file \"" + ds.Path("f05.jpg") + "\", reader index "));
}

TEST(OnError, UnknownValueIsRejectedWithASuggestion) {
  const OnErrorDataset ds = MakeOnErrorDataset(4, {});
  EXPECT_THAT([&] { Pipeline::FromYaml(Yaml(ds.root, "decoders.image", "skp", 4, false)); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("expected one of error, skip, got \"skp\"")));
}

// Damage with a sound structure (fill bytes and a restart marker inside the scan) passes the
// reader's check and is found only by the decode, after the batch is fixed: the decoder tells the
// reader, the executor redoes the iteration, and the reader's Setup replaces the file — batches
// stay full, labels aligned, the file listed with libjpeg's reason, once per epoch.
TEST(OnError, SkipReplacesDamageOnlyTheDecodeFinds) {
  // The PNG only for the full decode: a window decode never reads a PNG's rows below its window.
  for (const std::string decoder : {"decoders.image", "decoders.image_random_crop"}) {
    SCOPED_TRACE(decoder);
    std::vector<std::pair<int, Damage>> bad = {
        {5, Damage::kMarkerInEntropy}, {17, Damage::kFlippedJpegMarker}, {22, Damage::kMarkerInEntropy}};
    if (decoder == "decoders.image") bad.emplace_back(24, Damage::kDeflateInPng);
    const OnErrorDataset ds = MakeOnErrorDataset(30, bad);
    // 90 samples: three epochs of the good files and more.
    const ExecutorCounters c = RunSkipAndCheck(ds, decoder, /*batch=*/9, /*iterations=*/10);
    // One redone iteration per file only the decode finds, the first time it is met (later epochs'
    // Setup skips it from the reader's record).
    EXPECT_EQ(c.refilled_iterations, decoder == "decoders.image" ? 3 : 2);
  }
}

// A redone iteration is the same on every run with the seed, and a checkpoint taken after one
// resumes to the same batches (the resumed run rejects the file again when it meets it).
TEST(OnError, RefilledIterationsAreReproducibleAndResumeExactly) {
  const OnErrorDataset ds = MakeOnErrorDataset(20, {{3, Damage::kMarkerInEntropy}, {12, Damage::kMarkerInEntropy}});
  const std::string yaml = Yaml(ds.root, "decoders.image_random_crop", "skip", 6, /*shuffle=*/true);
  constexpr int kIterations = 9, kResumeAt = 4;
  std::vector<std::vector<SampleSource>> runs[2];
  std::vector<std::vector<uint8_t>> pixels[2];
  std::string checkpoint;
  for (int run = 0; run < 2; ++run) {
    Pipeline p = Pipeline::FromYaml(yaml);
    p.Build();
    for (int k = 0; k < kIterations; ++k) {
      if (run == 0 && k == kResumeAt) checkpoint = p.Checkpoint();
      PipelineOutputs out = p.Outputs();
      runs[run].push_back(out.Cpu(out.Index("labels")).sources());
      const TensorListCPU& images = out.Cpu(out.Index("images"));
      const uint8_t* data = static_cast<const uint8_t*>(images.raw_sample(0));
      pixels[run].emplace_back(data, data + images.shape(0).num_elements());
      out.Release();
      p.Run();
    }
    EXPECT_EQ(p.counters().refilled_iterations, 2) << "run " << run;
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(pixels[0], pixels[1]) << "the same windows drawn in the redone iterations";
  Pipeline resumed = Pipeline::FromYaml(yaml);
  resumed.ResumeFrom(checkpoint);
  resumed.Build();
  for (int k = kResumeAt; k < kIterations; ++k) {
    PipelineOutputs out = resumed.Outputs();
    EXPECT_EQ(out.Cpu(out.Index("labels")).sources(), runs[0][static_cast<size_t>(k)]) << "iteration " << k;
    out.Release();
    resumed.Run();
  }
}

// With the CPU stage on its own thread (cpu_stage_thread: true; here the decoder runs in it, so the
// CPU thread redoes the iteration itself) the re-filled batches are the ones one thread makes, the
// skips counted as often, and a checkpoint taken there resumes to the same batches. Prefetch 3: the
// CPU stage runs up to two iterations ahead of the thread that completes them.
TEST(OnError, TheCpuStageOnItsOwnThreadRefillsTheSameBatches) {
  const OnErrorDataset ds = MakeOnErrorDataset(
      20, {{3, Damage::kMarkerInEntropy}, {12, Damage::kMarkerInEntropy}, {7, Damage::kTruncatedJpeg}});
  const std::string yaml = Yaml(ds.root, "decoders.image_random_crop", "skip", 6, /*shuffle=*/true, /*prefetch=*/3);
  EXPECT_EQ(ExpectStageThreadsAgree(yaml, /*iterations=*/12, /*checkpoint_at=*/5), 2);
}

// Every file passes the reader's check and fails the decode: each redo rejects one more, until the
// reader has skipped more files than the dataset holds and says so (no endless redoing).
TEST(OnError, SkipWhenTheDecodeRejectsEveryFileStopsSayingSo) {
  std::vector<std::pair<int, Damage>> all;
  for (int i = 0; i < 8; ++i) all.emplace_back(i, i % 5 == 4 ? Damage::kDeflateInPng : Damage::kMarkerInEntropy);
  const OnErrorDataset ds = MakeOnErrorDataset(8, all);
  Pipeline p = Pipeline::FromYaml(Yaml(ds.root, "decoders.image", "skip", 4, false));
  p.Build();
  const std::string message = FirstError(p, 1);
  // The decode runs a batch's samples on several threads: each pass rejects every file that failed
  // in it (one to four), so the reader passes twice the dataset's 8 with 17 to 20 skipped in a row.
  EXPECT_THAT(message, ::testing::ContainsRegex("op \"readers.file\" \\(reader\\): skipped (17|18|19|20) files in a "
                                                "row while filling one batch, more than twice the dataset's 8: no file "
                                                "passes the check of op \"decoders.image\" \\(decode\\)"));
  // At most one redo per damaged file (the reader stops only once every file is known bad); at least
  // two (four at most per pass).
  EXPECT_GE(p.counters().refilled_iterations, 2);
  EXPECT_LE(p.counters().refilled_iterations, 8);
}

// Without skip the same file stops the pipeline naming it; nothing is redone.
TEST(OnError, ErrorStopsOnDamageOnlyTheDecodeFinds) {
  const OnErrorDataset ds = MakeOnErrorDataset(10, {{5, Damage::kMarkerInEntropy}});
  Pipeline p = Pipeline::FromYaml(Yaml(ds.root, "decoders.image", "error", 10, false));
  p.Build();
  const std::string message = FirstError(p, 1);
  EXPECT_THAT(message, HasSubstr("(file \"" + ds.Path("f05.jpg") + "\", reader index "));
  EXPECT_THAT(message, HasSubstr(ReasonOf(Damage::kMarkerInEntropy)));
  EXPECT_EQ(p.counters().refilled_iterations, 0);
}

// A file deleted after Build, before the reader reaches it (iteration 3; prefetch 1 read only
// iteration 0): `error` stops naming it; `skip` drops it like a damaged file.
TEST(OnError, FileDeletedAfterBuild) {
  for (const std::string mode : {"error", "skip"}) {
    SCOPED_TRACE(mode);
    const OnErrorDataset ds = MakeOnErrorDataset(16, {});
    Pipeline p = Pipeline::FromYaml(Yaml(ds.root, "decoders.image", mode, 4, false, /*prefetch=*/1));
    p.Build();
    // No shuffle: the order is c0 (f00 f04 f08 f12), c1, c2, c3 — f07 is in c3's batch, the last.
    const std::string gone = ds.Path("f07.jpg");
    ASSERT_TRUE(std::filesystem::remove(gone));
    if (mode == "error") {
      const std::string message = FirstError(p, 4);
      EXPECT_THAT(message, HasSubstr("node \"reader\" (op \"readers.file\")"));
      EXPECT_THAT(message, HasSubstr("file \"" + gone + "\": cannot open: No such file or directory"));
      continue;
    }
    std::multiset<std::string> seen;
    OnErrorDataset without = ds;
    without.bad["f07.jpg"] = Damage::kNotAnImage;  // CheckBatch: must not be delivered
    for (int k = 0; k < 4; ++k) {
      PipelineOutputs out = p.Outputs();
      const TensorListCPU& images = out.Cpu(out.Index("images"));
      ASSERT_NO_FATAL_FAILURE(
          CheckBatch(without, images, images.sources(), out.Cpu(out.Index("labels")), 4, false, false, &seen));
      out.Release();
      p.Run();
    }
    const ExecutorCounters c = p.counters();
    ASSERT_EQ(c.skipped_files.size(), 1u);
    EXPECT_EQ(c.skipped_files[0].file, gone);
    EXPECT_THAT(c.skipped_files[0].reason, HasSubstr("cannot open: No such file or directory"));
  }
}

TEST(OnError, SkipWithNoGoodFileStopsSayingSo) {
  const OnErrorDataset ds = MakeOnErrorDataset(5, {{0, Damage::kTruncatedJpeg},
                                                   {1, Damage::kNotAnImage},
                                                   {2, Damage::kFlippedJpegMarker},
                                                   {3, Damage::kTruncatedJpeg},
                                                   {4, Damage::kTruncatedPng}});
  Pipeline p = Pipeline::FromYaml(Yaml(ds.root, "decoders.image", "skip", 2, false));
  p.Build();
  const std::string message = FirstError(p, 1);
  EXPECT_THAT(message, HasSubstr("node \"reader\" (op \"readers.file\")"));
  EXPECT_THAT(message, HasSubstr("in a row while filling one batch, more than twice the dataset's 5: no file passes "
                                 "the check of op \"decoders.image\" (decode) (the last: file \""));
}

TEST(OnError, SkipNeedsItsInputStraightFromAReader) {
  const std::string yaml =
      "pipeline: {name: p, batch_size: 2, device: cpu}\n"
      "ops:\n"
      "  - {op: external_source, name: src, outputs: [jpegs]}\n"
      "  - {op: decoders.image, name: decode, inputs: [jpegs], args: {on_error: skip}, outputs: [images]}\n"
      "outputs: [images]\n";
  EXPECT_THAT(
      [&] {
        Pipeline p = Pipeline::FromYaml(yaml);
        p.Build();
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("op \"decoders.image\" (decode): argument \"on_error\": skip needs input \"jpegs\" straight from a "
                    "reader (readers.file), which reads other files in place of skipped ones; it comes from op "
                    "\"external_source\" (src)")));
}

// Sources travel on through one-to-one operators: a CPU op after the decoder carries them.
TEST(OnError, SourcesTravelThroughOneToOneOperators) {
  const OnErrorDataset ds = MakeOnErrorDataset(8, {});
  const std::string yaml =
      "pipeline: {name: p, batch_size: 4, device: cpu, seed: 3}\nops:\n"
      "  - {op: readers.file, name: reader, args: {file_root: \"" +
      ds.root +
      "\", random_shuffle: true}, "
      "outputs: [jpegs, labels]}\n"
      "  - {op: decoders.image, name: decode, inputs: [jpegs], outputs: [images]}\n"
      "  - {op: flip, name: flip, inputs: [images], outputs: [flipped]}\n"
      "outputs: [flipped, labels, jpegs]\n";
  Pipeline p = Pipeline::FromYaml(yaml);
  p.Build();
  for (int k = 0; k < 3; ++k) {
    PipelineOutputs out = p.Outputs();
    const std::vector<SampleSource>& sources = out.Cpu(out.Index("jpegs")).sources();
    ASSERT_EQ(sources.size(), 4u);
    for (const SampleSource& s : sources) EXPECT_EQ(s.file, ds.Path(FileName(s.file)));
    EXPECT_EQ(out.Cpu(out.Index("labels")).sources(), sources);
    EXPECT_EQ(out.Cpu(out.Index("flipped")).sources(), sources);
    out.Release();
    p.Run();
  }
}

}  // namespace
}  // namespace conveyor::testing
