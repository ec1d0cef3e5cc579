// readers.video's order is the reader core's over clips: every clip exactly once per epoch across
// shards (with and without shuffling, rotating or sticky shards), equal batch counts with
// pad_last_batch, and a restored checkpoint that continues with the identical clips (frames
// compared byte for byte).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/op/harness.h"
#include "operators/video/video_reader.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::ops::video {
namespace {

using testing::ClipDataset;
using testing::MakeClipDataset;
using testing::ReadFrameNumbers;

// 9 + 6 + 11 + 4 = 30 clips of 2 frames (step 2): an epoch does not divide into shards evenly.
const ClipDataset& Data() {
  static const ClipDataset d = MakeClipDataset({{"x", "x1.mp4", 18}, {"x", "x2.mkv", 12, "h264", "mkv"},
                                                {"y", "y1.mp4", 23}, {"y", "y2.webm", 9, "vp9", "webm", 0}});
  return d;
}
constexpr int64_t kClips = 30;

OpSpec Reader(bool shuffle, int64_t shard, int64_t shards) {
  return OpSpec("readers.video", "r")
      .AddOutput("video")
      .AddOutput("labels")
      .SetArg("file_root", Data().root)
      .SetArg("sequence_length", int64_t{2})
      .SetArg("random_shuffle", shuffle)
      .SetArg("shard_id", shard)
      .SetArg("num_shards", shards)
      .SetArg("seed", int64_t{77});
}

// The clip a decoded sample is, as (file's first number, start frame), from its pixels, checked
// against the clip the reader says it drew.
std::pair<int, int> DecodedClip(const OpHarness& h, const VideoReaderOp& op, int i) {
  const TensorListCPU& video = h.OutputCpu(0);
  const std::vector<int> n = ReadFrameNumbers(static_cast<const uint8_t*>(video.raw_sample(i)), 2, 64, 64);
  int frame = -1;
  const ClipDataset::File* f = Data().FileOf(n[0], &frame);
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(n[1], n[0] + 1);
  const ClipList::Clip clip = op.clips().At(op.batch_clips()[static_cast<size_t>(i)]);
  EXPECT_EQ(clip.file->index->name, f ? f->path : "");
  EXPECT_EQ(clip.start, frame);
  return {f ? f->base : -1, frame};
}

// One epoch of shard `shard`: its samples in order, as the clips' numbers.
std::vector<int64_t> EpochOfShard(OpSpec spec, int batch, int64_t epoch_size) {
  OpHarness h(std::move(spec), Device::kCpu, batch);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  std::vector<int64_t> clips;
  for (int64_t done = 0; done < epoch_size; done += batch) {
    h.Run();
    for (int i = 0; i < batch && done + i < epoch_size; ++i) {
      DecodedClip(h, op, i);
      clips.push_back(op.batch_clips()[static_cast<size_t>(i)]);
    }
  }
  return clips;
}

class Shards : public ::testing::TestWithParam<bool> {};

TEST_P(Shards, CoverEveryClipExactlyOncePerEpoch) {
  const bool shuffle = GetParam();
  for (int64_t shards : {1, 3, 4}) {
    std::multiset<int64_t> all;
    for (int64_t s = 0; s < shards; ++s) {
      const int64_t size = ReaderCore::EpochSize(kClips, ReaderOptions{shuffle, s, shards, false, false, 77}, 4);
      const std::vector<int64_t> part = EpochOfShard(Reader(shuffle, s, shards), 4, size);
      all.insert(part.begin(), part.end());
    }
    EXPECT_EQ(all.size(), static_cast<size_t>(kClips)) << shards << " shards";
    EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), static_cast<size_t>(kClips)) << shards << " shards";
  }
}

INSTANTIATE_TEST_SUITE_P(Order, Shards, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Shuffled" : "InOrder"; });

TEST(VideoReaderOrder, ShuffleIsAPermutationThatChangesPerEpoch) {
  OpHarness h(Reader(true, 0, 1), Device::kCpu, 10);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  std::vector<std::vector<int64_t>> epochs(2);
  for (int b = 0; b < 6; ++b) {
    h.Run();
    for (int i = 0; i < 10; ++i) {
      DecodedClip(h, op, i);
      epochs[static_cast<size_t>(b / 3)].push_back(op.batch_clips()[static_cast<size_t>(i)]);
    }
  }
  for (const auto& e : epochs) EXPECT_EQ(std::set<int64_t>(e.begin(), e.end()).size(), static_cast<size_t>(kClips));
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_EQ(epochs[0], ReaderCore::Permutation(kClips, 77, 0)) << "readers.file's permutation, over clips";
}

TEST(VideoReaderOrder, PadLastBatchGivesEveryShardTheSameBatches) {
  for (int64_t s = 0; s < 4; ++s) {
    OpSpec spec = Reader(true, s, 4).SetArg("pad_last_batch", true);
    OpHarness h(spec, Device::kCpu, 3);
    auto& op = dynamic_cast<VideoReaderOp&>(h.op());
    EXPECT_EQ(op.EpochSize(3), 9) << "ceil(ceil(30 / 4) / 3) = 3 batches of 3";
    std::vector<int64_t> epoch;
    for (int b = 0; b < 3; ++b) {
      h.Run();
      for (int i = 0; i < 3; ++i) {
        DecodedClip(h, op, i);
        epoch.push_back(op.batch_clips()[static_cast<size_t>(i)]);
      }
    }
    const int64_t own = ReaderCore::ShardRange(kClips, s, 4).second - ReaderCore::ShardRange(kClips, s, 4).first;
    for (size_t k = static_cast<size_t>(own); k < epoch.size(); ++k) EXPECT_EQ(epoch[k], epoch[static_cast<size_t>(own) - 1]);
  }
}

TEST(VideoReaderOrder, RestoredCheckpointContinuesWithIdenticalClips) {
  const OpSpec spec = Reader(true, 1, 2).SetArg("stride", int64_t{1});
  OpHarness a(spec, Device::kCpu, 4);
  a.set_num_threads(3);
  for (int b = 0; b < 5; ++b) a.Run();  // into the second epoch (15 clips per shard)
  const std::string state = a.op().CheckpointState();
  EXPECT_THAT(state, ::testing::HasSubstr("clips=30 fingerprint="));
  std::vector<std::vector<uint8_t>> want;
  for (int b = 0; b < 6; ++b) {
    a.Run();
    const TensorListCPU& v = a.OutputCpu(0);
    for (int i = 0; i < v.num_samples(); ++i) {
      const auto* p = static_cast<const uint8_t*>(v.raw_sample(i));
      want.emplace_back(p, p + v.shape(i).num_elements());
    }
  }
  OpHarness b(spec, Device::kCpu, 4);
  b.op().RestoreCheckpoint(state);
  size_t k = 0;
  for (int batch = 0; batch < 6; ++batch) {
    b.Run();
    const TensorListCPU& v = b.OutputCpu(0);
    for (int i = 0; i < v.num_samples(); ++i, ++k) {
      const auto* p = static_cast<const uint8_t*>(v.raw_sample(i));
      EXPECT_TRUE(std::vector<uint8_t>(p, p + v.shape(i).num_elements()) == want[k]) << "sample " << k;
    }
  }
}

}  // namespace
}  // namespace conveyor::ops::video
