// readers.video's GPU backend where NVDEC cannot be loaded (this build machine: no libnvcuvid.so.1,
// no driver): the loader says why without crashing, OpenGpuClipDecoder falls back to the CPU
// decoder (frame-accurate, frames in host memory for the upload) and says why; and the NV12 → RGB
// conversion's CPU reference (the GPU kernel's twin) agrees with libswscale, the CPU decoder's
// converter, within ±3 levels for every matrix and range the kernel takes. CPU-only: no GPU needed.
#include <gtest/gtest.h>

extern "C" {
#include <libswscale/swscale.h>
}

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "operators/readers/io/byte_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/demux.h"
#include "operators/video/nvdec/gpu_clip_decoder.h"
#include "operators/video/nvdec/nv12_to_rgb.h"
#include "operators/video/nvdec/nvdec_loader.h"
#include "operators/video/nvdec/nvdec_sessions.h"
#include "tests/operators/video/video_fixture.h"

namespace conveyor::ops::video {
namespace {

TEST(NvdecFallback, LoaderSaysWhyNvdecIsMissing) {
  std::string why;
  if (SharedNvdec(&why) != nullptr) GTEST_SKIP() << "NVDEC is present here: the fallback path is not taken";
  EXPECT_FALSE(why.empty());
  EXPECT_TRUE(why.find("libcuda.so.1") != std::string::npos || why.find("libnvcuvid.so.1") != std::string::npos ||
              why.find("cuInit") != std::string::npos || why.find("no CUDA device") != std::string::npos)
      << why;
  std::string again;
  EXPECT_EQ(SharedNvdec(&again), nullptr);  // loaded once: the same answer
  EXPECT_EQ(again, why);
}

TEST(NvdecFallback, GpuClipDecoderFallsBackToTheCpuDecoderFrameAccurately) {
  if (SharedNvdec() != nullptr) GTEST_SKIP() << "NVDEC is present here: the fallback path is not taken";
  const std::string dir = testing::FreshTempDir("nvdec_fallback");
  testvideos::TestVideoOptions o;
  o.codec = "h264";
  o.container = "mp4";
  o.frames = 30;
  o.b_frames = 2;
  const auto made = testing::MakeVideo(dir + "/a.mp4", o);
  if (!made) GTEST_SKIP() << "no H.264 encoder";
  VideoLimits limits;
  std::shared_ptr<const ByteSource> source = OpenByteSource(made->path);
  Demuxer demuxer(source, limits);
  auto index = std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits));
  GpuClipDecoder opened = OpenGpuClipDecoder(source, index, limits, CpuDecoderOptions{}, NvdecOptions{});
  ASSERT_NE(opened.decoder, nullptr);
  EXPECT_FALSE(opened.nvdec);
  EXPECT_FALSE(IsNvdec(*opened.decoder));
  EXPECT_NE(opened.fallback.find("NVDEC unavailable"), std::string::npos) << opened.fallback;
  EXPECT_NE(opened.decoder->Describe().find("(cpu)"), std::string::npos);
  const std::vector<int64_t> frames = {5, 8, 11, 14, 17};
  std::vector<uint8_t> rgb(frames.size() * static_cast<size_t>(opened.decoder->frame_bytes()));
  opened.decoder->Decode(frames, rgb.data());
  EXPECT_EQ(testing::ReadFrameNumbers(rgb.data(), 5, o.width, o.height), (std::vector<int>{5, 8, 11, 14, 17}));
}

// libswscale's conversion of one 4:2:0 frame, set up as cpu_decoder.cc sets it up.
std::vector<uint8_t> SwscaleRgb(const std::vector<uint8_t>& y, const std::vector<uint8_t>& u,
                                const std::vector<uint8_t>& v, int w, int h, int sws_matrix, bool full_range) {
  SwsContext* sws = sws_getContext(w, h, AV_PIX_FMT_YUV420P, w, h, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr, nullptr,
                                   nullptr);
  sws_setColorspaceDetails(sws, sws_getCoefficients(sws_matrix), full_range ? 1 : 0,
                           sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  const uint8_t* planes[3] = {y.data(), u.data(), v.data()};
  const int strides[3] = {w, w / 2, w / 2};
  uint8_t* dst[1] = {rgb.data()};
  const int dst_strides[1] = {w * 3};
  sws_scale(sws, planes, strides, 0, h, dst, dst_strides);
  sws_freeContext(sws);
  return rgb;
}

// Tolerance: ±3 levels per value, mean at most 1.0 (measured 0.8 limited range): libswscale's x86 SIMD path computes at 13-15
// bits (a wrong matrix or range is off by tens of levels).
// Which idle NVDEC decoder a newly opened file may take (nvdec_sessions.h): one of its exact
// format, with at least the surfaces it needs (the parser is told the decoder's count).
TEST(NvdecSessions, AFileTakesOnlyADecoderOfItsFormat) {
  CUVIDDECODECREATEINFO want{};
  want.CodecType = cudaVideoCodec_H264;
  want.ChromaFormat = cudaVideoChromaFormat_420;
  want.ulWidth = 1280;
  want.ulHeight = 736;
  want.ulMaxWidth = 1280;
  want.ulMaxHeight = 736;
  want.display_area.right = 1280;
  want.display_area.bottom = 720;
  want.ulTargetWidth = 1280;
  want.ulTargetHeight = 720;
  want.OutputFormat = cudaVideoSurfaceFormat_NV12;
  want.ulNumDecodeSurfaces = 12;
  want.ulNumOutputSurfaces = 2;
  EXPECT_TRUE(CompatibleSession(want, want));
  CUVIDDECODECREATEINFO have = want;
  have.ulNumDecodeSurfaces = 16;
  EXPECT_TRUE(CompatibleSession(have, want)) << "more surfaces than needed";
  have.ulNumDecodeSurfaces = 11;
  EXPECT_FALSE(CompatibleSession(have, want)) << "fewer surfaces than needed";
  have = want;
  have.CodecType = cudaVideoCodec_HEVC;
  EXPECT_FALSE(CompatibleSession(have, want)) << "another codec";
  have = want;
  have.ulHeight = 720;
  EXPECT_FALSE(CompatibleSession(have, want)) << "another coded size";
  have = want;
  have.display_area.bottom = 718;
  EXPECT_FALSE(CompatibleSession(have, want)) << "another display area";
  have = want;
  have.bitDepthMinus8 = 2;
  have.OutputFormat = cudaVideoSurfaceFormat_P016;
  EXPECT_FALSE(CompatibleSession(have, want)) << "another bit depth";
  have = want;
  have.DeinterlaceMode = cudaVideoDeinterlaceMode_Adaptive;
  EXPECT_FALSE(CompatibleSession(have, want)) << "another deinterlacing";
}

TEST(Nv12ToRgb, ReferenceMatchesLibswscaleWithinThreeLevels) {
  // Luma random per pixel; chroma constant over 4x4 chroma blocks, so whichever chroma
  // reconstruction libswscale picks (nearest or interpolated) sees the same value inside blocks;
  // block borders (where an interpolating converter differs) are left out of the comparison.
  const int w = 128, h = 64;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> any(0, 255), limited_y(16, 235), limited_c(16, 240);
  struct Case {
    YuvMatrix matrix;
    int sws;
    bool full;
  };
  const Case cases[] = {{YuvMatrix::kBt601, SWS_CS_ITU601, false}, {YuvMatrix::kBt709, SWS_CS_ITU709, false},
                        {YuvMatrix::kBt2020, SWS_CS_BT2020, false}, {YuvMatrix::kSmpte240m, SWS_CS_SMPTE240M, false},
                        {YuvMatrix::kFcc, SWS_CS_FCC, false},       {YuvMatrix::kBt601, SWS_CS_ITU601, true},
                        {YuvMatrix::kBt709, SWS_CS_ITU709, true}};
  for (const Case& c : cases) {
    std::vector<uint8_t> y(static_cast<size_t>(w) * h), u(static_cast<size_t>(w / 2) * (h / 2)), v(u.size());
    for (auto& s : y) s = static_cast<uint8_t>(c.full ? any(rng) : limited_y(rng));
    for (int by = 0; by < h / 2; by += 4) {
      for (int bx = 0; bx < w / 2; bx += 4) {
        const int cu = c.full ? any(rng) : limited_c(rng), cv = c.full ? any(rng) : limited_c(rng);
        for (int yy = by; yy < by + 4; ++yy) {
          for (int xx = bx; xx < bx + 4; ++xx) {
            u[static_cast<size_t>(yy) * (w / 2) + xx] = static_cast<uint8_t>(cu);
            v[static_cast<size_t>(yy) * (w / 2) + xx] = static_cast<uint8_t>(cv);
          }
        }
      }
    }
    std::vector<uint8_t> chroma(static_cast<size_t>(w) * (h / 2));  // NV12: U V interleaved
    for (size_t i = 0; i < u.size(); ++i) {
      chroma[2 * i] = u[i];
      chroma[2 * i + 1] = v[i];
    }
    Nv12Planes planes;
    planes.luma = y.data();
    planes.chroma = chroma.data();
    planes.pitch = static_cast<size_t>(w);
    planes.width = w;
    planes.height = h;
    std::vector<uint8_t> ours(static_cast<size_t>(w) * h * 3);
    Nv12ToRgbReference(planes, YuvToRgbFor(c.matrix, c.full), ours.data());
    const std::vector<uint8_t> theirs = SwscaleRgb(y, u, v, w, h, c.sws, c.full);
    int worst = 0;
    double sum = 0;
    int64_t count = 0;
    for (int py = 0; py < h; ++py) {
      for (int px = 0; px < w; ++px) {
        if (px % 8 == 0 || px % 8 == 7 || py % 8 == 0 || py % 8 == 7) continue;  // chroma block borders
        for (int ch = 0; ch < 3; ++ch) {
          const size_t at = (static_cast<size_t>(py) * w + px) * 3 + ch;
          worst = std::max(worst, std::abs(ours[at] - theirs[at]));
          sum += std::abs(ours[at] - theirs[at]);
          ++count;
        }
      }
    }
    EXPECT_LE(worst, 3) << "matrix " << static_cast<int>(c.matrix) << (c.full ? " full" : " limited") << " range";
    EXPECT_LE(sum / count, 1.0) << "matrix " << static_cast<int>(c.matrix) << (c.full ? " full" : " limited");
  }
}

TEST(Nv12ToRgb, MatrixFromStreamFollowsTheCpuDecodersRule) {
  EXPECT_EQ(MatrixFromH273(1, 480), YuvMatrix::kBt709);
  EXPECT_EQ(MatrixFromH273(6, 1080), YuvMatrix::kBt601);
  EXPECT_EQ(MatrixFromH273(9, 480), YuvMatrix::kBt2020);
  EXPECT_EQ(MatrixFromH273(2, 719), YuvMatrix::kBt601);  // unspecified: by height
  EXPECT_EQ(MatrixFromH273(2, 720), YuvMatrix::kBt709);
}

}  // namespace
}  // namespace conveyor::ops::video
