// Per-pixel operator kernels timed with CUDA events on our own stream, each beside a
// device-to-device cudaMemcpyAsync moving the same minimal bytes (read the needed input once +
// write the output once: a copy of half that many bytes reads and writes them). Counters:
// effective GB/s on minimal bytes, copy GB/s, and ratio = copy time / kernel time (1.0 = at the
// copy roofline); the same with 20 launches back to back (b2b_*: back_to_back.h). Issue 10's
// target: crop_mirror_normalize, 256 x 256x256x3 uint8 HWC → 224x224
// float16 CHW, per-sample mirror: ≤ 0.048 ms (≥ 2.4 TB/s) on an H100.
#include <benchmark/benchmark.h>

#include <functional>
#include <random>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "operators/cast/cast.h"
#include "operators/color_space_conversion/color_space_conversion.h"
#include "operators/crop_mirror_normalize/crop_mirror_normalize.h"
#include "operators/image_common/affine.h"
#include "operators/transpose/transpose.h"
#include "tests/benchmarks/back_to_back.h"

namespace conveyor {
namespace {

using ops::AffineSample;
using ops::CastSample;
using ops::CmnSample;

constexpr int kBatch = 256;

size_t Align16(size_t b) { return (b + 15) / 16 * 16; }

// Median-free Google Benchmark loop: each iteration is one launch timed by events.
void TimeLoop(benchmark::State& state, cuda::StreamView stream, const std::function<void()>& launch, double min_bytes,
              size_t copy_bytes, Buffer& copy_src, Buffer& copy_dst) {
  cuda::Event start = cuda::Event::Create(true), stop = cuda::Event::Create(true);
  auto time = [&](const std::function<void()>& f, int reps) {
    start.Record(stream);
    for (int i = 0; i < reps; ++i) f();
    stop.Record(stream);
    stop.Synchronize();
    return cuda::Event::ElapsedMs(start, stop) / reps;
  };
  auto copy = [&] {
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(copy_dst.device_ptr(), copy_src.device_ptr(), copy_bytes,
                                        cudaMemcpyDeviceToDevice, stream.get()));
  };
  time(launch, 3);  // warm-up
  time(copy, 3);
  double kernel_ms = 0;
  for (auto _ : state) {
    const double ms = time(launch, 1);
    kernel_ms += ms;
    state.SetIterationTime(ms / 1e3);
  }
  kernel_ms /= static_cast<double>(state.iterations());
  double copy_ms = 0;
  for (int i = 0; i < 20; ++i) copy_ms += time(copy, 1) / 20;
  state.counters["kernel_ms"] = kernel_ms;
  state.counters["eff_GBps"] = min_bytes / (kernel_ms * 1e-3) / 1e9;
  state.counters["copy_ms"] = copy_ms;
  state.counters["copy_GBps"] = 2.0 * static_cast<double>(copy_bytes) / (copy_ms * 1e-3) / 1e9;
  state.counters["ratio_to_copy"] = copy_ms / kernel_ms;
  bench::ReportBackToBack(state, stream, launch, copy, min_bytes);
  state.SetLabel(cuda::DeviceName(cuda::CurrentDevice()));
}

struct Batch {
  Buffer in, out, copy_src, copy_dst, desc;
};

// Input samples of `in_bytes` each and outputs of `out_bytes` each, random input bytes.
Batch MakeBatch(size_t in_bytes, size_t out_bytes, size_t copy_bytes, cuda::StreamView stream) {
  Batch b;
  b.in = Buffer::Allocate(MemoryKind::kDevice, Align16(in_bytes) * kBatch, stream);
  b.out = Buffer::Allocate(MemoryKind::kDevice, Align16(out_bytes) * kBatch, stream);
  b.copy_src = Buffer::Allocate(MemoryKind::kDevice, copy_bytes, stream);
  b.copy_dst = Buffer::Allocate(MemoryKind::kDevice, copy_bytes, stream);
  std::vector<uint8_t> host(b.in.size());
  std::mt19937 rng(7);
  for (auto& x : host) x = static_cast<uint8_t>(rng());
  CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(b.in.device_ptr(), host.data(), host.size(), cudaMemcpyHostToDevice, stream.get()));
  CONVEYOR_CUDA_CHECK(cudaMemsetAsync(b.copy_src.device_ptr(), 1, copy_bytes, stream.get()));
  stream.Synchronize();
  return b;
}

template <typename T>
const T* Upload(Batch& b, const std::vector<T>& d, cuda::StreamView stream) {
  return bench::UploadTable(b.desc, d, stream);
}

// crop_mirror_normalize: 256 x (256, 256, 3) uint8 → (3, 224, 224) in `out_type`, every other
// sample mirrored, anchors varying.
void BM_CropMirrorNormalize(benchmark::State& state, DType out_type, bool chw) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  cuda::Stream stream = cuda::Stream::Create();
  const int H = 256, W = 256, C = 3, h = 224, w = 224;
  const size_t in_bytes = size_t{H} * W * C, out_elems = size_t{h} * w * C, out_bytes = out_elems * DTypeSize(out_type);
  const double min_bytes = static_cast<double>((size_t{h} * w * C + out_bytes) * kBatch);
  Batch b = MakeBatch(in_bytes, out_bytes, static_cast<size_t>(min_bytes / 2), stream.view());
  std::vector<CmnSample> d(kBatch);
  const float mean[3] = {123.675f, 116.28f, 103.53f}, stdv[3] = {58.395f, 57.12f, 57.375f};
  for (int i = 0; i < kBatch; ++i) {
    CmnSample& s = d[static_cast<size_t>(i)];
    s.in = static_cast<const char*>(b.in.device_ptr()) + Align16(in_bytes) * static_cast<size_t>(i);
    s.out = static_cast<char*>(b.out.device_ptr()) + Align16(out_bytes) * static_cast<size_t>(i);
    s.in_bytes = static_cast<int64_t>(in_bytes);
    s.in_row_stride = W * C;
    s.y0 = (i * 7) % (H - h + 1);
    s.x0 = (i * 13) % (W - w + 1);
    s.h = h;
    s.w = w;
    s.channels = C;
    s.out_channels = C;
    s.mirror = i % 2;
    for (int c = 0; c < C; ++c) {
      s.mul[c] = 1.f / stdv[c];
      s.add[c] = -mean[c] / stdv[c];
    }
  }
  const CmnSample* dev = Upload(b, d, stream.view());
  TimeLoop(state, stream.view(),
           [&] { ops::CropMirrorNormalizeGpu(dev, kBatch, static_cast<int64_t>(out_elems), out_type, DType::kUInt8, chw, stream.view()); },
           min_bytes, static_cast<size_t>(min_bytes / 2), b.copy_src, b.copy_dst);
}

// normalize / brightness_contrast (the shared affine kernel): 256 x 224x224x3, in → out dtype.
void BM_Affine(benchmark::State& state, DType in_type, DType out_type, int channels) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  cuda::Stream stream = cuda::Stream::Create();
  const size_t n = size_t{224} * 224 * 3;
  const size_t in_bytes = n * DTypeSize(in_type), out_bytes = n * DTypeSize(out_type);
  const double min_bytes = static_cast<double>((in_bytes + out_bytes) * kBatch);
  Batch b = MakeBatch(in_bytes, out_bytes, static_cast<size_t>(min_bytes / 2), stream.view());
  std::vector<AffineSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    AffineSample& s = d[static_cast<size_t>(i)];
    s.in = static_cast<const char*>(b.in.device_ptr()) + Align16(in_bytes) * static_cast<size_t>(i);
    s.out = static_cast<char*>(b.out.device_ptr()) + Align16(out_bytes) * static_cast<size_t>(i);
    s.count = static_cast<int64_t>(n);
    s.channels = channels;
    for (int c = 0; c < channels; ++c) {
      s.mul[c] = 0.017f;
      s.add[c] = -2.f;
    }
  }
  const AffineSample* dev = Upload(b, d, stream.view());
  TimeLoop(state, stream.view(),
           [&] { ops::AffineGpu(dev, kBatch, static_cast<int64_t>(n), out_type, in_type, stream.view()); }, min_bytes,
           static_cast<size_t>(min_bytes / 2), b.copy_src, b.copy_dst);
}

// cast: 256 x 224x224x3 elements.
void BM_Cast(benchmark::State& state, DType in_type, DType out_type) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  cuda::Stream stream = cuda::Stream::Create();
  const size_t n = size_t{224} * 224 * 3;
  const size_t in_bytes = n * DTypeSize(in_type), out_bytes = n * DTypeSize(out_type);
  const double min_bytes = static_cast<double>((in_bytes + out_bytes) * kBatch);
  Batch b = MakeBatch(in_bytes, out_bytes, static_cast<size_t>(min_bytes / 2), stream.view());
  std::vector<CastSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    d[static_cast<size_t>(i)] = {static_cast<const char*>(b.in.device_ptr()) + Align16(in_bytes) * static_cast<size_t>(i),
                                 static_cast<char*>(b.out.device_ptr()) + Align16(out_bytes) * static_cast<size_t>(i),
                                 static_cast<int64_t>(n)};
  }
  const CastSample* dev = Upload(b, d, stream.view());
  TimeLoop(state, stream.view(), [&] { ops::CastGpu(dev, kBatch, static_cast<int64_t>(n), out_type, in_type, stream.view()); },
           min_bytes, static_cast<size_t>(min_bytes / 2), b.copy_src, b.copy_dst);
}

// transpose: 256 x 224x224x3 HWC → CHW (or CHW → HWC: `perm` [1, 2, 0] on 3x224x224), any
// element type; every byte read once and written once.
void BM_Transpose(benchmark::State& state, DType type, bool to_chw) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  cuda::Stream stream = cuda::Stream::Create();
  const Shape shape = to_chw ? Shape{224, 224, 3} : Shape{3, 224, 224};
  const std::vector<int> perm = to_chw ? std::vector<int>{2, 0, 1} : std::vector<int>{1, 2, 0};
  const size_t n = static_cast<size_t>(shape.num_elements()), bytes = n * DTypeSize(type);
  const double min_bytes = static_cast<double>(2 * bytes * kBatch);
  Batch b = MakeBatch(bytes, bytes, bytes * kBatch, stream.view());
  std::vector<ops::TransposeSample> d(kBatch, ops::PlanTranspose(shape, perm));
  for (int i = 0; i < kBatch; ++i) {
    d[static_cast<size_t>(i)].in = static_cast<const char*>(b.in.device_ptr()) + Align16(bytes) * static_cast<size_t>(i);
    d[static_cast<size_t>(i)].out = static_cast<char*>(b.out.device_ptr()) + Align16(bytes) * static_cast<size_t>(i);
  }
  const ops::TransposeSample* dev = Upload(b, d, stream.view());
  TimeLoop(state, stream.view(),
           [&] { ops::TransposeGpu(dev, kBatch, static_cast<int64_t>(n), DTypeSize(type), stream.view()); }, min_bytes,
           bytes * kBatch, b.copy_src, b.copy_dst);
}

// color_space_conversion: 256 x 224x224 pixels, `from` → `to`, uint8 or float32 HWC.
void BM_ColorSpace(benchmark::State& state, ops::ColorSpace from, ops::ColorSpace to, DType type) {
  if (!cuda::HasCudaDevice()) return state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
  cuda::Stream stream = cuda::Stream::Create();
  const int cin = ops::ColorSpaceChannels(from), cout = ops::ColorSpaceChannels(to);
  const size_t pixels = size_t{224} * 224, in_bytes = pixels * static_cast<size_t>(cin) * DTypeSize(type),
               out_bytes = pixels * static_cast<size_t>(cout) * DTypeSize(type);
  const double min_bytes = static_cast<double>((in_bytes + out_bytes) * kBatch);
  Batch b = MakeBatch(in_bytes, out_bytes, static_cast<size_t>(min_bytes / 2), stream.view());
  std::vector<ops::CscSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    d[static_cast<size_t>(i)] = {static_cast<const char*>(b.in.device_ptr()) + Align16(in_bytes) * static_cast<size_t>(i),
                                 static_cast<char*>(b.out.device_ptr()) + Align16(out_bytes) * static_cast<size_t>(i),
                                 static_cast<int64_t>(pixels), ops::MakeCscMatrix(from, to)};
  }
  const ops::CscSample* dev = Upload(b, d, stream.view());
  TimeLoop(state, stream.view(),
           [&] { ops::CscGpu(dev, kBatch, static_cast<int64_t>(pixels), cin, cout, false, type, stream.view()); },
           min_bytes, static_cast<size_t>(min_bytes / 2), b.copy_src, b.copy_dst);
}

BENCHMARK_CAPTURE(BM_CropMirrorNormalize, u8_to_f16_chw, DType::kFloat16, true)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CropMirrorNormalize, u8_to_f32_chw, DType::kFloat32, true)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CropMirrorNormalize, u8_to_f16_hwc, DType::kFloat16, false)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CropMirrorNormalize, u8_to_u8_chw, DType::kUInt8, true)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Affine, normalize_u8_to_f32, DType::kUInt8, DType::kFloat32, 3)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Affine, normalize_u8_to_f16, DType::kUInt8, DType::kFloat16, 3)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Affine, brightness_contrast_u8, DType::kUInt8, DType::kUInt8, 1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Cast, u8_to_f16, DType::kUInt8, DType::kFloat16)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Cast, f32_to_f16, DType::kFloat32, DType::kFloat16)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Cast, u8_to_f32, DType::kUInt8, DType::kFloat32)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Transpose, u8_hwc_to_chw, DType::kUInt8, true)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Transpose, u8_chw_to_hwc, DType::kUInt8, false)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Transpose, f32_hwc_to_chw, DType::kFloat32, true)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ColorSpace, u8_rgb_to_ycbcr, ops::ColorSpace::kRGB, ops::ColorSpace::kYCbCr, DType::kUInt8)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ColorSpace, u8_rgb_to_gray, ops::ColorSpace::kRGB, ops::ColorSpace::kGray, DType::kUInt8)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ColorSpace, f32_ycbcr_to_rgb, ops::ColorSpace::kYCbCr, ops::ColorSpace::kRGB, DType::kFloat32)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
