// The engines' preallocation (GpuDecoderOptions::engines_prealloc_grow, _by_area, _typical):
// when nvJPEG's buffers are preallocated again, and that the pixels stay libjpeg-turbo's whatever
// the buffers' shape. Each mode decodes the same three calls on one slot: 15 small photos with a
// wide 1600x200 image, the same with a tall 200x1600 one instead, then the first again. Sized by
// the largest width and the largest height, the tall image grows the buffers (its height); sized
// by a square of the largest image's pixels it does not (the same 320,000 pixels); not growing,
// only the first call preallocates; sized by the call's median image (one of the small photos in
// every call), only the first call does too, and the wide and tall images grow nvJPEG's buffers
// inside the decode, their pixels still right. The test prints what the driver gave out at preallocation.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "core/cuda/stream.h"
#include "core/op/tbb_thread_pool.h"
#include "tests/operators/decoders/gpu/decoder_run.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

using namespace gpu_decoder_test;  // NOLINT: the shared helpers of these tests

struct Mode {
  const char* name;
  bool grow, by_area, typical;
  int64_t preallocations;  // over the three calls
};

TEST(EnginesPrealloc, GrowsByShapeAndPixelsStayRight) {
  CONVEYOR_REQUIRE_GPU();
  std::mt19937_64& rng = ::conveyor::testing::Rng();
  std::vector<TestJpeg> small;
  for (int i = 0; i < 15; ++i) {
    small.push_back(EncodeJpeg(40 + static_cast<int>(rng() % 200), 40 + static_cast<int>(rng() % 200), TJSAMP_420,
                               false, rng));
  }
  std::vector<TestJpeg> wide = small, tall = small;
  wide.push_back(EncodeJpeg(200, 1600, TJSAMP_420, false, rng));
  tall.push_back(EncodeJpeg(1600, 200, TJSAMP_420, false, rng));
  cuda::Stream stream = cuda::Stream::Create();
  TbbThreadPool pool(4);
  constexpr double kMiB = 1 << 20;
  for (const Mode& m : {Mode{"largest width x largest height", true, false, false, 2},
                        Mode{"square of the largest image's pixels", true, true, false, 1},
                        Mode{"the call's median image", true, false, true, 1},
                        Mode{"once, growing inside the decode", false, false, false, 1}}) {
    GpuDecoderOptions options;
    options.paths = DecodePaths::kHardwareOnly;
    options.engine_threads = 1;
    options.engines_prealloc_grow = m.grow;
    options.engines_prealloc_by_area = m.by_area;
    options.engines_prealloc_typical = m.typical;
    GpuDecoder decoder(options);
    if (!decoder.counters().hardware_available) GTEST_SKIP() << decoder.counters().unavailable_reason;
    DecodeRun run{decoder, stream, pool, DecodeColor::kRgb};
    int call = 0;
    for (const std::vector<TestJpeg>* files : {&wide, &tall, &wide}) {
      const auto windows = call == 1 ? RandomWindows(*files, rng) : Whole(*files);
      ExpectClose(*files, windows, run(*files, windows), DecodeColor::kRgb,
                  std::string(m.name) + ", call " + std::to_string(call));
      ++call;
    }
    const GpuDecoderCounters c = decoder.counters();
    EXPECT_EQ(c.images_hardware + c.images_cpu, 3 * 16) << m.name;
    EXPECT_GT(c.images_hardware, 0) << m.name;
    EXPECT_EQ(c.hw_preallocations, m.preallocations) << m.name;
    std::cout << m.name << ": " << c.hw_preallocations << " preallocations, the driver gave out "
              << c.engines_memory.driver_bytes_at_prealloc / kMiB << " MiB at preallocation\n";
  }
}

}  // namespace
}  // namespace conveyor::ops
