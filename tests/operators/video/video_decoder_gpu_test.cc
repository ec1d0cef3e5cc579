// decoders.video with device: gpu (DALI's "mixed") on a GPU machine: a batch mixing codecs
// (H.264 with B-frames, HEVC, VP9 — NVDEC — and MPEG-4 Part 2, which NVDEC does not take: the CPU
// decoder and an upload), per-sample start_frame / sequence_length / stride, and frames past the
// end padded (constant fill_value, edge, reflect): the GPU output has exactly the CPU backend's
// frames and shapes, fill frames byte for byte, decoded pixels within the YUV → RGB conversion's
// tolerance (as nvdec_gpu_test: ±3 levels, mean ≤ 1; the MPEG-4 sample, decoded by the same CPU
// decoder on both backends, byte for byte). Skips without a GPU; FAILS where a GPU has no NVDEC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "operators/video/nvdec/nvdec_loader.h"
#include "tests/operators/video/video_decoder_fixture.h"
#include "tests/util/gpu_test.h"

namespace conveyor::testing {
namespace {

struct Sample {
  Clip clip;
  int64_t start, length, stride;
};

TEST(VideoDecoderGpu, MixedBatchEqualsTheCpuBackend) {
  CONVEYOR_REQUIRE_GPU();
  std::string why;
  ASSERT_NE(ops::video::SharedNvdec(&why), nullptr) << "a GPU but no NVDEC: " << why;
  // 320x240: above every codec's NVDEC minimum size.
  const Clip h264{"h264", "mp4", 320, 240, 30, 2, 100}, hevc{"hevc", "mkv", 320, 240, 24, 2, 200},
      vp9{"vp9", "webm", 320, 240, 20, 0, 300}, mpeg4{"mpeg4", "avi", 320, 240, 18, 2, 400};
  const std::vector<Sample> samples = {{h264, 0, 8, 1},  {hevc, 5, 6, 3},  {vp9, 3, 4, 2},   {mpeg4, 2, 5, 2},
                                       {h264, 26, 8, 1}, {hevc, 20, 4, 2}, {vp9, 18, 5, 1},  {mpeg4, 15, 6, 1},
                                       {h264, 11, 3, 9}};
  std::vector<std::vector<uint8_t>> files;
  std::vector<int64_t> start, length, stride;
  for (const Sample& s : samples) {
    files.push_back(Encoded(s.clip));
    if (files.back().empty()) GTEST_SKIP() << "no " << s.clip.codec << " encoder in this FFmpeg";
    start.push_back(s.start);
    length.push_back(s.length);
    stride.push_back(s.stride);
  }
  const int n = static_cast<int>(samples.size());
  auto per_sample = [](const std::vector<int64_t>& v) {
    std::vector<std::vector<int64_t>> values;
    for (int64_t x : v) values.push_back({x});
    return MakeBatch<int64_t>(std::vector<Shape>(v.size(), Shape{1}), values);
  };
  for (const std::string pad : {"constant", "edge", "reflect_101"}) {
    SCOPED_TRACE("pad_mode " + pad);
    auto run = [&](Device device) {
      OpHarness h(Decoder()
                      .SetArgInput("start_frame", "starts")
                      .SetArgInput("sequence_length", "lengths")
                      .SetArgInput("stride", "strides")
                      .SetArg("pad_mode", pad)
                      .SetArg("fill_value", std::vector<int64_t>{10, 200, 30}),
                  device, n);
      h.set_num_threads(4);
      h.SetInput(0, Batch(files));
      h.SetArgInput("start_frame", per_sample(start));
      h.SetArgInput("sequence_length", per_sample(length));
      h.SetArgInput("stride", per_sample(stride));
      auto stream = cuda::Stream::Create();
      if (device == Device::kGpu) {
        h.Run(stream.view());
      } else {
        h.Run();
      }
      return h.OutputToHost(0);
    };
    const TensorListCPU cpu = run(Device::kCpu), gpu = run(Device::kGpu);
    ASSERT_EQ(gpu.num_samples(), n);
    for (int i = 0; i < n; ++i) {
      const Sample& s = samples[static_cast<size_t>(i)];
      SCOPED_TRACE(std::string(s.clip.codec) + " sample " + std::to_string(i) + ": start " + std::to_string(s.start) +
                   ", " + std::to_string(s.length) + " frames at stride " + std::to_string(s.stride));
      ASSERT_EQ(gpu.shape(i), cpu.shape(i));
      EXPECT_EQ(FramesOf(gpu, i), FramesOf(cpu, i));
      const auto* g = static_cast<const uint8_t*>(gpu.raw_sample(i));
      const auto* c = static_cast<const uint8_t*>(cpu.raw_sample(i));
      const int64_t bytes = gpu.shape(i).num_elements(), frame_bytes = bytes / gpu.shape(i)[0];
      const int64_t frame_count = s.clip.frames;
      int worst = 0;
      double sum = 0;
      for (int64_t k = 0; k < gpu.shape(i)[0]; ++k) {
        const bool fill = pad == "constant" && s.start + k * s.stride >= frame_count;
        for (int64_t b = 0; b < frame_bytes; ++b) {
          const int64_t at = k * frame_bytes + b;
          if (fill) {
            ASSERT_EQ(g[at], (std::vector<int>{10, 200, 30})[static_cast<size_t>(b % 3)]) << "fill frame " << k;
            continue;
          }
          const int d = std::abs(g[at] - c[at]);
          worst = std::max(worst, d);
          sum += d;
        }
      }
      if (std::string(s.clip.codec) == "mpeg4") {
        EXPECT_EQ(worst, 0) << "the CPU fallback's upload differs from the CPU backend";
      } else {
        EXPECT_LE(worst, 3) << "largest GPU vs CPU RGB difference";
        EXPECT_LE(sum / static_cast<double>(bytes), 1.0) << "mean GPU vs CPU RGB difference";
      }
    }
  }
}

}  // namespace
}  // namespace conveyor::testing
