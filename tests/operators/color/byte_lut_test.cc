// The per-sample 256-entry table path of ColorGpu (byte_lut.cuh: gamma, solarize, posterize of
// uint8) called directly on pointers that a TensorList never hands out: inputs that start off a
// 16-byte boundary (partial first and last chunks), outputs aligned differently from their inputs
// (the element-by-element fallback), samples shorter than one chunk, an empty sample, and blocks
// past a small sample's end. Every byte must equal ColorCpu's (gamma: within 1, powf's libm), and
// the bytes around each output must stay as poisoned.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "operators/color/color.h"
#include "tests/util/gpu_test.h"

namespace conveyor::ops {
namespace {

constexpr uint8_t kPoison = 0xA5;
constexpr int kGuard = 32;  // poisoned bytes on each side of every output

struct Case {
  int64_t count;
  int in_lead, out_lead;  // byte offsets from a 256-byte-aligned base
};

ColorSample Tone(ColorMode mode, int i) {
  ColorSample s{};
  s.mode = mode;
  switch (mode) {
    case ColorMode::kGamma: s.p0 = 0.3f + 0.4f * static_cast<float>(i), s.p1 = 1.f / 255.f, s.p2 = 255.f * 0.9f; break;
    case ColorMode::kSolarize: s.p0 = static_cast<float>(17 * i % 256), s.p1 = 255.f; break;
    default: s.p0 = static_cast<float>((0xFF00u >> (i % 9)) & 0xFFu); break;
  }
  return s;
}

TEST(ColorGpuTable, UnalignedAndShortSamplesMatchCpu) {
  CONVEYOR_REQUIRE_GPU();
  const std::vector<Case> cases = {{100000, 0, 0}, {100000, 3, 3},  {100000, 5, 9}, {4097, 15, 15}, {15, 1, 1},
                                   {16, 0, 0},     {17, 15, 15},    {1, 7, 2},      {0, 0, 0},      {33, 8, 0}};
  const int n = static_cast<int>(cases.size());
  cuda::Stream stream = cuda::Stream::Create();
  std::mt19937 rng(11);
  for (ColorMode mode : {ColorMode::kGamma, ColorMode::kSolarize, ColorMode::kPosterize}) {
    std::vector<Buffer> in_bufs, out_bufs;
    std::vector<std::vector<uint8_t>> inputs;
    std::vector<ColorSample> samples;
    for (int i = 0; i < n; ++i) {
      const Case& c = cases[static_cast<size_t>(i)];
      const size_t bytes = static_cast<size_t>(c.count) + 256 + 2 * kGuard;
      in_bufs.push_back(Buffer::Allocate(MemoryKind::kDevice, bytes, stream.view()));
      out_bufs.push_back(Buffer::Allocate(MemoryKind::kDevice, bytes, stream.view()));
      std::vector<uint8_t> host(static_cast<size_t>(c.count));
      for (uint8_t& b : host) b = static_cast<uint8_t>(rng());
      auto* in = static_cast<uint8_t*>(in_bufs.back().device_ptr()) + kGuard + c.in_lead;
      auto* out = static_cast<uint8_t*>(out_bufs.back().device_ptr()) + kGuard + c.out_lead;
      if (c.count > 0) {
        CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(in, host.data(), host.size(), cudaMemcpyHostToDevice, stream.get()));
      }
      CONVEYOR_CUDA_CHECK(cudaMemsetAsync(out_bufs.back().device_ptr(), kPoison, bytes, stream.get()));
      ColorSample s = Tone(mode, i);
      s.in = in, s.out = out, s.pixels = c.count;
      samples.push_back(s);
      inputs.push_back(std::move(host));
    }
    Buffer descs = Buffer::Allocate(MemoryKind::kDevice, sizeof(ColorSample) * samples.size(), stream.view());
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(descs.device_ptr(), samples.data(), sizeof(ColorSample) * samples.size(),
                                        cudaMemcpyHostToDevice, stream.get()));
    ColorGpu(static_cast<const ColorSample*>(descs.device_ptr()), n, 100000, DType::kUInt8, DType::kUInt8, stream.view());
    for (int i = 0; i < n; ++i) {
      const Case& c = cases[static_cast<size_t>(i)];
      const std::string where = "mode " + std::to_string(static_cast<int>(mode)) + " case " + std::to_string(i);
      std::vector<uint8_t> got(out_bufs[static_cast<size_t>(i)].size());
      CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(got.data(), out_bufs[static_cast<size_t>(i)].device_ptr(), got.size(),
                                          cudaMemcpyDeviceToHost, stream.get()));
      stream.Synchronize();
      std::vector<uint8_t> want(static_cast<size_t>(c.count));
      ColorSample s = samples[static_cast<size_t>(i)];
      s.in = inputs[static_cast<size_t>(i)].data(), s.out = want.data();
      ColorCpu(s, DType::kUInt8, DType::kUInt8);
      const size_t first = static_cast<size_t>(kGuard + c.out_lead);
      for (size_t b = 0; b < got.size(); ++b) {
        if (b < first || b >= first + want.size()) {
          ASSERT_EQ(got[b], kPoison) << where << ": byte " << b << " outside the output was written";
          continue;
        }
        const int diff = std::abs(static_cast<int>(got[b]) - static_cast<int>(want[b - first]));
        ASSERT_LE(diff, mode == ColorMode::kGamma ? 1 : 0) << where << ": element " << b - first;
      }
    }
  }
}

}  // namespace
}  // namespace conveyor::ops
