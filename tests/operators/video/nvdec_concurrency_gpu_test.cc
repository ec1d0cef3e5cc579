// NVDEC under the reader's load (issue 39, throughput): decoders of several files on many threads
// at once, each converting on its own stream ordered after the caller's (shared) stream, decoders
// handed from closed files to newly opened ones (nvdec_sessions.h), parsers decoding ahead of the
// frame shown (display delay) — every frame checked by the number it carries (its file's base +
// its index), so a frame of the wrong file, the wrong position or a stale surface shows. Skips
// without a GPU; FAILS on a GPU machine where NVDEC cannot load.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/harness.h"
#include "operators/readers/io/byte_source.h"
#include "operators/video/clip_index.h"
#include "operators/video/demux.h"
#include "operators/video/nvdec/gpu_clip_decoder.h"
#include "operators/video/nvdec/nvdec_loader.h"
#include "operators/video/video_reader.h"
#include "tests/operators/video/require_nvdec.h"
#include "tests/operators/video/video_fixture.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops::video {
namespace {

constexpr int kWidth = 320, kHeight = 240, kFrames = 48;  // above every codec's NVDEC minimum
constexpr size_t kFrameBytes = static_cast<size_t>(kWidth) * kHeight * 3;

struct File {
  std::string path;
  int base = 0;  // the number drawn into frame 0
  std::shared_ptr<const ClipIndex> index;
};

// `count` files of `codec` (B-frames, GOP 12) whose frame k carries base + k, bases 1000 apart
// from `first_base`. Empty when this FFmpeg has no encoder for the codec.
std::vector<File> MakeFiles(const std::string& dir, const std::string& codec, const std::string& container,
                            int count, int first_base) {
  std::vector<File> files;
  for (int k = 0; k < count; ++k) {
    testvideos::TestVideoOptions o;
    o.codec = codec;
    o.container = container;
    o.width = kWidth;
    o.height = kHeight;
    o.frames = kFrames;
    o.gop = 12;
    o.b_frames = 2;
    o.first_frame = first_base + 1000 * k;
    const std::string path = dir + "/" + codec + "_" + std::to_string(k) + "." + container;
    if (!testing::MakeVideo(path, o)) return {};
    VideoLimits limits;
    Demuxer demuxer(OpenByteSource(path), limits);
    files.push_back(File{path, o.first_frame, std::make_shared<const ClipIndex>(BuildClipIndex(demuxer, limits))});
  }
  return files;
}

std::vector<int> Expected(const File& f, const std::vector<int64_t>& frames) {
  std::vector<int> numbers;
  for (int64_t k : frames) numbers.push_back(f.base + static_cast<int>(k));
  return numbers;
}

// Decodes `frames` of `decoder` into `device` after poisoning it on `stream` (asynchronously: the
// decoder must order its writes after it), copies them back on `stream` and reads their numbers.
std::vector<int> DecodeAndRead(ClipDecoder& decoder, const std::vector<int64_t>& frames, uint8_t* device,
                               cudaStream_t stream) {
  const size_t bytes = kFrameBytes * frames.size();
  if (cudaMemsetAsync(device, 0xA5, bytes, stream) != cudaSuccess) return {-1};
  decoder.Decode(frames, device);
  std::vector<uint8_t> host(bytes);
  if (cudaMemcpyAsync(host.data(), device, bytes, cudaMemcpyDeviceToHost, stream) != cudaSuccess) return {-2};
  if (cudaStreamSynchronize(stream) != cudaSuccess) return {-3};
  return testing::ReadFrameNumbers(host.data(), static_cast<int64_t>(frames.size()), kWidth, kHeight);
}

std::vector<int64_t> Clip(int64_t start, int64_t length, int64_t stride) {
  std::vector<int64_t> frames;
  for (int64_t k = 0; k < length; ++k) frames.push_back(start + k * stride);
  return frames;
}

TEST(NvdecSessions, AClosedFilesDecoderDecodesTheNextFileExactly) {
  REQUIRE_NVDEC();
  const std::string dir = testing::FreshTempDir("nvdec_sessions");
  std::vector<File> files = MakeFiles(dir, "h264", "mp4", 3, 1000);
  ASSERT_EQ(files.size(), 3u) << "no h264 encoder";
  const std::vector<File> hevc = MakeFiles(dir, "hevc", "mkv", 1, 9000);
  auto stream = cuda::Stream::Create();
  NvdecOptions nv;
  nv.stream->stream.store(static_cast<void*>(stream.view().get()));
  uint8_t* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, kFrameBytes * kFrames), cudaSuccess);
  const std::vector<std::vector<int64_t>> clips = {Clip(5, 16, 1), Clip(30, 6, 3), Clip(0, 4, 1), Clip(44, 4, 1)};
  for (size_t f = 0; f < files.size() + hevc.size(); ++f) {
    const File& file = f < files.size() ? files[f] : hevc[0];
    SCOPED_TRACE(file.path);
    GpuClipDecoder gpu =
        OpenGpuClipDecoder(OpenByteSource(file.path), file.index, VideoLimits{}, CpuDecoderOptions{}, nv);
    ASSERT_TRUE(gpu.nvdec) << gpu.fallback;
    for (const auto& frames : clips) {
      EXPECT_EQ(DecodeAndRead(*gpu.decoder, frames, device, stream.view().get()), Expected(file, frames))
          << "clip from frame " << frames[0];
    }
  }  // each file's decoder goes back to the cache when the next opens
  const NvdecSessionStats stats = SessionStats(*nv.sessions);
  EXPECT_EQ(stats.reused, 2) << "the 2nd and 3rd H.264 files take the 1st one's decoder";
  EXPECT_EQ(stats.created, 1 + static_cast<int64_t>(hevc.size())) << "HEVC needs a decoder of its own";
  cudaFree(device);
}

// 8 threads, as the reader's pool: clips of the same files at once (each thread holds its own
// decoder of a file, as the pool hands them out), decoders closed and reopened as the pool's LRU
// does, one stream shared by every thread as the pipeline's is.
TEST(NvdecSessions, ManyThreadsDecodeClipsOfTheSameAndOtherFilesAtOnce) {
  REQUIRE_NVDEC();
  const std::string dir = testing::FreshTempDir("nvdec_threads");
  std::vector<File> files = MakeFiles(dir, "h264", "mp4", 4, 1000);
  ASSERT_EQ(files.size(), 4u) << "no h264 encoder";
  for (File& f : MakeFiles(dir, "hevc", "mkv", 2, 5000)) files.push_back(std::move(f));
  auto stream = cuda::Stream::Create();
  NvdecOptions nv;
  nv.stream->stream.store(static_cast<void*>(stream.view().get()));
  constexpr int kThreads = 8, kClipsPerThread = 16, kLength = 8;
  std::mutex mutex;
  std::vector<std::string> failures;
  int nvdec_opens = 0;
  const auto work = [&](int t) {
    uint8_t* device = nullptr;
    if (cudaMalloc(&device, kFrameBytes * kLength) != cudaSuccess) {
      std::lock_guard<std::mutex> lock(mutex);
      failures.push_back("thread " + std::to_string(t) + ": cudaMalloc failed");
      return;
    }
    std::map<size_t, std::unique_ptr<ClipDecoder>> open;  // at most 2 files open, as a small pool
    for (int i = 0; i < kClipsPerThread; ++i) {
      const size_t f = static_cast<size_t>(t + i / 2) % files.size();  // two clips per file in a row
      const int64_t stride = 1 + (i % 2);
      const int64_t start = (i * 7 + t * 3) % (kFrames - (kLength - 1) * stride);
      const std::vector<int64_t> frames = Clip(start, kLength, stride);
      const std::string where = "thread " + std::to_string(t) + " clip " + std::to_string(i) + " (" +
                                files[f].path + " from " + std::to_string(start) + " stride " +
                                std::to_string(stride) + ")";
      try {
        if (open.count(f) == 0) {
          if (open.size() >= 2) open.erase(open.begin());  // closed: its decoder goes to the cache
          GpuClipDecoder gpu = OpenGpuClipDecoder(OpenByteSource(files[f].path), files[f].index, VideoLimits{},
                                                  CpuDecoderOptions{}, nv);
          std::lock_guard<std::mutex> lock(mutex);
          if (!gpu.nvdec) failures.push_back(where + ": NVDEC refused: " + gpu.fallback);
          ++nvdec_opens;
          open[f] = std::move(gpu.decoder);
        }
        const std::vector<int> got = DecodeAndRead(*open[f], frames, device, stream.view().get());
        if (got != Expected(files[f], frames)) {
          std::string text = where + ": read";
          for (int n : got) text += " " + std::to_string(n);
          std::lock_guard<std::mutex> lock(mutex);
          failures.push_back(text);
        }
      } catch (const std::exception& e) {
        open.erase(f);
        std::lock_guard<std::mutex> lock(mutex);
        failures.push_back(where + ": " + e.what());
      }
    }
    open.clear();
    cudaFree(device);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (std::thread& t : threads) t.join();
  for (const std::string& f : failures) ADD_FAILURE() << f;
  const NvdecSessionStats stats = SessionStats(*nv.sessions);
  EXPECT_GT(stats.reused, 0) << nvdec_opens << " files opened";
  EXPECT_LT(stats.created, nvdec_opens);
}

// readers.video with fewer open files than files (the benchmark's situation: 24 files, 16 open):
// every clip exact, and the files opened again take the decoders closed ones left.
TEST(NvdecSessions, ReaderWithFewerOpenFilesThanFilesReusesDecoders) {
  REQUIRE_NVDEC();
  const std::string dir = testing::FreshTempDir("nvdec_reader_lru");
  const std::vector<File> files = MakeFiles(dir, "h264", "mp4", 6, 1000);
  ASSERT_EQ(files.size(), 6u) << "no h264 encoder";
  std::vector<std::string> paths;
  for (const File& f : files) paths.push_back(f.path);
  constexpr int kBatch = 12, kThreads = 8, kLength = 8, kStride = 2, kIterations = 4;
  OpHarness h(OpSpec("readers.video", "r")
                  .AddOutput("video")
                  .AddOutput("labels")
                  .AddOutput("frame_num")
                  .SetArg("filenames", paths)
                  .SetArg("sequence_length", int64_t{kLength})
                  .SetArg("stride", int64_t{kStride})
                  .SetArg("step", int64_t{4})
                  .SetArg("random_shuffle", true)
                  .SetArg("max_open_files", int64_t{2})
                  .SetArg("enable_frame_num", true),
              Device::kGpu, kBatch);
  h.set_num_threads(kThreads);
  auto& op = dynamic_cast<VideoReaderOp&>(h.op());
  auto stream = cuda::Stream::Create();
  for (int it = 0; it < kIterations; ++it) {
    h.Run(stream.view());  // outputs poisoned on the stream first: the reader must write after that
    const TensorListCPU video = h.OutputToHost(0);
    const TensorListCPU labels = h.OutputToHost(1);
    const TensorListCPU frame_num = h.OutputToHost(2);
    for (int i = 0; i < kBatch; ++i) {
      const int file = *static_cast<const int32_t*>(labels.raw_sample(i));
      const int start = *static_cast<const int32_t*>(frame_num.raw_sample(i));
      ASSERT_GE(file, 0);
      ASSERT_LT(file, 6);
      EXPECT_EQ(testing::ReadFrameNumbers(static_cast<const uint8_t*>(video.raw_sample(i)), kLength, kWidth, kHeight),
                Expected(files[static_cast<size_t>(file)], Clip(start, kLength, kStride)))
          << "iteration " << it << " sample " << i;
    }
  }
  EXPECT_EQ(op.nvdec_clips(), kBatch * kIterations);
  EXPECT_EQ(op.nvdec_fallback_clips(), 0) << op.nvdec_fallback_reason();
  const NvdecSessionStats stats = op.nvdec_sessions();
  // One format: a decoder is created only when none is idle, so never more than decode at once.
  EXPECT_LE(stats.created, kThreads);
  EXPECT_GT(stats.reused, 0);
  EXPECT_EQ(stats.created + stats.reused, op.file_opens());
}

}  // namespace
}  // namespace conveyor::ops::video
