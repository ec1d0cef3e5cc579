// on_error with the decoder on the GPU (decoders.image, device gpu: nvJPEG with its CPU fallback),
// eager and with graph capture of the GPU op after it: `skip` keeps every batch full with labels
// aligned to the decoded images (each image within the GPU tolerance of the CPU decode of the file
// its sources name) and the counters list exactly the damaged files; `error` stops naming the file
// and its reader index — truncation and broken structure are found on the host in Setup, before
// nvJPEG's hardware engines (which may not report truncation) see the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>
#include <string>

#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/operators/decoders/gpu/gpu_cpu_compare.h"
#include "tests/operators/decoders/on_error_fixture.h"
#include "tests/operators/decoders/stage_threads_fixture.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

std::string Yaml(const std::string& root, const std::string& decoder, const std::string& on_error, int batch,
                 bool shuffle, bool capture, const std::string& more_args = "") {
  return "pipeline: {name: on_error_gpu, batch_size: " + std::to_string(batch) +
         ", device: gpu, num_threads: 4, prefetch_depth: 2, seed: 5, graph_capture: " + (capture ? "true" : "false") +
         "}\nops:\n"
         "  - {op: readers.file, name: reader, args: {file_root: \"" +
         root + "\", random_shuffle: " + (shuffle ? "true" : "false") +
         "}, outputs: [jpegs, labels]}\n"
         "  - {op: " +
         decoder + ", name: decode, device: gpu, inputs: [jpegs], args: {output_type: RGB, on_error: " + on_error +
         more_args + "}, outputs: [images]}\n"
         "  - {op: flip, name: flip, device: gpu, inputs: [images], args: {horizontal: 0}, outputs: [same]}\n"
         "  - {op: cast, name: to_float, device: gpu, inputs: [labels], args: {dtype: float32}, outputs: [labels_f]}\n"
         "outputs: [images, same, labels, labels_f]\n";
}

TensorListCPU ToHost(const TensorListGPU& gpu) {
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, gpu, stream.view());
  stream.Synchronize();
  return host;
}

// Runs `iterations` batches with skip on the GPU: each full, every sample a good file with its label
// and (decoders.image) within the GPU tolerance of its CPU decode; sources carried through a GPU op
// (captured too) and onto staged labels; every good file met in each of three epochs; the counters
// list exactly the damaged files with their reasons, once per epoch.
ExecutorCounters RunSkipAndCheck(const OnErrorDataset& ds, const std::string& decoder, bool capture, int batch,
                                 int iterations) {
  Pipeline p = Pipeline::FromYaml(Yaml(ds.root, decoder, "skip", batch, /*shuffle=*/true, capture));
  p.Build();
  std::multiset<std::string> seen;
  for (int k = 0; k < iterations; ++k) {
    PipelineOutputs out = p.Outputs();
    const TensorListGPU& images = out.Gpu(out.Index("images"));
    // flip with horizontal: 0 copies: a GPU op after the decoder carries the sources too, in a
    // captured segment as well.
    EXPECT_EQ(out.Gpu(out.Index("same")).sources(), images.sources());
    // A staged CPU → GPU edge (the labels) carries them onto the device copy.
    EXPECT_EQ(out.Gpu(out.Index("labels_f")).sources(), out.Cpu(out.Index("labels")).sources());
    const TensorListCPU host = ToHost(images);
    CheckBatch(ds, host, images.sources(), out.Cpu(out.Index("labels")), batch, decoder != "decoders.image",
               /*gpu=*/true, &seen);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "iteration " << k;
      return {};
    }
    if (decoder == "decoders.image") {
      for (int i = 0; i < batch; ++i) {
        const std::string name = FileName(images.sources()[static_cast<size_t>(i)].file);
        const std::vector<uint8_t>& bytes = ds.bytes.at(name);
        TensorListCPU want;
        const Pixels ref = DecodeOurs(bytes, ops::OutputColor::kRgb);
        want.Resize({Shape{ref.height, ref.width, 3}}, DType::kUInt8);
        std::copy(ref.data.begin(), ref.data.end(), static_cast<uint8_t*>(want.raw_sample(0)));
        TensorListCPU have;
        have.Resize({host.shape(i)}, DType::kUInt8);
        std::copy_n(static_cast<const uint8_t*>(host.raw_sample(i)), host.shape(i).num_elements(),
                    static_cast<uint8_t*>(have.raw_sample(0)));
        ExpectDecodedClose(have, want, 0, ToleranceFor(bytes.data(), bytes.size(), /*gray_output=*/false),
                           "iteration " + std::to_string(k) + " " + name);
      }
    }
    out.Release();
    p.Run();
  }
  for (const auto& [name, label] : ds.label) {
    if (!ds.bad.count(name)) {
      EXPECT_GE(seen.count(name), 3u) << name;
    }
  }
  const ExecutorCounters c = p.counters();
  std::set<std::string> listed;
  for (const ExecutorCounters::SkippedFile& f : c.skipped_files) {
    if (ds.bad.count(FileName(f.file)) != 1) {
      ADD_FAILURE() << f.file << " was skipped: " << f.reason;
      continue;
    }
    EXPECT_THAT(f.reason, HasSubstr(ReasonOf(ds.bad.at(FileName(f.file)))));
    EXPECT_GE(f.times, 3) << f.file << ": met once per epoch";
    listed.insert(FileName(f.file));
  }
  EXPECT_EQ(listed, ds.BadNames());
  return c;
}

TEST(OnErrorGpu, SkipKeepsBatchesFullLabelsAlignedAndCountsTheDamagedFiles) {
  CONVEYOR_REQUIRE_GPU();
  const OnErrorDataset ds = MakeOnErrorDataset(
      40, {{5, Damage::kTruncatedJpeg}, {17, Damage::kFlippedJpegMarker}, {29, Damage::kFlippedPngByte}},
      "on_error_gpu");
  for (const std::string decoder : {"decoders.image", "decoders.image_random_crop"}) {
    for (bool capture : {false, true}) {
      SCOPED_TRACE(decoder + (capture ? " captured" : " eager"));
      // Three epochs of 37 good files and one more.
      const ExecutorCounters c = RunSkipAndCheck(ds, decoder, capture, /*batch=*/8, /*iterations=*/14);
      EXPECT_GE(c.skipped_samples, 9);
      EXPECT_EQ(c.refilled_iterations, 0) << "the reader's check found all three";
    }
  }
}

// Damage only the decode finds, on the GPU backend: PNGs whose deflate data is damaged under a right
// CRC go to the CPU path, whose libpng fails after the batch was fixed — the decoder tells the
// reader, the executor waits for the GPU and redoes the iteration, and the batch comes out full,
// every image the decode of the file its sources name (eager and captured). decoders.image only:
// a window decode reads a PNG's rows only down to the window's last, so damage below it is never
// met and the window is delivered as decoded (docs/decoding_cpu.md).
TEST(OnErrorGpu, SkipReplacesDamageOnlyTheDecodeFinds) {
  CONVEYOR_REQUIRE_GPU();
  const OnErrorDataset ds = MakeOnErrorDataset(
      30, {{4, Damage::kDeflateInPng}, {14, Damage::kDeflateInPng}, {17, Damage::kFlippedJpegMarker}},
      "on_error_gpu_refill");
  for (const std::string decoder : {"decoders.image"}) {
    for (bool capture : {false, true}) {
      SCOPED_TRACE(decoder + (capture ? " captured" : " eager"));
      // Three epochs of 27 good files and more.
      const ExecutorCounters c = RunSkipAndCheck(ds, decoder, capture, /*batch=*/9, /*iterations=*/10);
      EXPECT_EQ(c.refilled_iterations, 2) << "one per PNG, the first time it is met";
    }
  }
}

// The CPU stage on its own thread (cpu_stage_thread: true) and a sample rejected in the
// GPU stage (damaged deflate data: the GPU decoder's CPU path fails after the batch was fixed): the
// CPU stage has already run one or two iterations further (prefetch 3), so the issue thread holds
// it, puts the reader back to the rejected iteration's start and has both redone. The batches,
// the skips counted and the re-fills are those of one stage thread; a checkpoint taken with the
// CPU stage ahead resumes to the same batches. Eager and captured.
TEST(OnErrorGpu, TheCpuStageAheadRedoesWhatItRanPastARejectedSample) {
  CONVEYOR_REQUIRE_GPU();
  const OnErrorDataset ds = MakeOnErrorDataset(
      30, {{4, Damage::kDeflateInPng}, {14, Damage::kDeflateInPng}, {17, Damage::kFlippedJpegMarker}},
      "on_error_gpu_ahead");
  for (bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "captured" : "eager");
    std::string yaml = Yaml(ds.root, "decoders.image", "skip", 9, /*shuffle=*/true, capture);
    yaml.replace(yaml.find("prefetch_depth: 2"), 17, "prefetch_depth: 3");
    EXPECT_EQ(ExpectStageThreadsAgree(yaml, /*iterations=*/10, /*checkpoint_at=*/4), 2)
        << "one per PNG, the first time it is met";
  }
}

// JPEGs with damaged entropy data under a sound structure: the CPU's libjpeg rejects them, nvJPEG
// may decode them without a word (its engines) or report BAD_JPEG (its CUDA backend: the image
// then goes to the CPU path, which rejects it). Either way the pipeline never stops: every batch
// is full, its labels are the folders of the files its sources name, and every file skipped is
// one of the damaged ones. What each backend did is printed.
TEST(OnErrorGpu, EntropyDamagedJpegsNeverStopSkip) {
  CONVEYOR_REQUIRE_GPU();
  const OnErrorDataset ds = MakeOnErrorDataset(
      24, {{1, Damage::kMarkerInEntropy}, {6, Damage::kMarkerInEntropy}, {11, Damage::kMarkerInEntropy}},
      "on_error_gpu_entropy");
  for (const std::string load : {"0", "0.9"}) {
    SCOPED_TRACE("hw_decoder_load " + load);
    constexpr int kBatch = 8;
    Pipeline p = Pipeline::FromYaml(
        Yaml(ds.root, "decoders.image", "skip", kBatch, /*shuffle=*/true, false, ", hw_decoder_load: " + load));
    p.Build();
    for (int k = 0; k < 9; ++k) {
      PipelineOutputs out = p.Outputs();
      const TensorListCPU& labels = out.Cpu(out.Index("labels"));
      ASSERT_EQ(out.Gpu(out.Index("images")).num_samples(), kBatch);
      for (int i = 0; i < kBatch; ++i) {
        const std::string name = FileName(labels.sources()[static_cast<size_t>(i)].file);
        EXPECT_EQ(static_cast<const int32_t*>(labels.raw_sample(i))[0], ds.label.at(name)) << name;
      }
      out.Release();
      p.Run();
    }
    const ExecutorCounters c = p.counters();
    for (const ExecutorCounters::SkippedFile& f : c.skipped_files) {
      EXPECT_EQ(ds.bad.count(FileName(f.file)), 1u) << f.file << " was skipped: " << f.reason;
    }
    std::cout << "hw_decoder_load " << load << ": " << c.skipped_files.size() << " of 3 entropy-damaged JPEGs "
              << "skipped, " << c.refilled_iterations << " iterations redone\n";
  }
}

// Damage the host-side checks find (not kMarkerInEntropy: its sound structure leaves it to the
// decoder, and nvJPEG's engines may decode it without an error).
TEST(OnErrorGpu, ErrorStopsNamingTheFileAndReaderIndex) {
  CONVEYOR_REQUIRE_GPU();
  const std::pair<int, Damage> cases[] = {{5, Damage::kTruncatedJpeg},
                                          {5, Damage::kFlippedJpegMarker},
                                          {4, Damage::kFlippedPngByte},
                                          {4, Damage::kTruncatedPng},
                                          {5, Damage::kNotAnImage}};
  for (const auto& [at, damage] : cases) {
    const OnErrorDataset ds = MakeOnErrorDataset(10, {{at, damage}}, "on_error_gpu_error");
    const std::string bad = *ds.BadNames().begin();
    for (bool capture : {false, true}) {
      SCOPED_TRACE(bad + " " + ReasonOf(damage) + (capture ? " captured" : " eager"));
      Pipeline p = Pipeline::FromYaml(Yaml(ds.root, "decoders.image", "error", 10, false, capture));
      p.Build();
      std::string message;
      try {
        PipelineOutputs out = p.Outputs();
      } catch (const Error& e) {
        message = e.what();
      }
      EXPECT_THAT(message, HasSubstr("node \"decode\" (op \"decoders.image\")"));
      EXPECT_THAT(message, HasSubstr("(file \"" + ds.Path(bad) + "\", reader index "));
      EXPECT_THAT(message, HasSubstr(ReasonOf(damage)));
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
