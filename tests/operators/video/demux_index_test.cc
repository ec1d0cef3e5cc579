// The parts under readers.video: the Demuxer (files and memory alike, Annex B out), the ClipIndex
// and its cache (keyed by path, size and modification time), and the DecoderPool's bound.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/readers/io/memory_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/decoder_pool.h"
#include "operators/video/demux.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::ops::video {
namespace {

using testing::FreshTempDir;
using testing::ReadBytes;
using testvideos::TestVideoOptions;

std::string Write(const std::string& path, const std::string& codec, const std::string& container, int frames,
                  int b_frames = 2) {
  TestVideoOptions o;
  o.codec = codec;
  o.container = container;
  o.width = o.height = 64;
  o.frames = frames;
  o.gop = 8;
  o.b_frames = b_frames;
  testvideos::WriteTestVideo(path, o);
  return path;
}

bool StartsWithStartCode(const VideoPacket& p) {
  return p.size > 4 && p.data[0] == 0 && p.data[1] == 0 && (p.data[2] == 1 || (p.data[2] == 0 && p.data[3] == 1));
}

TEST(Demuxer, H264AndHevcComeOutAsAnnexBWithTheirParameterSets) {
  const std::string dir = FreshTempDir("demux");
  for (const auto& [codec, container] : std::vector<std::pair<std::string, std::string>>{
           {"h264", "mp4"}, {"h264", "mkv"}, {"hevc", "mp4"}, {"hevc", "mkv"}}) {
    Demuxer d(OpenByteSource(Write(dir + "/a." + container, codec, container, 10)), {});
    EXPECT_EQ(VideoCodecName(d.info().codec), codec);
    EXPECT_EQ(d.info().width, 64);
    EXPECT_EQ(d.info().chroma_format, 420);
    EXPECT_EQ(d.info().bit_depth, 8);
    EXPECT_FALSE(d.info().extradata.empty()) << "the container's avcC / hvcC";
    ASSERT_FALSE(d.info().annexb_headers.empty());
    EXPECT_EQ(d.info().annexb_headers[0], 0) << "Annex B parameter sets start with a start code";
    VideoPacket p;
    int packets = 0;
    while (d.Next(&p)) {
      EXPECT_TRUE(StartsWithStartCode(p)) << codec << "/" << container << " packet " << packets;
      ++packets;
    }
    EXPECT_EQ(packets, 10);
  }
}

TEST(Demuxer, Vp9PacketsAreAsStoredWithoutAnnexBHeaders) {
  const std::string dir = FreshTempDir("demux");
  Demuxer d(OpenByteSource(Write(dir + "/a.webm", "vp9", "webm", 6, 0)), {});
  EXPECT_EQ(d.info().codec, VideoCodec::kVp9);
  EXPECT_TRUE(d.info().annexb_headers.empty());
  EXPECT_EQ(d.format_name(), "matroska,webm");
}

TEST(Demuxer, MemoryAndFileGiveTheSameIndex) {
  const std::string path = Write(FreshTempDir("demux") + "/b.mp4", "h264", "mp4", 30);
  const std::vector<uint8_t> bytes = ReadBytes(path);
  Demuxer file(OpenByteSource(path), {});
  Demuxer memory(std::make_shared<MemorySource>(bytes.data(), bytes.size(), "in memory"), {});
  const ClipIndex a = BuildClipIndex(file, {});
  const ClipIndex b = BuildClipIndex(memory, {});
  EXPECT_EQ(a.pts, b.pts);
  EXPECT_EQ(a.keyframes, b.keyframes);
  EXPECT_EQ(b.name, "in memory");
  EXPECT_EQ(a.keyframes, (std::vector<int64_t>{0, 8, 16, 24}));
}

TEST(ClipIndex, FindsFramesByTimestampAndTheKeyframeBeforeAFrame) {
  ClipIndex index;
  index.pts = {0, 512, 1024, 1536, 2048, 2560};
  index.keyframes = {0, 3};
  index.info.time_base_num = 1;
  index.info.time_base_den = 12800;
  EXPECT_EQ(index.FrameOfPts(1536), 3);
  EXPECT_EQ(index.FrameOfPts(1000), -1);
  EXPECT_EQ(index.KeyframeBefore(0), 0);
  EXPECT_EQ(index.KeyframeBefore(2), 0);
  EXPECT_EQ(index.KeyframeBefore(3), 1);
  EXPECT_EQ(index.KeyframeBefore(5), 1);
  EXPECT_DOUBLE_EQ(index.Seconds(4), 0.16);
}

TEST(ClipIndexCache, BuildsOncePerFileVersion) {
  ClipIndexCache cache(8);
  const std::string path = Write(FreshTempDir("cache") + "/c.mkv", "h264", "mkv", 12);
  const auto first = cache.Get(path, {});
  const auto again = cache.Get(path, {});
  EXPECT_EQ(first, again);
  EXPECT_EQ(cache.builds(), 1);
  EXPECT_EQ(cache.hits(), 1);
  Write(path, "h264", "mkv", 20);  // rewritten in place: another size and time
  const auto rewritten = cache.Get(path, {});
  EXPECT_EQ(cache.builds(), 2);
  EXPECT_EQ(rewritten->frame_count(), 20);
  VideoLimits tight;
  tight.max_frames = 15;
  EXPECT_THAT([&] { cache.Get(path, tight); },
              ::testing::ThrowsMessage<InvalidArgument>(::testing::HasSubstr("more than max_frames 15 packets")))
      << "a cached index is checked against each caller's limits";
}

// Three short H.264 files in `dir`, indexed (the DecoderPool tests' files).
std::vector<std::shared_ptr<const ClipIndex>> ThreeIndexedFiles(const std::string& dir) {
  std::vector<std::shared_ptr<const ClipIndex>> indices;
  for (int f = 0; f < 3; ++f) {
    const std::string path = Write(dir + "/" + std::to_string(f) + ".mkv", "h264", "mkv", 8);
    indices.push_back(ClipIndexCache::Global().Get(path, {}));
  }
  return indices;
}

TEST(DecoderPool, ReusesIdleDecodersAndClosesBeyondTheBound) {
  const std::string dir = FreshTempDir("pool");
  const std::vector<std::shared_ptr<const ClipIndex>> indices = ThreeIndexedFiles(dir);
  DecoderPool pool(2, [&](int64_t file) {
    const auto& index = indices[static_cast<size_t>(file)];
    return OpenCpuClipDecoder(OpenByteSource(index->name), index, {}, {});
  });
  {
    auto a = pool.Acquire(0);
    auto b = pool.Acquire(1);
    auto c = pool.Acquire(2);
    EXPECT_EQ(pool.open(), 3) << "decoders in use are never closed";
  }  // released c, b, a: c found two in use and was closed at once
  EXPECT_EQ(pool.open(), 2) << "back to the bound once released";
  EXPECT_EQ(pool.opens(), 3);
  { auto again = pool.Acquire(1); }  // idle: reused
  EXPECT_EQ(pool.opens(), 3);
  { auto reopened = pool.Acquire(2); }  // closed before: opened again, and 0 (least recent) closed
  EXPECT_EQ(pool.opens(), 4);
  EXPECT_EQ(pool.open(), 2);
  {
    auto failed = pool.Acquire(0);  // 1 (least recent idle) closed to make room
    EXPECT_EQ(pool.opens(), 5);
    EXPECT_EQ(pool.open(), 2);
    failed.Drop();  // a decoder whose clip failed is closed, not returned
  }
  EXPECT_EQ(pool.open(), 1);
  { auto kept = pool.Acquire(2); }
  EXPECT_EQ(pool.opens(), 5) << "2 is still open";
}

// A file opened while idle decoders fill the bound closes the least recently used first, so at no
// moment are more than max(max_open, in use) decoders open (on NVDEC, the closed one's session
// passes to the new file instead of another being created).
TEST(DecoderPool, ClosesIdleDecodersBeforeOpeningAnotherFile) {
  const std::string dir = FreshTempDir("pool_trim");
  const std::vector<std::shared_ptr<const ClipIndex>> indices = ThreeIndexedFiles(dir);
  std::vector<int64_t> open_while_opening;
  DecoderPool* self = nullptr;
  DecoderPool pool(2, [&](int64_t file) {
    open_while_opening.push_back(self->open());  // the one opening counted
    const auto& index = indices[static_cast<size_t>(file)];
    return OpenCpuClipDecoder(OpenByteSource(index->name), index, {}, {});
  });
  self = &pool;
  { auto a = pool.Acquire(0); }
  { auto b = pool.Acquire(1); }  // idle: 1 then 0, the bound full
  auto held = pool.Acquire(0);   // reused: 0 in use, 1 idle
  auto opened = pool.Acquire(2);
  ASSERT_EQ(open_while_opening.size(), 3u);
  EXPECT_EQ(open_while_opening[2], 2) << "1 (idle) closed before 2 was opened: 0 and 2 open";
  EXPECT_EQ(pool.open(), 2);
  EXPECT_EQ(pool.opens(), 3);
}

// A decoder opened on a file that is no longer the one its index was built from is refused, naming
// the file, what it holds now and what the index has.
TEST(ClipIndex, AFileChangedSinceIndexingIsRefused) {
  const std::string dir = FreshTempDir("changed");
  const std::string path = Write(dir + "/a.mp4", "h264", "mp4", 10);
  Demuxer d(OpenByteSource(path), {});
  auto index = std::make_shared<const ClipIndex>(BuildClipIndex(d, {}));
  TestVideoOptions o;
  o.codec = "h264";
  o.container = "mp4";
  o.width = 96;
  o.height = 64;
  o.frames = 10;
  testvideos::WriteTestVideo(path, o);
  try {
    OpenCpuClipDecoder(OpenByteSource(path), index, {}, CpuDecoderOptions{});
    ADD_FAILURE() << "a changed file was decoded with the old index";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the file changed since it was indexed (h264 96x64, the index has h264 64x64)"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr(index->name));
  }
}

}  // namespace
}  // namespace conveyor::ops::video
