// GPU decoding inside real pipelines: readers.file over a generated folder (class subfolders of
// fresh photo-like JPEGs of random sizes, every subsampling, baseline and progressive, plus PNGs
// for the CPU path) → decoders.image (device gpu) → copy → crop_mirror_normalize (per-sample
// mirror), eager and with graph_capture, prefetch_depth 3, eight epochs. Every iteration equals the
// same pipeline on the CPU within the decoders' tolerance (gpu_cpu_compare.h); the segment after
// the decoder is captured only while slot capacities grow (shapes vary per sample), then replayed;
// a corrupt file fails the iteration that reads it, naming node, iteration and sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "core/cuda/stream.h"
#include "core/error.h"
#include "core/pipeline/pipeline.h"
#include "core/tensor/copy.h"
#include "tests/operators/decoders/gpu/gpu_cpu_compare.h"
#include "tests/util/gpu_test.h"
#include "tools/testimages/test_images.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;
using testimages::Subsampling;

constexpr int kBatch = 6;
constexpr int kFiles = 24;  // 4 batches per epoch: every epoch's batches are the same (no shuffle)
constexpr int kEpochs = 8;
constexpr int kPrefetch = 3;
constexpr double kStd[3] = {58.395, 57.12, 57.375};

std::string TempDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(base ? base : "/tmp") / (name + "_" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

// `jpegs` photo-like JPEGs of random sizes and `pngs` PNGs, alternating between two class folders.
std::string MakeFolder(int jpegs, int pngs) {
  const std::string root = TempDir("decode_pipeline_gpu");
  const Subsampling subs[] = {Subsampling::k420, Subsampling::k444, Subsampling::k422, Subsampling::kGray};
  std::uniform_int_distribution<int> side(24, 320), quality(75, 95);
  for (int i = 0; i < jpegs + pngs; ++i) {
    const std::string dir = root + (i % 2 ? "/dogs" : "/cats");
    std::filesystem::create_directories(dir);
    const int h = side(Rng()), w = side(Rng());
    char name[32];
    if (i < jpegs) {
      const Subsampling sub = subs[i % 4];
      const auto img = testimages::MakePhotoLike(h, w, sub == Subsampling::kGray ? 1 : 3, Rng()());
      std::snprintf(name, sizeof(name), "/img%02d.jpg", i);
      testimages::WriteFile(dir + name, testimages::EncodeJpeg(img, sub, quality(Rng()), i % 3 == 0));
    } else {
      std::snprintf(name, sizeof(name), "/pic%02d.png", i);
      testimages::WriteFile(dir + name, testimages::EncodePng(testimages::MakePngSource(h, w, i % 2 ? 2 : 6, 8, Rng()())));
    }
  }
  return root;
}

std::string Reader(const std::string& root) {
  return "  - {op: readers.file, name: reader, args: {file_root: \"" + root +
         "\", random_shuffle: false}, outputs: [jpegs, labels]}\n";
}

std::string Yaml(const std::string& root, const std::string& device, bool capture, int batch = kBatch) {
  const std::string d = "device: " + device;
  return "pipeline: {name: decode_gpu, batch_size: " + std::to_string(batch) + ", " + d +
         ", num_threads: 4, prefetch_depth: " + std::to_string(kPrefetch) +
         ", seed: 11, graph_capture: " + (capture ? "true" : "false") + "}\nops:\n" + Reader(root) +
         "  - {op: decoders.image, name: dec, " + d + ", inputs: [jpegs], args: {output_type: RGB}, outputs: [decoded]}\n"
         "  - {op: copy, name: cp, " + d + ", inputs: [decoded], outputs: [images]}\n"
         "  - {op: random.coin_flip, name: coin, device: cpu, outputs: [mirror]}\n"
         "  - {op: crop_mirror_normalize, name: cmn, " + d + ", inputs: [images], args: {mirror: $mirror, "
         "mean: [123.675, 116.28, 103.53], std: [58.395, 57.12, 57.375], dtype: float32, output_layout: CHW}, "
         "outputs: [normalized]}\n"
         "outputs: [jpegs, images, normalized, labels]\n";
}

TensorListCPU Host(const PipelineOutputs& out, const std::string& name) {
  const int i = out.Index(name);
  if (!out.IsGpu(i)) return out.Cpu(i);
  cuda::Stream stream = cuda::Stream::Create();
  TensorListCPU host;
  CopyAsync(host, out.Gpu(i), stream.view());
  stream.Synchronize();
  return host;
}

std::vector<uint8_t> Bytes(const TensorListCPU& list, int i) {
  const auto* p = static_cast<const uint8_t*>(list.raw_sample(i));
  return std::vector<uint8_t>(p, p + list.shape(i).num_elements());
}

// Normalized float samples: the decoders' tolerance divided by the smallest std (CHW, so the
// channel of an element is not needed for a bound), plus float rounding.
void ExpectNormalizedClose(const TensorListCPU& gpu, const TensorListCPU& cpu, int i, DecodeTolerance tol,
                           const std::string& what) {
  ASSERT_EQ(gpu.shape(i), cpu.shape(i)) << what;
  const double min_std = *std::min_element(std::begin(kStd), std::end(kStd));
  const auto* g = static_cast<const float*>(gpu.raw_sample(i));
  const auto* c = static_cast<const float*>(cpu.raw_sample(i));
  const int64_t n = cpu.shape(i).num_elements();
  double worst = 0, sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double d = std::abs(double{g[k]} - double{c[k]});
    worst = std::max(worst, std::isnan(d) ? 1e9 : d);
    sum += d;
  }
  EXPECT_LE(worst, tol.max_abs / min_std + 1e-3) << what;
  EXPECT_LE(n == 0 ? 0 : sum / static_cast<double>(n), tol.mean_abs / min_std + 1e-4) << what;
}

TEST(DecodePipelineGpu, EqualsTheCpuPipelineEpochAfterEpochCapturedOnlyWhileCapacityGrows) {
  CONVEYOR_REQUIRE_GPU();
  const std::string root = MakeFolder(kFiles - 2, 2);
  for (bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "captured" : "eager");
    Pipeline cpu = Pipeline::FromYaml(Yaml(root, "cpu", false));
    Pipeline gpu = Pipeline::FromYaml(Yaml(root, "gpu", capture));
    cpu.Build();
    gpu.Build();
    ASSERT_EQ(gpu.EpochSize("reader"), kFiles);
    const int iterations = kEpochs * kFiles / kBatch;
    // Slot k % 3 sees batch k % 4: after 12 iterations every slot has held every batch, so its
    // capacities are final; read after iteration 16 (the stage thread is past 16 then).
    const int settled = 16;
    int64_t captures_settled = -1;
    for (int k = 0; k < iterations; ++k) {
      const std::string what = "iteration " + std::to_string(k);
      PipelineOutputs a = cpu.Outputs(), b = gpu.Outputs();
      const TensorListCPU jpegs = Host(a, "jpegs");
      ASSERT_EQ(jpegs.num_samples(), kBatch) << what;
      const TensorListCPU jpegs_gpu = Host(b, "jpegs");
      ASSERT_TRUE(b.IsGpu(b.Index("images")));
      const TensorListCPU images_cpu = Host(a, "images"), images_gpu = Host(b, "images");
      const TensorListCPU norm_cpu = Host(a, "normalized"), norm_gpu = Host(b, "normalized");
      ASSERT_EQ(images_gpu.num_samples(), kBatch) << what;
      EXPECT_EQ(images_gpu.layout(), Layout("HWC"));
      for (int i = 0; i < kBatch; ++i) {
        const std::string at = what + " sample " + std::to_string(i);
        ASSERT_EQ(Bytes(jpegs_gpu, i), Bytes(jpegs, i)) << at << ": both readers deliver the same files";
        const DecodeTolerance tol = ToleranceFor(jpegs, i, /*gray_output=*/false);
        ExpectDecodedClose(images_gpu, images_cpu, i, tol, at);
        ExpectNormalizedClose(norm_gpu, norm_cpu, i, tol, at + " normalized");
      }
      a.Release();
      b.Release();
      if (k == settled) captures_settled = gpu.counters().captures;
      cpu.Run();
      gpu.Run();
    }
    const ExecutorCounters c = gpu.counters();
    if (!capture) {
      EXPECT_EQ(c.captures, 0);
      continue;
    }
    EXPECT_GE(captures_settled, kPrefetch) << "each slot captures its segment at least once";
    EXPECT_LE(captures_settled, kPrefetch * 4) << "a slot recaptures only when one of its 4 batches outgrows it";
    EXPECT_EQ(c.captures, captures_settled) << "captures after every slot reached its capacities";
    EXPECT_GE(c.replays, iterations) << "every iteration launches the slot's graph (a new capture included)";
  }
}

// A file that is not an image fails the iteration whose batch holds it. The message names the
// pipeline, iteration, node, sample index and the file (the reader's per-sample sources); the test
// finds the file's iteration and sample with a reader-only pipeline over the same folder and
// checks the message points there.
TEST(DecodePipelineGpu, CorruptFileFailsItsIterationNamingNodeAndSample) {
  CONVEYOR_REQUIRE_GPU();
  const std::string root = MakeFolder(9, 2);
  const std::string html = "<html><body>not an image</body></html>\n";
  const std::vector<uint8_t> bad(html.begin(), html.end());
  testimages::WriteFile(root + "/dogs/img05b.jpg", bad);  // 12 files: 3 batches of 4
  constexpr int kB = 4;

  Pipeline reader = Pipeline::FromYaml("pipeline: {name: r, batch_size: 4, device: cpu, prefetch_depth: 2}\nops:\n" +
                                       Reader(root) + "outputs: [jpegs]\n");
  reader.Build();
  int bad_iteration = -1, bad_sample = -1;
  for (int k = 0; k < 3 && bad_iteration < 0; ++k) {
    PipelineOutputs out = reader.Outputs();
    const TensorListCPU& jpegs = out.Cpu(0);
    for (int i = 0; i < jpegs.num_samples(); ++i) {
      if (Bytes(jpegs, i) == bad) bad_iteration = k, bad_sample = i;
    }
    out.Release();
    reader.Run();
  }
  ASSERT_GE(bad_iteration, 0) << "the reader never delivered the corrupt file";

  for (bool capture : {false, true}) {
    SCOPED_TRACE(capture ? "captured" : "eager");
    Pipeline p = Pipeline::FromYaml(Yaml(root, "gpu", capture, kB));
    p.Build();
    std::string error;
    bool invalid_argument = false;
    int failed_at = -1;
    for (int k = 0; k <= bad_iteration; ++k) {
      try {
        PipelineOutputs out = p.Outputs();
        out.Release();
        p.Run();
      } catch (const InvalidArgument& e) {
        error = e.what();
        invalid_argument = true;
        failed_at = k;
        break;
      } catch (const Error& e) {
        error = e.what();
        failed_at = k;
        break;
      }
    }
    EXPECT_EQ(failed_at, bad_iteration) << error;
    EXPECT_TRUE(invalid_argument) << error;
    EXPECT_THAT(error, HasSubstr("pipeline \"decode_gpu\": iteration " + std::to_string(bad_iteration) +
                                 ": node \"dec\" (op \"decoders.image\")"));
    EXPECT_THAT(error, HasSubstr("op \"decoders.image\" (dec): sample " + std::to_string(bad_sample) + " of " +
                                 std::to_string(kB) + " (file \"" + root + "/dogs/img05b.jpg\", reader index "));
    EXPECT_THAT(error, HasSubstr("): not a decodable image: no JPEG, PNG, TIFF, WebP, PNM, BMP or JPEG 2000 signature (starts with 3C 68 74 6D, 39 bytes)"));
  }
}

}  // namespace
}  // namespace conveyor::testing
