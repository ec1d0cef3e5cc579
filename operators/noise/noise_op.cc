// noise.gaussian, noise.salt_and_pepper and noise.shot (DALI's names and arguments; noise.h for
// the rules).
//
// | input                               | output      | per sample                                 |
// |-------------------------------------|-------------|--------------------------------------------|
// | any layout (HWC: C for per_channel),| the input's | gaussian: mean, stddev ≥ 0;                |
// | uint8, float16, bfloat16, float32   | dtype       | salt_and_pepper: prob, salt_vs_pepper;     |
// |                                     |             | shot: factor > 0                           |
//
// Draws are keyed by (seed, node, iteration, sample): a run is reproducible and the same on CPU
// and GPU (noise.h states the tolerance). GPU: PrepareGpu writes the key and descriptors, RunGpu
// launches one kernel per batch: capturable, a replay draws afresh from the new iteration's key.
#include <limits>
#include <optional>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/color/sample_checks.h"
#include "operators/image_common/image_args.h"
#include "operators/noise/noise.h"

namespace conveyor::ops {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kGaussianSchema =
    OpSchema("noise.gaussian")
        .Doc("Adds normally distributed noise: out = in + mean + stddev * z (z from the counter-based RNG).")
        .Input("input", {}, kTypes)
        .Output("output")
        .Arg<float>("mean", 0.0f, "Mean of the noise.", PerSample::kAllowed)
        .Arg<float>("stddev", 1.0f, "Standard deviation of the noise (≥ 0), in the input's units.", PerSample::kAllowed)
        .Min(0)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const OpSchema kSaltAndPepperSchema =
    OpSchema("noise.salt_and_pepper")
        .Doc("Replaces values with salt_val or pepper_val with probability prob.")
        .Input("input", {}, kTypes)
        .Output("output")
        .Arg<float>("prob", 0.05f, "Probability that a value (or pixel) is replaced.", PerSample::kAllowed)
        .Range(0, 1)
        .Arg<float>("salt_vs_pepper", 0.5f, "Probability that a replaced value is salt.", PerSample::kAllowed)
        .Range(0, 1)
        .Arg<float>("salt_val", -1e30f, "Salt value; default: 255 for uint8, 1 for floats.", PerSample::kAllowed)
        .Arg<float>("pepper_val", -1e30f, "Pepper value; default: 0 for uint8, -1 for floats.", PerSample::kAllowed)
        .Arg<bool>("per_channel", false,
                   "Draw per value; false (default): one draw per pixel of an HWC image, all its channels alike.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const OpSchema kShotSchema =
    OpSchema("noise.shot")
        .Doc("Shot (Poisson) noise: out = factor * Poisson(max(in, 0) / factor).")
        .Input("input", {}, kTypes)
        .Output("output")
        .Arg<float>("factor", 20.0f, "Scale of one photon count, in the input's units (> 0).", PerSample::kAllowed)
        .Min(0)
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

template <NoiseMode kMode>
class NoiseOp final : public Operator {
 public:
  explicit NoiseOp(const OpSpec& spec)
      : Operator(spec), per_channel_(kMode != NoiseMode::kSaltAndPepper || spec.Arg<bool>("per_channel")) {}

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& d = ws.InputDesc(0);
    CheckInput(spec(), d, 0, {}, kTypes);
    const bool pixels = !per_channel_ && d.layout == "HWC";
    samples_.assign(d.shapes.size(), NoiseSample{});
    constexpr bool kGauss = kMode == NoiseMode::kGaussian;
    // Argument names by mode: (mean, stddev) or (prob, salt_vs_pepper), then salt_val, pepper_val.
    constexpr bool kShot = kMode == NoiseMode::kShot;
    const CheckedSampleArg a(ws, kShot ? "factor" : kGauss ? "mean" : "prob", kGauss ? -kInf : 0,
                             kGauss || kShot ? kInf : 1);
    std::optional<CheckedSampleArg> b;
    if constexpr (!kShot) b.emplace(ws, kGauss ? "stddev" : "salt_vs_pepper", 0, kGauss ? kInf : 1);
    std::optional<SampleArg<float>> salt, pepper;
    if constexpr (!kGauss && !kShot) {
      salt.emplace(ws, "salt_val");
      pepper.emplace(ws, "pepper_val");
    }
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      NoiseSample& s = samples_[i];
      s.mode = kMode;
      s.sample = static_cast<uint32_t>(si);
      s.channels = pixels && d.shapes[i].ndim() == 3 ? static_cast<int32_t>(d.shapes[i][2]) : 1;
      s.units = s.channels > 0 ? d.shapes[i].num_elements() / s.channels : 0;
      s.a = a(si);
      if constexpr (!kShot) s.b = (*b)(si);
      if (kShot && s.a == 0) {
        throw InvalidArgument(spec().Describe() + ": argument \"factor\": expected a value > 0, got 0 at sample " +
                              std::to_string(si));
      }
      if constexpr (!kGauss && !kShot) {
        const bool u8 = d.dtype == DType::kUInt8;
        s.salt = (*salt)(si);
        s.pepper = (*pepper)(si);
        if (s.salt <= -1e30f) s.salt = u8 ? 255.f : 1.f;
        if (s.pepper <= -1e30f) s.pepper = u8 ? 0.f : -1.f;
      }
    }
    return {d};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    const NoiseKey key = Key(ws);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        NoiseSample s = samples_[static_cast<size_t>(i)];
        s.in = in.raw_sample(static_cast<int>(i));
        s.out = out.raw_sample(static_cast<int>(i));
        NoiseCpu(s, key, in.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    *keys_.Write(ws.slot(), 1, ws.stream()) = Key(ws);
    NoiseSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = samples_[static_cast<size_t>(i)];
      d[i].in = in.raw_sample(i);
      d[i].out = out.raw_sample(i);
    }
  }

  void RunGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    const NoiseKey* key = keys_.Upload(ws.slot(), ws.stream());
    const NoiseSample* samples = descs_.Upload(ws.slot(), ws.stream());
    const int n = out.num_samples();
    if (n == 0) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(in.dtype())) / n;
    NoiseGpu(key, samples, n, hint, in.dtype(), ws.stream());
  }

 private:
  static NoiseKey Key(const Workspace& ws) { return {ws.seed(), ws.node_id(), static_cast<uint64_t>(ws.iteration())}; }

  bool per_channel_;
  std::vector<NoiseSample> samples_;
  SlotDescriptors<NoiseKey> keys_;
  SlotDescriptors<NoiseSample> descs_;
};

const OperatorRegistration<NoiseOp<NoiseMode::kGaussian>> kGaussianRegistration(kGaussianSchema);
const OperatorRegistration<NoiseOp<NoiseMode::kSaltAndPepper>> kSaltAndPepperRegistration(kSaltAndPepperSchema);
const OperatorRegistration<NoiseOp<NoiseMode::kShot>> kShotRegistration(kShotSchema);

}  // namespace
}  // namespace conveyor::ops
