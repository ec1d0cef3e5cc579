// readers.coco in YAML pipelines on the CPU: shuffled and sharded over two ranks, decoded by
// decoders.image, every image of an epoch once per epoch across the ranks with its own boxes,
// labels, id and mask (checked against coco_fixture.h's independent values); and a checkpointed
// pipeline that resumes with the batches of the uninterrupted run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/pipeline/pipeline.h"
#include "tests/operators/readers/coco/coco_fixture.h"

namespace conveyor {
namespace {

using testing::CocoSet;

std::string Yaml(int shard_id, int num_shards, const std::string& extra = "") {
  return "pipeline: {name: coco, batch_size: 4, device: cpu, num_threads: 2, prefetch_depth: 2, seed: 5}\n"
         "ops:\n"
         "  - op: readers.coco\n"
         "    name: reader\n"
         "    args: {file_root: images, annotations_file: instances.json, random_shuffle: true, ltrb: true,\n"
         "           pixelwise_masks: true, image_ids: true, shard_id: " + std::to_string(shard_id) + ", num_shards: " +
         std::to_string(num_shards) + extra + "}\n"
         "    outputs: [jpegs, bboxes, labels, masks, ids]\n"
         "  - op: decoders.image\n"
         "    inputs: [jpegs]\n"
         "    args: {output_type: RGB}\n"
         "    outputs: [images]\n"
         "outputs: [images, bboxes, labels, masks, ids]\n";
}

template <typename T>
std::vector<T> Values(const TensorListCPU& t, int i) {
  const auto* p = static_cast<const T*>(t.raw_sample(i));
  return std::vector<T>(p, p + t.shape(i).num_elements());
}

TEST(CocoPipeline, AWrongOutputListSaysWhereAndWhy) {
  const CocoSet set = testing::MakeCocoSet(3, std::random_device{}());
  std::string yaml = Yaml(0, 1);
  const std::string listed = "outputs: [jpegs, bboxes, labels, masks, ids]";
  yaml.replace(yaml.find(listed), listed.size(), "outputs: [jpegs, bboxes, labels, polygons, vertices, masks, ids]");
  try {
    Pipeline::FromYaml(yaml, set.dir);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(
                              ":7:14: op \"readers.coco\" (reader): expected 5 outputs (images, bboxes, labels, masks, "
                              "image_ids), got 7; optional outputs follow their arguments: polygons and vertices need "
                              "polygon_masks: true (it is false, the default); masks needs pixelwise_masks: true (it is "
                              "true); image_ids needs image_ids: true (it is true)"));
  }
}

TEST(CocoPipeline, ShuffledShardsCoverEveryImageWithItsAnnotations) {
  const CocoSet set = testing::MakeCocoSet(18, std::random_device{}());
  std::map<int, std::vector<std::vector<int32_t>>> orders;  // epoch -> per rank, the ids in order
  for (int rank = 0; rank < 2; ++rank) {
    Pipeline p = Pipeline::FromYaml(Yaml(rank, 2), set.dir);
    p.Build();
    ASSERT_EQ(p.EpochSize("reader"), 9);
    std::vector<int32_t> ids;
    for (int it = 0; it < 9; ++it) {  // 36 samples: 4 epochs of this rank's 9
      PipelineOutputs out = p.Outputs();
      const TensorListCPU& images = out.Cpu(out.Index("images"));
      for (int i = 0; i < 4; ++i) {
        const int32_t id = Values<int32_t>(out.Cpu(out.Index("ids")), i).at(0);
        const testing::CocoImage& im = set.Image(id);
        ids.push_back(id);
        EXPECT_EQ(images.shape(i), (Shape{im.height, im.width, 3})) << "image " << id;
        EXPECT_EQ(images.sources()[static_cast<size_t>(i)].file, set.root + "/" + im.file);
        const testing::ExpectedSample e = testing::Expected(set, id, {.ltrb = true});
        const std::vector<float> boxes = Values<float>(out.Cpu(out.Index("bboxes")), i);
        ASSERT_EQ(boxes.size(), e.boxes.size()) << "image " << id;
        for (size_t k = 0; k < boxes.size(); ++k) EXPECT_NEAR(boxes[k], e.boxes[k], 1e-4) << "image " << id;
        EXPECT_EQ(Values<int32_t>(out.Cpu(out.Index("labels")), i), e.labels) << "image " << id;
        EXPECT_EQ(Values<int32_t>(out.Cpu(out.Index("masks")), i), testing::ExpectedMask(im, e)) << "image " << id;
      }
      out.Release();
      p.Run();
    }
    for (int epoch = 0; epoch < 4; ++epoch) {
      orders[epoch].emplace_back(ids.begin() + 9 * epoch, ids.begin() + 9 * (epoch + 1));
    }
  }
  std::vector<int32_t> all;
  for (const auto& im : set.images) all.push_back(im.id);
  std::sort(all.begin(), all.end());
  bool shuffled = false;
  for (const auto& [epoch, ranks] : orders) {
    std::vector<int32_t> seen = ranks[0];
    seen.insert(seen.end(), ranks[1].begin(), ranks[1].end());
    shuffled = shuffled || seen != all;
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, all) << "epoch " << epoch << ": the two shards together are every image once";
  }
  EXPECT_TRUE(shuffled) << "random_shuffle: some epoch is not in id order";
  EXPECT_NE(orders[0][0], orders[1][0]) << "the order changes between epochs";
}

// Pipeline::Checkpoint after two batches, then ResumeFrom in a new pipeline: the same batches as
// the uninterrupted run, with prefetching (the CPU stage runs ahead), from the JSON and the index.
TEST(CocoPipeline, ResumedPipelineYieldsTheUninterruptedBatches) {
  const CocoSet set = testing::MakeCocoSet(11, std::random_device{}());
  for (const std::string& extra : {std::string(), std::string(", preprocessed_annotations: instances.idx")}) {
    if (!extra.empty()) {
      Pipeline save = Pipeline::FromYaml(Yaml(0, 1, extra + ", save_preprocessed_annotations: true"), set.dir);
      save.Build();
    }
    const auto run = [&](Pipeline& p, int iterations, std::string* checkpoint_at_2) {
      std::vector<std::vector<int32_t>> batches;
      for (int it = 0; it < iterations; ++it) {
        if (it == 2 && checkpoint_at_2) *checkpoint_at_2 = p.Checkpoint();
        PipelineOutputs out = p.Outputs();
        std::vector<int32_t> batch;
        for (int i = 0; i < 4; ++i) {
          batch.push_back(Values<int32_t>(out.Cpu(out.Index("ids")), i).at(0));
          for (float b : Values<float>(out.Cpu(out.Index("bboxes")), i)) batch.push_back(static_cast<int32_t>(b * 1000));
        }
        batches.push_back(std::move(batch));
        out.Release();
        p.Run();
      }
      return batches;
    };
    Pipeline whole = Pipeline::FromYaml(Yaml(0, 1, extra), set.dir);
    whole.Build();
    std::string checkpoint;
    const auto expected = run(whole, 9, &checkpoint);  // 36 samples: more than three epochs of 11
    EXPECT_THAT(checkpoint, ::testing::HasSubstr("dataset_size=11"));
    Pipeline resumed = Pipeline::FromYaml(Yaml(0, 1, extra), set.dir);
    resumed.ResumeFrom(checkpoint);
    resumed.Build();
    const auto got = run(resumed, 7, nullptr);
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i + 2]) << extra << ": iteration " << i + 2;
  }
}

}  // namespace
}  // namespace conveyor
