// A CPU pipeline from YAML: readers.webdataset (relative brace-range paths, JPEG + int32 label
// members, shuffle: shards) → decoders.image. Every decoded image equals the reference decode of
// the member the reader delivered, labels travel with their images, Pipeline::EpochSize counts the
// padded epoch, and a pipeline resumed from a checkpoint yields the uninterrupted run's batches.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/pipeline/pipeline.h"
#include "tests/operators/decoders/decode_reference.h"
#include "tests/operators/readers/webdataset/tar_fixture.h"

namespace conveyor::testing {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> Bytes(const TensorListCPU& list, int i) {
  const auto* p = static_cast<const uint8_t*>(list.raw_sample(i));
  return {p, p + list.shape(i).num_elements() * static_cast<int64_t>(DTypeSize(list.dtype()))};
}

struct JpegShards {
  std::string dir;
  std::map<std::vector<uint8_t>, int32_t> labels;  // JPEG bytes -> label
};

// Two shards (7 and 4 samples) of photo-like JPEGs of varying sizes with a 4-byte label each.
JpegShards MakeJpegShards() {
  JpegShards s{FreshTempDir("wds_jpeg"), {}};
  int n = 0;
  for (int shard = 0; shard < 2; ++shard) {
    std::vector<TarMemberSpec> members;
    for (int i = 0; i < (shard == 0 ? 7 : 4); ++i, ++n) {
      const auto image = testimages::MakePhotoLike(30 + 7 * n, 50 - 2 * n, 3, 900 + static_cast<uint64_t>(n));
      const std::vector<uint8_t> jpeg = testimages::EncodeJpeg(image, testimages::Subsampling::k420, 90, n % 3 == 0);
      const int32_t label = 1000 + n;
      const auto* l = reinterpret_cast<const uint8_t*>(&label);
      const std::string key = "img" + std::to_string(n);
      members.push_back({key + ".jpg", jpeg, false});
      members.push_back({key + ".cls", std::vector<uint8_t>(l, l + 4), false});
      s.labels[jpeg] = label;
    }
    WriteTar(s.dir + "/train-" + std::to_string(shard) + ".tar", members);
  }
  return s;
}

std::string Yaml(int batch) {
  return "pipeline: {name: wds, batch_size: " + std::to_string(batch) +
         ", device: cpu, num_threads: 3, prefetch_depth: 2, seed: 11}\n"
         "ops:\n"
         "  - op: readers.webdataset\n    name: reader\n"
         "    args: {paths: [\"train-{0..1}.tar\"], ext: [jpg, cls], dtypes: [uint8, int32], random_shuffle: true,\n"
         "           shuffle: shards, initial_fill: 4, pad_last_batch: true}\n"
         "    outputs: [jpegs, labels]\n"
         "  - op: decoders.image\n    name: decode\n    inputs: [jpegs]\n    args: {output_type: RGB}\n"
         "    outputs: [images]\n"
         "outputs: [jpegs, images, labels]\n";
}

TEST(WebDatasetPipeline, DecodesJpegMembersWithTheirLabels) {
  const JpegShards shards = MakeJpegShards();
  Pipeline p = Pipeline::FromYaml(Yaml(4), shards.dir);
  p.Build();
  EXPECT_EQ(p.EpochSize("reader"), 12) << "11 samples padded to whole batches";
  std::set<std::vector<uint8_t>> seen;
  for (int it = 0; it < 6; ++it) {  // two epochs
    PipelineOutputs out = p.Outputs();
    const TensorListCPU& jpegs = out.Cpu(out.Index("jpegs"));
    const TensorListCPU& images = out.Cpu(out.Index("images"));
    const TensorListCPU& labels = out.Cpu(out.Index("labels"));
    ASSERT_EQ(images.num_samples(), 4);
    for (int i = 0; i < 4; ++i) {
      const std::vector<uint8_t> jpeg = Bytes(jpegs, i);
      ASSERT_EQ(shards.labels.count(jpeg), 1u) << "a member's bytes";
      seen.insert(jpeg);
      const Pixels want = TurboJpegDecode(jpeg, ops::OutputColor::kRgb);
      ASSERT_EQ(images.shape(i), (Shape{want.height, want.width, 3}));
      EXPECT_EQ(Bytes(images, i), want.data) << "iteration " << it << " sample " << i;
      EXPECT_EQ(*static_cast<const int32_t*>(labels.raw_sample(i)), shards.labels.at(jpeg));
      // The decoder's output still names the member it came from.
      EXPECT_THAT(images.source(i)->file, HasSubstr(".tar:img"));
      EXPECT_EQ(images.source(i)->file.substr(images.source(i)->file.size() - 4), ".jpg");
    }
    out.Release();
    p.Run();
  }
  EXPECT_EQ(seen.size(), shards.labels.size());
}

TEST(WebDatasetPipeline, ResumedPipelineYieldsTheUninterruptedBatches) {
  const JpegShards shards = MakeJpegShards();
  const auto run = [&](Pipeline& p, int iterations, std::string* checkpoint_at_2) {
    std::vector<std::vector<uint8_t>> batches;
    for (int it = 0; it < iterations; ++it) {
      if (it == 2 && checkpoint_at_2) *checkpoint_at_2 = p.Checkpoint();
      PipelineOutputs out = p.Outputs();
      std::vector<uint8_t> all;
      for (const char* name : {"images", "labels"}) {
        const TensorListCPU& t = out.Cpu(out.Index(name));
        for (int i = 0; i < t.num_samples(); ++i) {
          const auto b = Bytes(t, i);
          all.insert(all.end(), b.begin(), b.end());
        }
      }
      batches.push_back(std::move(all));
      out.Release();
      p.Run();
    }
    return batches;
  };
  Pipeline whole = Pipeline::FromYaml(Yaml(3), shards.dir);
  whole.Build();
  std::string checkpoint;
  const auto expected = run(whole, 9, &checkpoint);
  EXPECT_THAT(checkpoint, HasSubstr("state reader mode=shards samples=11 shards=2 fingerprint="));
  Pipeline resumed = Pipeline::FromYaml(Yaml(3), shards.dir);
  resumed.ResumeFrom(checkpoint);
  resumed.Build();
  const auto got = run(resumed, 7, nullptr);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i + 2]) << "iteration " << i + 2;
}

TEST(WebDatasetPipeline, UrlPathsAreNotResolvedAgainstTheYamlFolder) {
  std::string yaml = Yaml(2);
  yaml.replace(yaml.find("train-{0..1}.tar"), 16, "http://127.0.0.1:9/x-{0..1}.tar");
  yaml.replace(yaml.find("pad_last_batch: true"), 20, "pad_last_batch: true, http_max_retries: 0");
  try {
    Pipeline p = Pipeline::FromYaml(yaml, FreshTempDir("yaml_dir"));
    p.Build();
    ADD_FAILURE() << "nothing listens on port 9";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("shard \"http://127.0.0.1:9/x-0.tar\""));
    EXPECT_THAT(e.what(), HasSubstr(" after 1 attempt")) << "http_max_retries: 0 from the YAML";
  }
}

}  // namespace
}  // namespace conveyor::testing
