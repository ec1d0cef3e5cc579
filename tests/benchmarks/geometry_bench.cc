// Geometric image kernels (issue 10) timed with CUDA events on our own stream, each beside a
// device-to-device cudaMemcpyAsync of the same minimal bytes (the input the kernel must read once
// + the output it writes once; the copy moves half that many bytes, reading and writing them).
// Counters: kernel_ms (median over iterations of one launch between two events), eff_GBps on
// minimal bytes, copy_GBps, and ratio_to_copy = copy time / kernel time (1.0 = at the copy
// roofline); the same with 20 launches back to back (b2b_*: back_to_back.h).
//
// Issue 10 targets on an H100, 256 images 375x500x3 uint8 -> 224x224 linear:
//   resize without antialias <= 0.10 ms per batch, with antialias <= 0.20 ms.
// Also reported: cubic resize, random_resized_crop (windows from the Philox stream, as the op),
// resize of gray and RGBA images (the kernels' generic channel paths), crop (224x224 centred)
// and flip (horizontal, every other sample also vertical).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/philox.h"
#include "operators/common/crop_window.h"
#include "operators/crop/crop.h"
#include "operators/flip/flip.h"
#include "operators/resample/resample.h"
#include "tests/benchmarks/back_to_back.h"

namespace conveyor {
namespace {

using ops::resample::Filter;

constexpr int kBatch = 256;
constexpr int64_t kH = 375, kW = 500, kC = 3, kOut = 224;

size_t Align16(size_t b) { return (b + 15) / 16 * 16; }

struct Setup {
  cuda::Stream stream = cuda::Stream::Create();
  Buffer in, out, copy_src, copy_dst, desc;
  size_t in_stride;

  // in_sample_bytes: one input image (default kH x kW x kC).
  Setup(size_t out_sample_bytes, size_t copy_bytes, size_t in_sample_bytes = size_t{kH} * kW * kC)
      : in_stride(Align16(in_sample_bytes)) {
    in = Buffer::Allocate(MemoryKind::kDevice, in_stride * kBatch, stream.view());
    out = Buffer::Allocate(MemoryKind::kDevice, Align16(out_sample_bytes) * kBatch, stream.view());
    copy_src = Buffer::Allocate(MemoryKind::kDevice, copy_bytes, stream.view());
    copy_dst = Buffer::Allocate(MemoryKind::kDevice, copy_bytes, stream.view());
    std::vector<uint8_t> host(in.size());
    std::mt19937 rng(7);
    for (auto& x : host) x = static_cast<uint8_t>(rng());
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(in.device_ptr(), host.data(), host.size(), cudaMemcpyHostToDevice,
                                        stream.view().get()));
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(copy_src.device_ptr(), 1, copy_bytes, stream.view().get()));
    stream.Synchronize();
  }
  const void* In(int i) const { return static_cast<const char*>(in.device_ptr()) + in_stride * static_cast<size_t>(i); }
  void* Out(int i, size_t out_sample_bytes) const {
    return static_cast<char*>(out.device_ptr()) + Align16(out_sample_bytes) * static_cast<size_t>(i);
  }
  template <typename T>
  const T* Upload(const std::vector<T>& d) {
    return bench::UploadTable(desc, d, stream.view());
  }
};

void TimeLoop(benchmark::State& state, Setup& s, const std::function<void()>& launch, double min_bytes) {
  const cuda::StreamView stream = s.stream.view();
  const size_t copy_bytes = s.copy_src.size();
  auto copy = [&] {
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(s.copy_dst.device_ptr(), s.copy_src.device_ptr(), copy_bytes,
                                        cudaMemcpyDeviceToDevice, stream.get()));
  };
  bench::TimeAgainstCopy(state, stream, launch, copy, copy_bytes, min_bytes);
}

bool NoGpu(benchmark::State& state) {
  if (cuda::HasCudaDevice()) return false;
  state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  return true;
}

// resize / random_resized_crop: 256 x (375, 500, channels) uint8 -> (224, 224, channels) uint8.
// 3 channels take the kernels' 3-channel paths, other counts the generic ones. `in_scale` 2: the
// inputs are 750 x 1000 (a 3.3x antialiased downscale: more taps, more input rows per tile).
void BM_Resample(benchmark::State& state, Filter filter, bool antialias, bool random_window, int64_t channels = kC,
                 int64_t in_scale = 1) {
  if (NoGpu(state)) return;
  const int64_t in_h = kH * in_scale, in_w = kW * in_scale;
  const size_t out_bytes = size_t{kOut} * kOut * static_cast<size_t>(channels);
  std::vector<ops::ResampleDesc> d;
  double read_bytes = 0;
  const ops::RandomCropParams params;
  std::vector<ops::CropWindow> windows;
  for (int i = 0; i < kBatch; ++i) {
    ops::CropWindow w{0, 0, in_h, in_w};
    if (random_window) {
      Philox rng(1234, 1, 0, static_cast<uint32_t>(i));
      w = ops::DrawRandomCropWindow(rng, in_h, in_w, params);
    }
    windows.push_back(w);
    read_bytes += static_cast<double>(w.h * w.w * channels);
  }
  const double min_bytes = read_bytes + static_cast<double>(out_bytes) * kBatch;
  Setup s(out_bytes, static_cast<size_t>(min_bytes / 2), static_cast<size_t>(in_h * in_w * channels));
  for (int i = 0; i < kBatch; ++i) {
    const ops::CropWindow& w = windows[static_cast<size_t>(i)];
    d.push_back(ops::MakeResampleDesc(s.In(i), Shape{in_h, in_w, channels}, w.y, w.x, w.h, w.w, s.Out(i, out_bytes),
                                      Shape{kOut, kOut, channels}, filter, antialias));
  }
  const ops::ResampleDesc* dev = s.Upload(d);
  TimeLoop(state, s, [&] {
    ops::ResampleGpu(dev, kBatch, static_cast<int64_t>(s.out.size()), filter, antialias, DType::kUInt8, DType::kUInt8,
                     s.stream.view());
  }, min_bytes);
}

void BM_Crop(benchmark::State& state) {
  if (NoGpu(state)) return;
  const size_t out_bytes = size_t{kOut} * kOut * kC;
  const double min_bytes = 2.0 * static_cast<double>(out_bytes) * kBatch;
  Setup s(out_bytes, static_cast<size_t>(min_bytes / 2));
  std::vector<ops::CropDesc> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    ops::CropDesc& c = d[static_cast<size_t>(i)];
    c.in = s.In(i);
    c.out = s.Out(i, out_bytes);
    c.in_h = kH;
    c.in_w = kW;
    c.channels = kC;
    c.out_h = c.out_w = kOut;
    c.y0 = ops::CropOrigin(0.5, kH, kOut);
    c.x0 = ops::CropOrigin(0.5, kW, kOut);
  }
  const ops::CropDesc* dev = s.Upload(d);
  TimeLoop(state, s, [&] { ops::CropGpu(dev, kBatch, static_cast<int64_t>(s.out.size()), DType::kUInt8, s.stream.view()); },
           min_bytes);
}

void BM_Flip(benchmark::State& state) {
  if (NoGpu(state)) return;
  const size_t bytes = size_t{kH} * kW * kC;
  const double min_bytes = 2.0 * static_cast<double>(bytes) * kBatch;
  Setup s(bytes, static_cast<size_t>(min_bytes / 2));
  std::vector<ops::FlipDesc> d(kBatch);
  for (int i = 0; i < kBatch; ++i) d[static_cast<size_t>(i)] = {s.In(i), s.Out(i, bytes), 1, kH, kW, kC, 1, i % 2};
  const ops::FlipDesc* dev = s.Upload(d);
  TimeLoop(state, s, [&] { ops::FlipGpu(dev, kBatch, static_cast<int64_t>(s.out.size()), 1, s.stream.view()); }, min_bytes);
}

BENCHMARK_CAPTURE(BM_Resample, resize_linear_noaa, Filter::kLinear, false, false)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, resize_linear_aa, Filter::kLinear, true, false)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, resize_cubic_aa, Filter::kCubic, true, false)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, resize_nearest, Filter::kNearest, false, false)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, random_resized_crop_linear_aa, Filter::kLinear, true, true)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, resize_linear_noaa_gray, Filter::kLinear, false, false, 1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, resize_linear_aa_gray, Filter::kLinear, true, false, 1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, resize_linear_aa_rgba, Filter::kLinear, true, false, 4)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Resample, resize_linear_aa_750x1000, Filter::kLinear, true, false, 3, 2)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Crop)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Flip)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
