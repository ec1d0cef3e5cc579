// YAML pipelines on the CPU over TFRecord files written by protobuf's Python runtime:
// readers.tfrecord reads JPEGs (TurboJPEG) and labels, decoders.image decodes them, every image and
// label of an epoch comes out with sources naming "file:record N" through the decoder; and a
// checkpointed pipeline resumes exactly in both shuffle modes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "core/pipeline/pipeline.h"
#include "tests/operators/readers/tfrecord/tfrecord_fixture.h"
#include "tools/testimages/test_images.h"

namespace conveyor {
namespace {

using testing::PlanFeature;
using testing::PlanFile;
using testing::PlanRecord;

TEST(TfRecordPipeline, DecodesJpegsAndLabelsFromTfRecords) {
  const std::string dir = testing::FreshTempDir("tfrecord_pipeline");
  std::mt19937 rng(std::random_device{}());
  std::map<int64_t, testimages::Image8> images;  // label -> the pixels encoded
  std::vector<PlanFile> files = {{dir + "/train-0.tfrecord", {}}, {dir + "/train-1.tfrecord", {}}};
  for (int64_t label = 0; label < 12; ++label) {
    const int height = 16 + static_cast<int>(rng() % 48), width = 16 + static_cast<int>(rng() % 48);
    testimages::Image8 image = testimages::MakePhotoLike(height, width, 3, rng());
    const std::vector<uint8_t> jpeg = testimages::EncodeJpeg(image, testimages::Subsampling::k444, 98, false);
    PlanRecord r;
    r.features.push_back({PlanFeature::kBytes, "image/encoded", {std::string(jpeg.begin(), jpeg.end())}, {}, {}});
    r.features.push_back({PlanFeature::kInt64, "image/class/label", {}, {label}, {}});
    files[static_cast<size_t>(label % 2)].records.push_back(r);
    images[label] = std::move(image);
  }
  testing::WriteTfRecords(files);
  const std::string yaml = R"(
pipeline: {name: tfrecord_train, batch_size: 4, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 3}
ops:
  - op: readers.tfrecord
    name: reader
    args:
      path: ["train-*.tfrecord"]
      index_path: ["train-0.tfrecord.idx", "train-1.tfrecord.idx"]
      features: ["image/encoded: bytes", "image/class/label: int64[1] = -1"]
      random_shuffle: true
    outputs: [jpegs, labels]
  - op: decoders.image
    inputs: [jpegs]
    args: {output_type: RGB}
    outputs: [images]
outputs: [images, labels]
)";
  testing::WriteText(dir + "/tfrecord_train.yaml", yaml);
  Pipeline p = Pipeline::FromFile(dir + "/tfrecord_train.yaml");
  p.Build();
  ASSERT_EQ(p.EpochSize("reader"), 12);
  std::map<int64_t, int> seen;
  for (int b = 0; b < 3; ++b) {
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& decoded = out.Cpu(out.Index("images"));
    const TensorListCPU& labels = out.Cpu(out.Index("labels"));
    ASSERT_EQ(decoded.num_samples(), 4);
    for (int i = 0; i < 4; ++i) {
      const int64_t label = *static_cast<const int64_t*>(labels.raw_sample(i));
      ASSERT_TRUE(images.count(label)) << label;
      ++seen[label];
      const testimages::Image8& want = images[label];
      ASSERT_EQ(decoded.shape(i), (Shape{want.height, want.width, 3})) << "label " << label;
      const auto* pixels = static_cast<const uint8_t*>(decoded.raw_sample(i));
      double error = 0;
      for (size_t k = 0; k < want.pixels.size(); ++k) error += std::abs(int{pixels[k]} - int{want.pixels[k]});
      EXPECT_LT(error / static_cast<double>(want.pixels.size()), 3.0) << "label " << label << ": not its image";
      // The decoder's output still names the record it came from.
      const std::string source = decoded.sources()[static_cast<size_t>(i)].file;
      EXPECT_EQ(source, files[static_cast<size_t>(label % 2)].path + ":record " + std::to_string(label / 2));
    }
    out.Release();
    p.Run();
  }
  EXPECT_EQ(seen.size(), 12u) << "one epoch: every record once";
}

// Pipeline::Checkpoint after two batches, then ResumeFrom in a new pipeline: the same batches as
// the uninterrupted run, in both shuffle modes, with prefetching (the CPU stage runs ahead).
TEST(TfRecordPipeline, ResumedPipelineYieldsTheUninterruptedBatches) {
  std::mt19937 rng(std::random_device{}());
  const std::string dir = testing::FreshTempDir("tfrecord_resume");
  testing::MakeTfRecordDataset(dir, 3, 7, rng, 500);
  for (const std::string mode : {"samples", "shards"}) {
    const std::string yaml =
        "pipeline: {name: resume, batch_size: 4, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 9}\n"
        "ops:\n  - op: readers.tfrecord\n    name: reader\n"
        "    args: {path: [\"part-*.tfrecord\"], features: [\"image/encoded: bytes\", \"label: int64\", "
        "\"bbox: float[]\"], random_shuffle: true, shuffle: " + mode + ", initial_fill: 5}\n"
        "    outputs: [bytes, labels, bbox]\noutputs: [bytes, labels, bbox]\n";
    const auto run = [&](Pipeline& p, int iterations, std::string* checkpoint_at_2) {
      std::vector<std::vector<uint8_t>> batches;
      for (int it = 0; it < iterations; ++it) {
        if (it == 2 && checkpoint_at_2) *checkpoint_at_2 = p.Checkpoint();
        PipelineOutputs out = p.Outputs();
        std::vector<uint8_t> all;
        for (const char* name : {"bytes", "labels", "bbox"}) {
          const TensorListCPU& t = out.Cpu(out.Index(name));
          for (int i = 0; i < t.num_samples(); ++i) {
            const auto* b = static_cast<const uint8_t*>(t.raw_sample(i));
            all.insert(all.end(), b, b + t.shape(i).num_elements() * static_cast<int64_t>(DTypeSize(t.dtype())));
          }
        }
        batches.push_back(std::move(all));
        out.Release();
        p.Run();
      }
      return batches;
    };
    Pipeline whole = Pipeline::FromYaml(yaml, dir);
    whole.Build();
    std::string checkpoint;
    const auto expected = run(whole, 12, &checkpoint);  // 48 samples: more than two epochs of 21
    EXPECT_THAT(checkpoint, ::testing::HasSubstr("state reader mode=" + mode + " samples=21 shards=3"));
    Pipeline resumed = Pipeline::FromYaml(yaml, dir);
    resumed.ResumeFrom(checkpoint);
    resumed.Build();
    const auto got = run(resumed, 10, nullptr);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i + 2]) << mode << ": iteration " << i + 2;
  }
}

}  // namespace
}  // namespace conveyor
