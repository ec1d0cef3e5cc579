// Kernels of issue 38's augmentation operators on 256 x 224x224x3 uint8 HWC images (the batch a
// training pipeline augments after random_resized_crop), each timed with CUDA events on our own
// stream beside a device-to-device cudaMemcpyAsync of the same minimal bytes: the image read once
// + the image written once (38.5 MB; the copy moves half of it, reading and writing it). Counters,
// named as pointwise_bench's and geometry_bench's: kernel_ms (median over iterations of one launch
// between two events), eff_GBps, copy_ms, copy_GBps, ratio_to_copy = copy time / kernel time
// (1.0 = at the copy roofline), and b2b_* (20 launches back to back, back_to_back.h).
//
// Every operator's GPU function is called as its operator calls it (one batched launch, per-sample
// descriptors in device memory); parameters vary per sample where the operator lets them. The
// policies (auto_augment image_net, rand_augment n=2 m=9, trivial_augment_wide) run their steps as
// PolicyOp::RunGpu does: 5 launches per step, ping-pong through a scratch batch; their minimal
// bytes are still one read and one write (what a single fused kernel would move).
// Peers on the same work: bench/augment_peers.py (torchvision v2, torch eager, torch.compile).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cuda/check.h"
#include "core/cuda/device.h"
#include "core/cuda/event.h"
#include "core/cuda/stream.h"
#include "core/memory/buffer.h"
#include "core/op/philox.h"
#include "operators/augment_policies/policy.h"
#include "operators/augment_policies/stage.h"
#include "operators/color/color.h"
#include "operators/color/histogram.h"
#include "operators/erase/erase.h"
#include "operators/erase/grid_mask.h"
#include "operators/filters/filter.h"
#include "operators/filters/gaussian_blur.h"
#include "operators/filters/sharpness.h"
#include "operators/geometry/affine_matrix.h"
#include "operators/geometry/jitter.h"
#include "operators/geometry/warp.h"
#include "operators/image_common/affine.h"
#include "operators/math/expr_compiler.h"
#include "operators/math/expr_parser.h"
#include "operators/math/math.h"
#include "operators/noise/noise.h"
#include "tests/benchmarks/back_to_back.h"

namespace conveyor {
namespace {

using ops::resample::Filter;

constexpr int kBatch = 256;
constexpr int kH = 224, kW = 224, kC = 3;
constexpr int64_t kPixels = int64_t{kH} * kW;
constexpr size_t kSampleBytes = static_cast<size_t>(kPixels) * kC;  // 150,528: every sample 16-byte aligned
constexpr double kMinBytes = 2.0 * static_cast<double>(kSampleBytes) * kBatch;
constexpr uint64_t kSeed = 1234;

// The batch every benchmark shares, made once per process (38.5 MB of random bytes take a while on
// the host); `descs` holds the current benchmark's descriptor arrays. Never destroyed: a static
// destructor would run after the CUDA runtime has unloaded.
struct Images {
  cuda::Stream stream = cuda::Stream::Create();
  Buffer in, out, scratch, copy_src, copy_dst;
  std::vector<Buffer> descs;

  Images() {
    const size_t bytes = kSampleBytes * kBatch;
    for (Buffer* b : {&in, &out, &scratch, &copy_src, &copy_dst}) {
      *b = Buffer::Allocate(MemoryKind::kDevice, bytes, stream.view());
    }
    std::vector<uint8_t> host(bytes);
    std::mt19937 rng(7);
    for (size_t i = 0; i < bytes; i += 4) {
      const uint32_t r = rng();
      for (size_t k = 0; k < 4 && i + k < bytes; ++k) host[i + k] = static_cast<uint8_t>(r >> (8 * k));
    }
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(in.device_ptr(), host.data(), bytes, cudaMemcpyHostToDevice, stream.view().get()));
    CONVEYOR_CUDA_CHECK(cudaMemsetAsync(copy_src.device_ptr(), 1, bytes, stream.view().get()));
    stream.Synchronize();
  }
  static uint8_t* At(const Buffer& b, int i) { return static_cast<uint8_t*>(b.device_ptr()) + kSampleBytes * static_cast<size_t>(i); }
  const uint8_t* In(int i) const { return At(in, i); }
  uint8_t* Out(int i) const { return At(out, i); }
  uint8_t* Scratch(int i) const { return At(scratch, i); }

  template <typename T>
  T* Upload(const std::vector<T>& d) {
    descs.emplace_back();
    return bench::UploadTable(descs.back(), d, stream.view());
  }
};

// nullptr (and the benchmark skipped with the reason) on a machine without a GPU.
Images* Shared(benchmark::State& state) {
  if (!cuda::HasCudaDevice()) {
    state.SkipWithError(("no CUDA device: " + cuda::NoDeviceReason()).c_str());
    return nullptr;
  }
  static Images* images = new Images();
  images->descs.clear();
  return images;
}

// The kernel beside a copy of the same bytes (back_to_back.h: TimeAgainstCopy).
void TimeLoop(benchmark::State& state, Images& im, const std::function<void()>& launch, double min_bytes = kMinBytes) {
  const cuda::StreamView stream = im.stream.view();
  const size_t copy_bytes = static_cast<size_t>(min_bytes / 2);
  auto copy = [&] {
    CONVEYOR_CUDA_CHECK(cudaMemcpyAsync(im.copy_dst.device_ptr(), im.copy_src.device_ptr(), copy_bytes,
                                        cudaMemcpyDeviceToDevice, stream.get()));
  };
  bench::TimeAgainstCopy(state, stream, launch, copy, copy_bytes, min_bytes);
}

// A per-sample value in [lo, hi], the same for every run.
float Spread(int i, float lo, float hi) { return lo + (hi - lo) * static_cast<float>((i * 37) % kBatch) / (kBatch - 1); }

// ---- geometry: warp_affine, rotate, jitter -------------------------------------------------------

enum class WarpKind { kShear, kRotate };

void BM_Warp(benchmark::State& state, WarpKind kind, Filter filter) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::WarpSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    ops::WarpSample& s = d[static_cast<size_t>(i)];
    s = ops::WarpSample{im->In(i), im->Out(i), kH, kW, kH, kW, kC, 1, {}, {}};
    // Output -> input maps: a shear about the centre (warp_affine) or rotate's keep_size map.
    const ops::Affine2D m = kind == WarpKind::kShear
                                ? ops::Affine2D::Shear(Spread(i, -0.3f, 0.3f), 0).About(kW / 2.0, kH / 2.0)
                                : ops::RotateOutputToInput(kH, kW, kH, kW, Spread(i, -30.f, 30.f));
    for (int k = 0; k < 6; ++k) s.m[k] = static_cast<float>(m.m[static_cast<size_t>(k)]);
    for (float& f : s.fill) f = 128.f;
  }
  const ops::WarpSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::WarpGpu(dev, kBatch, kPixels, filter, DType::kUInt8, DType::kUInt8, im->stream.view()); });
}

void BM_Jitter(benchmark::State& state) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::JitterSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    d[static_cast<size_t>(i)] = {im->In(i), im->Out(i), kH, kW, kC, 2, 1, static_cast<uint32_t>(i), kSeed, 0, 1};
  }
  const ops::JitterSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::JitterGpu(dev, kBatch, kPixels, DType::kUInt8, im->stream.view()); });
}

// ---- colour: hsv / hue / saturation / color_twist (one matrix kernel), grayscale, gamma, solarize,
// posterize; brightness / contrast (the affine kernel); equalize, auto_contrast (histograms) --------

enum class ColorKind { kHsv, kGrayscale, kGamma, kSolarize, kPosterize };

void BM_Color(benchmark::State& state, ColorKind kind) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  const bool matrix = kind == ColorKind::kHsv || kind == ColorKind::kGrayscale;
  std::vector<ops::ColorSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    ops::ColorSample& s = d[static_cast<size_t>(i)];
    s = ops::ColorSample{im->In(i), im->Out(i), matrix ? kPixels : kPixels * kC, ops::ColorMode::kMatrix, {}, {}, 0, 0, 0};
    double m[9];
    switch (kind) {
      case ColorKind::kHsv:
        ops::HsvMatrix(Spread(i, -30.f, 30.f), Spread(i, 0.5f, 1.5f), Spread(i, 0.8f, 1.2f), m);
        break;
      case ColorKind::kGrayscale:
        ops::GrayscaleMatrix(m);
        break;
      case ColorKind::kGamma:
        s.mode = ops::ColorMode::kGamma;
        s.p0 = Spread(i, 0.5f, 2.f), s.p1 = 1.f / 255.f, s.p2 = 255.f;
        break;
      case ColorKind::kSolarize:
        s.mode = ops::ColorMode::kSolarize;
        s.p0 = Spread(i, 0.f, 255.f), s.p1 = 255.f;
        break;
      case ColorKind::kPosterize:
        s.mode = ops::ColorMode::kPosterize;
        s.p0 = static_cast<float>((0xFF00u >> (1 + i % 8)) & 0xFFu);
        break;
    }
    if (matrix) {
      for (int k = 0; k < 9; ++k) s.m[k] = static_cast<float>(m[k]);
    }
  }
  const ops::ColorSample* dev = im->Upload(d);
  const int64_t hint = matrix ? kPixels : kPixels * kC;
  TimeLoop(state, *im, [&] { ops::ColorGpu(dev, kBatch, hint, DType::kUInt8, DType::kUInt8, im->stream.view()); });
}

// brightness and contrast (both on image_common's affine kernel, one factor and offset per sample).
void BM_BrightnessContrast(benchmark::State& state) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::AffineSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    ops::AffineSample& s = d[static_cast<size_t>(i)];
    s = ops::AffineSample{im->In(i), im->Out(i), kPixels * kC, 1, {}, {}};
    s.mul[0] = Spread(i, 0.5f, 1.5f);
    s.add[0] = 128.f * (1.f - s.mul[0]);
  }
  const ops::AffineSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::AffineGpu(dev, kBatch, kPixels * kC, DType::kUInt8, DType::kUInt8, im->stream.view()); });
}

void BM_Histogram(benchmark::State& state, ops::HistogramMode mode) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::HistogramSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) d[static_cast<size_t>(i)] = {im->In(i), im->Out(i), kPixels * kC, kC, mode};
  const ops::HistogramSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::HistogramGpu(dev, kBatch, im->stream.view()); });
}

// ---- filters: sharpness, gaussian_blur, filter ------------------------------------------------------

void BM_Sharpness(benchmark::State& state) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::SharpnessSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) d[static_cast<size_t>(i)] = {im->In(i), im->Out(i), kH, kW, kC, Spread(i, 0.1f, 1.9f), 255.f};
  const ops::SharpnessSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::SharpnessGpu(dev, kBatch, kPixels, DType::kUInt8, im->stream.view()); });
}

void BM_GaussianBlur(benchmark::State& state, double sigma) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::BlurSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    ops::BlurSample& s = d[static_cast<size_t>(i)];
    s.in = im->In(i), s.out = im->Out(i), s.height = kH, s.width = kW, s.channels = kC;
    s.radius = ops::GaussianWeights(sigma, 0, s.weights);
  }
  state.counters["radius"] = d[0].radius;
  const ops::BlurSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::GaussianBlurGpu(dev, kBatch, kPixels, DType::kUInt8, im->stream.view()); });
}

// filter: an extent x extent kernel (a sharpening centre tap over a box), reflect-101 border.
void BM_Filter(benchmark::State& state, int extent) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  const int taps = extent * extent;
  std::vector<float> weights(static_cast<size_t>(taps), -1.f / static_cast<float>(taps));
  weights[static_cast<size_t>(taps / 2)] += 2.f;
  std::vector<ops::FilterSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    d[static_cast<size_t>(i)] = {im->In(i), im->Out(i), kH, kW, kC, extent, extent, extent / 2, extent / 2, 0,
                                 ops::FilterBorder::kReflect101, 0.f};
  }
  const ops::FilterSample* dev = im->Upload(d);
  const float* w = im->Upload(weights);
  TimeLoop(state, *im, [&] { ops::FilterGpu(dev, w, kBatch, kPixels, DType::kUInt8, DType::kUInt8, im->stream.view()); });
}

// ---- noise, erase, grid_mask, math ------------------------------------------------------------------

void BM_Noise(benchmark::State& state, ops::NoiseMode mode) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  // salt_and_pepper draws per pixel (its default, per_channel false); the others per element.
  const bool per_pixel = mode == ops::NoiseMode::kSaltAndPepper;
  std::vector<ops::NoiseSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    ops::NoiseSample& s = d[static_cast<size_t>(i)];
    s = ops::NoiseSample{im->In(i), im->Out(i), per_pixel ? kPixels : kPixels * kC, per_pixel ? kC : 1,
                         static_cast<uint32_t>(i), mode, 0, 0, 255.f, 0.f};
    if (mode == ops::NoiseMode::kGaussian) s.a = 0.f, s.b = Spread(i, 5.f, 25.f);
    if (mode == ops::NoiseMode::kSaltAndPepper) s.a = Spread(i, 0.01f, 0.1f), s.b = 0.5f;
    if (mode == ops::NoiseMode::kShot) s.a = Spread(i, 1.f, 20.f);
  }
  const ops::NoiseSample* dev = im->Upload(d);
  const ops::NoiseKey* key = im->Upload(std::vector<ops::NoiseKey>{{kSeed, 1, 0}});
  const int64_t hint = per_pixel ? kPixels : kPixels * kC;
  TimeLoop(state, *im, [&] { ops::NoiseGpu(key, dev, kBatch, hint, DType::kUInt8, im->stream.view()); });
}

// erase: one region per sample of about a sixth of the image (recipe_train.yaml's random erasing).
void BM_Erase(benchmark::State& state) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::EraseSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    ops::EraseSample& s = d[static_cast<size_t>(i)];
    s = ops::EraseSample{im->In(i), im->Out(i), kH, kW, kC, kC, 1, 1, {}, {0, 0, 0, 0}};
    const int h = static_cast<int>(Spread(i, 48, 168)), w = 8400 / h, y = (i * 13) % (kH - h + 1), x = (i * 29) % (kW - w + 1);
    s.regions[0][0] = y, s.regions[0][1] = x, s.regions[0][2] = y + h, s.regions[0][3] = x + w;
  }
  const ops::EraseSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::EraseGpu(dev, kBatch, kPixels, DType::kUInt8, im->stream.view()); });
}

// grid_mask: DALI's defaults (ratio 0.5) with a tile of 56 px, turned by a per-sample angle.
void BM_GridMask(benchmark::State& state) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  std::vector<ops::GridMaskSample> d(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    const float angle = Spread(i, 0.f, 0.8f);
    d[static_cast<size_t>(i)] = {im->In(i), im->Out(i), kH, kW, kC, std::cos(angle), std::sin(angle),
                                 Spread(i, 0.f, 56.f), 0.f, 1.f / 56.f, 0.5f};
  }
  const ops::GridMaskSample* dev = im->Upload(d);
  TimeLoop(state, *im, [&] { ops::GridMaskGpu(dev, kBatch, kPixels, DType::kUInt8, im->stream.view()); });
}

// math: `clamp(x * s0 + 10, 0, 255)` on uint8 images, float32 inside, uint8 out; s0 per sample.
void BM_Math(benchmark::State& state) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  const ops::ExprTree tree = ops::ParseExpression("clamp(x * s0 + 10, 0, 255)");
  const ops::ExprBindings names{{"x"}, {"s0", "s1", "s2", "s3"}};
  ops::ResolveNames(tree, names);
  const ops::ExprProgram program = ops::CompileExpression(tree, names, {DType::kUInt8}, DType::kUInt8);
  std::vector<ops::MathSample> samples(kBatch);
  std::vector<ops::MathOperand> operands(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    const size_t u = static_cast<size_t>(i);
    ops::PlanBroadcast({Shape{kH, kW, kC}}, {"x"}, samples[u], &operands[u]);
    samples[u].out = im->Out(i);
    samples[u].scalars[0] = Spread(i, 0.5f, 1.5f);
    operands[u].data = im->In(i);
  }
  const ops::MathSample* dev_samples = im->Upload(samples);
  const ops::MathOperand* dev_operands = im->Upload(operands);
  TimeLoop(state, *im, [&] { ops::MathGpu(program, dev_samples, dev_operands, kBatch, kPixels * kC, im->stream.view()); });
}

// ---- policies ---------------------------------------------------------------------------------------

enum class PolicyKind { kAutoAugmentImageNet, kRandAugment, kTrivialAugmentWide };

// The draws of PolicyOp::Setup (one Philox stream per sample), the ping-pong of PrepareGpu (the
// last step writes the output) and the launches of RunGpu.
void BM_Policy(benchmark::State& state, PolicyKind kind) {
  Images* im = Shared(state);
  if (im == nullptr) return;
  namespace aug = ops::augment;
  const int steps = kind == PolicyKind::kTrivialAugmentWide ? 1 : 2;  // rand_augment: n
  std::vector<std::vector<aug::StepSample>> by_step(static_cast<size_t>(steps), std::vector<aug::StepSample>(kBatch));
  int applied = 0;  // operations other than identity, for the label
  for (int i = 0; i < kBatch; ++i) {
    Philox rng(kSeed, 1, 0, static_cast<uint32_t>(i));
    const aug::SampleOps drawn =
        kind == PolicyKind::kRandAugment ? aug::DrawRandAugment(rng, 2, 9, 31, kH, kW)
        : kind == PolicyKind::kTrivialAugmentWide ? aug::DrawTrivialAugmentWide(rng, 31, kH, kW)
                                                  : aug::DrawAutoAugment(rng, *aug::FindAutoAugmentPolicy("image_net"), kH, kW);
    const uint8_t* src = im->In(i);
    for (int k = 0; k < steps; ++k) {
      const aug::OpChoice choice = k < drawn.count ? drawn.ops[static_cast<size_t>(k)] : aug::OpChoice{};
      applied += choice.op != aug::AugOp::kIdentity;
      uint8_t* dst = (steps - 1 - k) % 2 == 0 ? im->Out(i) : im->Scratch(i);
      aug::StepSample s = aug::MakeStep(choice, kH, kW, 128.f);
      aug::SetStepAddresses(s, src, dst);
      by_step[static_cast<size_t>(k)][static_cast<size_t>(i)] = s;
      src = dst;
    }
  }
  std::vector<aug::StepArrays> arrays;
  for (const auto& step : by_step) {
    std::vector<aug::CenterSample> centers;
    std::vector<ops::ColorSample> colors;
    std::vector<ops::WarpSample> warps;
    std::vector<ops::SharpnessSample> sharpness;
    std::vector<ops::HistogramSample> histograms;
    for (const aug::StepSample& s : step) {
      centers.push_back(s.center), colors.push_back(s.color), warps.push_back(s.warp);
      sharpness.push_back(s.sharpness), histograms.push_back(s.histogram);
    }
    arrays.push_back({im->Upload(centers), im->Upload(colors), im->Upload(warps), im->Upload(sharpness),
                      im->Upload(histograms)});
  }
  state.counters["steps"] = steps;
  state.counters["ops_applied_per_sample"] = static_cast<double>(applied) / kBatch;
  // interp_type linear: DALI's auto_aug default (our operators default to nearest, torchvision's).
  TimeLoop(state, *im, [&] {
    for (const aug::StepArrays& a : arrays) aug::RunStepGpu(a, kBatch, kPixels, Filter::kLinear, im->stream.view());
  });
}

#define AUG_BENCH(...) BENCHMARK_CAPTURE(__VA_ARGS__)->UseManualTime()->Unit(benchmark::kMicrosecond)
// The same name pattern (function/case) for the benchmarks without arguments.
#define AUG_BENCH0(func, name) BENCHMARK(func)->Name(#func "/" #name)->UseManualTime()->Unit(benchmark::kMicrosecond)
AUG_BENCH(BM_Warp, warp_affine_shear_linear, WarpKind::kShear, Filter::kLinear);
AUG_BENCH(BM_Warp, rotate_linear_keep_size, WarpKind::kRotate, Filter::kLinear);
AUG_BENCH(BM_Warp, rotate_nearest_keep_size, WarpKind::kRotate, Filter::kNearest);
AUG_BENCH0(BM_Jitter, jitter_n2);
AUG_BENCH(BM_Color, hsv_hue_saturation_color_twist, ColorKind::kHsv);
AUG_BENCH(BM_Color, grayscale, ColorKind::kGrayscale);
AUG_BENCH(BM_Color, gamma, ColorKind::kGamma);
AUG_BENCH(BM_Color, solarize, ColorKind::kSolarize);
AUG_BENCH(BM_Color, posterize, ColorKind::kPosterize);
AUG_BENCH0(BM_BrightnessContrast, brightness_contrast);
AUG_BENCH(BM_Histogram, equalize, ops::HistogramMode::kEqualize);
AUG_BENCH(BM_Histogram, auto_contrast, ops::HistogramMode::kAutoContrast);
AUG_BENCH0(BM_Sharpness, sharpness);
AUG_BENCH(BM_GaussianBlur, gaussian_blur_sigma1, 1.0);
AUG_BENCH(BM_GaussianBlur, gaussian_blur_sigma3, 3.0);
AUG_BENCH(BM_Filter, filter_3x3, 3);
AUG_BENCH(BM_Filter, filter_7x7, 7);
AUG_BENCH(BM_Noise, noise_gaussian, ops::NoiseMode::kGaussian);
AUG_BENCH(BM_Noise, noise_salt_and_pepper, ops::NoiseMode::kSaltAndPepper);
AUG_BENCH(BM_Noise, noise_shot, ops::NoiseMode::kShot);
AUG_BENCH0(BM_Erase, erase_one_region);
AUG_BENCH0(BM_GridMask, grid_mask);
AUG_BENCH0(BM_Math, math_clamp_affine);
AUG_BENCH(BM_Policy, auto_augment_image_net, PolicyKind::kAutoAugmentImageNet);
AUG_BENCH(BM_Policy, rand_augment_n2_m9, PolicyKind::kRandAugment);
AUG_BENCH(BM_Policy, trivial_augment_wide, PolicyKind::kTrivialAugmentWide);

}  // namespace
}  // namespace conveyor

BENCHMARK_MAIN();
