// The tensor operators' GPU kernels (issue 38) beside a device-to-device copy of the same minimal
// bytes (back_to_back.h: TimeAgainstCopy), batch 256:
//
// | case                  | work                                                                   |
// |-----------------------|------------------------------------------------------------------------|
// | cat_width             | two 224x112x3 uint8 halves per sample -> 224x224x3 (cat along W: 224   |
// |                       | rows of 336 bytes from each input, pitch 672); stack is the same code   |
// | lookup_table_u8       | 224x224x3 uint8 keys -> uint8 through a 256-entry table                |
// | one_hot_u8_4          | a 224x224 uint8 class map -> 224x224x4 uint8 (class axis last)         |
//
// reshape, squeeze and expand_dims move no bytes (the output aliases the input). Skips without a GPU.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/tensor/dtype.h"
#include "operators/tensor/cat.h"
#include "operators/tensor/lookup_table.h"
#include "operators/tensor/one_hot.h"
#include "tests/benchmarks/back_to_back.h"

namespace conveyor {
namespace {

constexpr int kBatch = 256;
constexpr int64_t kH = 224, kW = 224, kC = 3;
constexpr size_t kImageBytes = static_cast<size_t>(kH * kW * kC);

struct Setup {
  cuda::Stream stream = cuda::Stream::Create();
  Buffer in, out, copy_src, copy_dst, desc, table;

  explicit Setup(size_t out_bytes_per_sample) {
    const cuda::StreamView s = stream.view();
    in = Buffer::Allocate(MemoryKind::kDevice, kImageBytes * kBatch, s);
    out = Buffer::Allocate(MemoryKind::kDevice, out_bytes_per_sample * kBatch, s);
    copy_src = Buffer::Allocate(MemoryKind::kDevice, out_bytes_per_sample * kBatch, s);
    copy_dst = Buffer::Allocate(MemoryKind::kDevice, out_bytes_per_sample * kBatch, s);
    std::vector<uint8_t> host(kImageBytes * kBatch);
    std::mt19937 rng(11);
    for (uint8_t& b : host) b = static_cast<uint8_t>(rng() % 7);  // small values: class indices too
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(in.device_ptr(), host.data(), host.size(), cudaMemcpyHostToDevice, s.get()));
    stream.Synchronize();
  }
  const uint8_t* In(size_t offset) const { return static_cast<const uint8_t*>(in.device_ptr()) + offset; }
  uint8_t* Out(size_t offset) const { return static_cast<uint8_t*>(out.device_ptr()) + offset; }
  template <typename T>
  const T* Upload(const std::vector<T>& d) {
    return bench::UploadTable(desc, d, stream.view());
  }
  // The kernel beside a copy of `copy_bytes` (the output's bytes); min_bytes: read + written once.
  void Time(benchmark::State& state, const std::function<void()>& launch, size_t copy_bytes, double min_bytes) {
    const cuda::StreamView s = stream.view();
    auto copy = [&] {
      CONVEYOR_CUDA_CHECK(
          cudaMemcpyAsync(copy_dst.device_ptr(), copy_src.device_ptr(), copy_bytes, cudaMemcpyDeviceToDevice, s.get()));
    };
    bench::TimeAgainstCopy(state, s, launch, copy, copy_bytes, min_bytes);
  }
};

bool NeedGpu(benchmark::State& state) {
  if (cuda::HasCudaDevice()) return true;
  state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  return false;
}

void BM_CatWidth(benchmark::State& state) {
  if (!NeedGpu(state)) return;
  Setup s(kImageBytes);
  const int64_t half = kW / 2 * kC;  // bytes of one input row
  std::vector<ops::CatPiece> pieces;
  for (int i = 0; i < kBatch; ++i) {
    const size_t base = kImageBytes * static_cast<size_t>(i);
    for (int k = 0; k < 2; ++k) {  // input k: the k-th half of the sample's bytes, as its own tensor
      pieces.push_back(ops::CatPiece{s.In(base + static_cast<size_t>(k) * kImageBytes / 2),
                                     s.Out(base + static_cast<size_t>(k * half)), kH, half, 2 * half});
    }
  }
  const ops::CatPiece* d = s.Upload(pieces);
  const int n = static_cast<int>(pieces.size());
  s.Time(state, [&] { ops::CatGpu(d, n, kImageBytes / 2, s.stream.view()); }, kImageBytes * kBatch,
         2.0 * kImageBytes * kBatch);
}

void BM_LookupU8(benchmark::State& state) {
  if (!NeedGpu(state)) return;
  Setup s(kImageBytes);
  std::vector<uint8_t> table(256);
  for (int k = 0; k < 256; ++k) table[static_cast<size_t>(k)] = static_cast<uint8_t>(255 - k);
  s.table = Buffer::Allocate(MemoryKind::kDevice, table.size(), s.stream.view());
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(s.table.device_ptr(), table.data(), table.size(), cudaMemcpyHostToDevice,
                                      s.stream.view().get()));
  std::vector<ops::LookupSample> samples;
  for (int i = 0; i < kBatch; ++i) {
    const size_t base = kImageBytes * static_cast<size_t>(i);
    samples.push_back(ops::LookupSample{s.In(base), s.Out(base), static_cast<int64_t>(kImageBytes),
                                        s.table.device_ptr(), 256, 0, 1});
  }
  const ops::LookupSample* d = s.Upload(samples);
  s.Time(state, [&] { ops::LookupGpu(d, kBatch, static_cast<int64_t>(kImageBytes), DType::kUInt8, s.stream.view()); },
         kImageBytes * kBatch, 2.0 * kImageBytes * kBatch);
}

void BM_OneHotU8(benchmark::State& state) {
  if (!NeedGpu(state)) return;
  constexpr int64_t kClasses = 4, kPixels = kH * kW;
  Setup s(static_cast<size_t>(kPixels * kClasses));
  std::vector<ops::OneHotSample> samples;
  for (int i = 0; i < kBatch; ++i) {
    samples.push_back(ops::OneHotSample{s.In(static_cast<size_t>(kPixels) * i),
                                        s.Out(static_cast<size_t>(kPixels * kClasses) * i), kPixels, 1, kClasses, 1,
                                        0, 1});
  }
  const ops::OneHotSample* d = s.Upload(samples);
  const size_t out_bytes = static_cast<size_t>(kPixels * kClasses) * kBatch;
  s.Time(state, [&] { ops::OneHotGpu(d, kBatch, kPixels, DType::kUInt8, s.stream.view()); }, out_bytes,
         static_cast<double>(out_bytes + static_cast<size_t>(kPixels) * kBatch));
}

BENCHMARK(BM_CatWidth)->Name("cat_width")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LookupU8)->Name("lookup_table_u8")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OneHotU8)->Name("one_hot_u8_4")->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
