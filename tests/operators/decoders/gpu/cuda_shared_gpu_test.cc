// The CUDA backend's shared states (GpuDecoderOptions::cuda_shared_pixels, cuda_path.h): images above
// the size decode on a few nvJPEG states every worker takes in turn, each new user's stream waiting
// for the last one's device work. With one shared state per decoder kind and four threads, most
// images of every call pass through the same state on different workers' streams; every call's
// pixels must still match libjpeg-turbo's (whole images and random windows, host and GPU Huffman,
// progressive and every chroma layout), and the counter must name exactly the images above the size.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/tbb_thread_pool.h"
#include "tests/operators/decoders/gpu/decoder_run.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using namespace gpu_decoder_test;  // NOLINT: the shared helpers of these tests

constexpr int64_t kShared = 40'000;  // pixels: about half of the files below are larger

std::vector<TestJpeg> MixedFiles(std::mt19937_64& rng) {
  const int layouts[] = {TJSAMP_420, TJSAMP_422, TJSAMP_444, TJSAMP_GRAY};
  std::vector<TestJpeg> files;
  for (int i = 0; i < 32; ++i) {
    files.push_back(EncodeJpeg(48 + static_cast<int>(rng() % 380), 48 + static_cast<int>(rng() % 380),
                               layouts[rng() % 4], rng() % 5 == 0, rng));
  }
  return files;
}

int64_t Above(const std::vector<TestJpeg>& files, int64_t pixels) {
  int64_t n = 0;
  for (const TestJpeg& f : files) n += int64_t{f.width} * f.height > pixels;
  return n;
}

GpuDecoderCounters DecodeCalls(const GpuDecoderOptions& options, const std::vector<TestJpeg>& files,
                               std::mt19937_64& rng, int calls) {
  GpuDecoder decoder(options);
  EXPECT_TRUE(decoder.counters().nvjpeg_available) << decoder.counters().unavailable_reason;
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
  for (int call = 0; call < calls; ++call) {
    const auto windows = call % 2 ? RandomWindows(files, rng) : Whole(files);
    ExpectClose(files, windows, run(files, windows), DecodeColor::kRgb, "call " + std::to_string(call));
  }
  return decoder.counters();
}

TEST(CudaSharedStates, LargeImagesDecodeOnStatesSharedByEveryWorker) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  const std::vector<TestJpeg> files = MixedFiles(rng);
  const int64_t above = Above(files, kShared);
  ASSERT_GT(above, 4) << "the random sizes should put several files above " << kShared << " pixels";
  GpuDecoderOptions options;
  options.paths = DecodePaths::kCudaOnly;
  options.cuda_shared_pixels = kShared;
  options.cuda_shared_states = 1;
  options.hybrid_huffman_threshold = 90'000;  // both decoder kinds among the shared images
  const GpuDecoderCounters c = DecodeCalls(options, files, rng, 8);
  EXPECT_EQ(c.images_cuda, 8 * static_cast<int64_t>(files.size()));
  EXPECT_EQ(c.images_cuda_shared, 8 * above) << "exactly the images above cuda_shared_pixels";
}

TEST(CudaSharedStates, OffLeavesEveryImageOnItsWorkersStates) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  const std::vector<TestJpeg> files = MixedFiles(rng);
  GpuDecoderOptions options;
  options.paths = DecodePaths::kCudaOnly;
  options.cuda_shared_pixels = 0;
  const GpuDecoderCounters c = DecodeCalls(options, files, rng, 2);
  EXPECT_EQ(c.images_cuda, 2 * static_cast<int64_t>(files.size()));
  EXPECT_EQ(c.images_cuda_shared, 0);
}

}  // namespace
}  // namespace conveyor::ops
