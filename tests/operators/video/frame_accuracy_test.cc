// Frame accuracy: for every codec x container the encoders here can write — with B-frames
// (decode order != presentation order), variable frame rate and open GOPs — every clip decoded
// holds exactly the frames asked, read back from the frame number drawn into each one.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/cpu_decoder.h"
#include "operators/video/demux.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::ops::video {
namespace {

using testing::MakeVideo;
using testing::ReadFrameNumbers;
using testvideos::TestVideoOptions;

struct Case {
  std::string name;
  std::string codec;
  std::string container;
  int b_frames = 0;
  bool vfr = false;
  bool open_gop = false;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

constexpr int kFrames = 60;
constexpr int kGop = 10;

class FrameAccuracy : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case& c = GetParam();
    TestVideoOptions o;
    o.codec = c.codec;
    o.container = c.container;
    o.frames = kFrames;
    o.gop = kGop;
    o.b_frames = c.b_frames;
    o.vfr = c.vfr;
    o.open_gop = c.open_gop;
    o.seed = 7;
    path_ = testing::FreshTempDir("accuracy") + "/" + c.name + "." + c.container;
    video_ = MakeVideo(path_, o);
    if (!video_) GTEST_SKIP() << "this FFmpeg has no " << c.codec << " encoder";
    source_ = OpenByteSource(path_);
    Demuxer demuxer(source_, limits_);
    index_ = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits_));
  }

  // Decodes `frames` with `decoder` and checks the numbers drawn into them.
  void ExpectFrames(ClipDecoder& decoder, const std::vector<int64_t>& frames, const std::string& what) {
    std::vector<uint8_t> rgb(frames.size() * static_cast<size_t>(decoder.frame_bytes()), 0xA5);
    decoder.Decode(frames, rgb.data());
    const std::vector<int> got =
        ReadFrameNumbers(rgb.data(), static_cast<int64_t>(frames.size()), index_->info.width, index_->info.height);
    EXPECT_EQ(got, std::vector<int>(frames.begin(), frames.end())) << what;
  }

  std::string path_;
  std::optional<testvideos::TestVideo> video_;
  std::shared_ptr<const ByteSource> source_;
  std::shared_ptr<const ClipIndex> index_;
  VideoLimits limits_;
};

TEST_P(FrameAccuracy, IndexHasEveryFrameAndItsTimestamp) {
  EXPECT_EQ(index_->frame_count(), kFrames);
  EXPECT_EQ(index_->leading_frames_dropped, 0);
  EXPECT_GE(static_cast<int64_t>(index_->keyframes.size()), kFrames / kGop) << "one keyframe per GOP at least";
  EXPECT_EQ(index_->keyframes[0], 0);
  for (int k = 0; k < kFrames; ++k) {
    EXPECT_NEAR(index_->Seconds(k) - index_->Seconds(0), video_->timestamps[k] - video_->timestamps[0], 0.0015)
        << "frame " << k;
  }
}

TEST_P(FrameAccuracy, RandomClipsHoldExactlyTheFramesAsked) {
  auto decoder = OpenCpuClipDecoder(source_, index_, limits_, {});
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 16; ++trial) {
    const int stride = std::vector<int>{1, 2, 3, 5}[trial % 4];
    const int length = std::uniform_int_distribution<int>(1, 8)(rng);
    const int last_start = kFrames - 1 - (length - 1) * stride;
    const int start = std::uniform_int_distribution<int>(0, last_start)(rng);
    std::vector<int64_t> frames;
    for (int i = 0; i < length; ++i) frames.push_back(start + i * stride);
    ExpectFrames(*decoder, frames, "trial " + std::to_string(trial) + ": start " + std::to_string(start) +
                                       ", stride " + std::to_string(stride) + ", length " + std::to_string(length));
  }
  // H.264 open GOPs: the first clip that starts after a recovery-point keyframe needs the keyframe
  // before it (libavcodec refuses the frame-number gap); the decoder then starts there for every
  // later clip. HEVC CRAs decode directly.
  EXPECT_LE(decoder->stats().retries, GetParam().open_gop && GetParam().codec == "h264" ? 1 : 0);
}

TEST_P(FrameAccuracy, ConsecutiveClipsDecodeOnWithoutSeeking) {
  auto decoder = OpenCpuClipDecoder(source_, index_, limits_, {});
  for (int start = 0; start + 4 <= kFrames; start += 4) {
    ExpectFrames(*decoder, {start, start + 1, start + 2, start + 3}, "clip at " + std::to_string(start));
  }
  EXPECT_EQ(decoder->stats().seeks, 1);
  EXPECT_EQ(decoder->stats().continued, kFrames / 4 - 1);
  EXPECT_EQ(decoder->stats().frames_decoded, kFrames) << "no frame decoded twice";
}

TEST_P(FrameAccuracy, BackwardClipsSeekEveryTime) {
  auto decoder = OpenCpuClipDecoder(source_, index_, limits_, {});
  for (int start = kFrames - 3; start >= 0; start -= 7) {
    ExpectFrames(*decoder, {start, start + 1, start + 2}, "clip at " + std::to_string(start));
  }
  EXPECT_EQ(decoder->stats().continued, 0);
}

TEST_P(FrameAccuracy, EveryFrameAlone) {
  auto decoder = OpenCpuClipDecoder(source_, index_, limits_, {});
  for (int k = kFrames - 1; k >= 0; --k) ExpectFrames(*decoder, {k}, "frame " + std::to_string(k));
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, FrameAccuracy,
    ::testing::Values(Case{"h264_mp4", "h264", "mp4"}, Case{"h264_mp4_bframes", "h264", "mp4", 2},
                      Case{"h264_mp4_bframes_vfr", "h264", "mp4", 2, true},
                      Case{"h264_mkv_bframes_vfr", "h264", "mkv", 3, true},
                      Case{"h264_mp4_open_gop", "h264", "mp4", 2, false, true},
                      Case{"h264_mkv_open_gop_vfr", "h264", "mkv", 2, true, true}, Case{"h264_avi", "h264", "avi"},
                      Case{"hevc_mkv_bframes", "hevc", "mkv", 2}, Case{"hevc_mp4_bframes_vfr", "hevc", "mp4", 3, true},
                      Case{"hevc_mkv_open_gop", "hevc", "mkv", 2, false, true},
                      Case{"hevc_mp4_open_gop_vfr", "hevc", "mp4", 2, true, true}, Case{"vp9_webm", "vp9", "webm"},
                      Case{"vp9_webm_altref", "vp9", "webm", 1}, Case{"vp9_webm_vfr", "vp9", "webm", 0, true},
                      Case{"vp9_mkv_altref_vfr", "vp9", "mkv", 1, true}, Case{"mpeg4_avi", "mpeg4", "avi"},
                      Case{"mpeg4_avi_bframes", "mpeg4", "avi", 1}, Case{"mpeg4_mp4_bframes_vfr", "mpeg4", "mp4", 2, true},
                      Case{"av1_webm", "av1", "webm"}, Case{"av1_mkv_altref_vfr", "av1", "mkv", 1, true},
                      Case{"av1_mp4", "av1", "mp4"}),
    CaseName);

}  // namespace
}  // namespace conveyor::ops::video
