#include "operators/augment_policies/policy_op.h"

#include <cmath>

#include "core/error.h"
#include "operators/color/sample_checks.h"
#include "operators/resample/image_input.h"
#include "operators/resample/resample.h"

namespace conveyor::ops::augment {
namespace {

// Step k of `steps` writes the output when an even number of steps follow it, else the scratch.
bool WritesOutput(int k, int steps) { return (steps - 1 - k) % 2 == 0; }

}  // namespace

OpSchema& AddPolicyArgs(OpSchema& schema) {
  return schema.Input("images", {"HWC"}, {DType::kUInt8})
      .Output("augmented")
      .Arg<float>("fill_value", 128.f,
                  "Value of pixels that a geometric operation (shear, translate, rotate) maps from outside the image "
                  "(DALI's default 128).")
      .Range(0, 255)
      .Arg<std::string>("interp_type", "nearest",
                        "Interpolation of the geometric operations: nearest (torchvision's default), linear or cubic; "
                        "DALI's INTERP_* names are accepted.")
      .Choices(InterpTypeNames())
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
}

PolicyOp::PolicyOp(const OpSpec& spec, int steps)
    : Operator(spec),
      steps_(steps),
      fill_(spec.Arg<float>("fill_value")),
      filter_(ParseInterpType(spec.Arg<std::string>("interp_type"))) {}

void PolicyOp::ThrowArg(const std::string& name, const std::string& expected, const std::string& got) const {
  throw InvalidArgument(spec().Describe() + ": argument \"" + name + "\": expected " + expected + ", got " + got);
}

OutputDescs PolicyOp::Setup(const Workspace& ws) {
  CheckImageInput(ws, 0, {"HWC"}, {DType::kUInt8}, 3);
  const TensorListDesc in = ws.InputDesc(0);
  const size_t n = in.shapes.size();
  samples_.assign(static_cast<size_t>(steps_) * n, StepSample{});
  for (size_t i = 0; i < n; ++i) {
    const Shape& shape = in.shapes[i];
    if (shape[2] != 3) {
      throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + " has " +
                            std::to_string(shape[2]) + " channels, expected 3 (RGB)");
    }
    if (shape[0] > kMaxWarpInputSide || shape[1] > kMaxWarpInputSide) {
      throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + ": expected sides of at most " +
                            std::to_string(kMaxWarpInputSide) + ", got shape " + shape.ToString());
    }
    const int64_t h = shape[0], w = shape[1];
    Philox rng = ws.Rng(static_cast<int>(i));
    const SampleOps ops = Draw(rng, h, w);
    for (int k = 0; k < steps_; ++k) {
      const OpChoice choice = k < ops.count ? ops.ops[static_cast<size_t>(k)] : OpChoice{};
      samples_[static_cast<size_t>(k) * n + i] = h * w == 0 ? MakeStep(OpChoice{}, 0, 0, fill_) : MakeStep(choice, h, w, fill_);
    }
  }
  return {in};
}

void PolicyOp::RunCpu(Workspace& ws) {
  const TensorListCPU& in = ws.InputCpu(0);
  TensorListCPU& out = ws.OutputCpu(0);
  const size_t n = static_cast<size_t>(in.num_samples());
  ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
    std::vector<uint8_t> scratch;
    for (int64_t i = begin; i < end; ++i) {
      const int si = static_cast<int>(i);
      scratch.resize(static_cast<size_t>(in.shape(si).num_elements()));
      const auto* src = static_cast<const uint8_t*>(in.raw_sample(si));
      for (int k = 0; k < steps_; ++k) {
        uint8_t* dst = WritesOutput(k, steps_) ? static_cast<uint8_t*>(out.raw_sample(si)) : scratch.data();
        StepSample s = samples_[static_cast<size_t>(k) * n + static_cast<size_t>(i)];
        SetStepAddresses(s, src, dst);
        RunStepCpu(s, filter_);
        src = dst;
      }
    }
  });
}

void PolicyOp::PrepareGpu(Workspace& ws) {
  const TensorListGPU& in = ws.InputGpu(0);
  TensorListGPU& out = ws.OutputGpu(0);
  const size_t n = static_cast<size_t>(out.num_samples());
  const size_t count = static_cast<size_t>(steps_) * n;
  if (scratch_.size() <= static_cast<size_t>(ws.slot())) scratch_.resize(static_cast<size_t>(ws.slot()) + 1);
  Buffer& scratch = scratch_[static_cast<size_t>(ws.slot())];
  if (steps_ > 1 && (scratch.empty() || scratch.size() < out.buffer().size())) {
    scratch = Buffer::Allocate(MemoryKind::kDevice, out.buffer().size(), ws.stream());
  }
  CenterSample* centers = WriteArray(centers_, ws, count);
  ColorSample* colors = WriteArray(colors_, ws, count);
  WarpSample* warps = WriteArray(warps_, ws, count);
  SharpnessSample* sharpness = WriteArray(sharpness_, ws, count);
  HistogramSample* histograms = WriteArray(histograms_, ws, count);
  auto* out_base = static_cast<uint8_t*>(out.buffer().device_ptr());
  for (size_t i = 0; i < n; ++i) {
    const int si = static_cast<int>(i);
    auto* dst_out = static_cast<uint8_t*>(out.raw_sample(si));
    uint8_t* dst_scratch = steps_ > 1 ? static_cast<uint8_t*>(scratch.device_ptr()) + (dst_out - out_base) : nullptr;
    const auto* src = static_cast<const uint8_t*>(in.raw_sample(si));
    for (int k = 0; k < steps_; ++k) {
      uint8_t* dst = WritesOutput(k, steps_) ? dst_out : dst_scratch;
      const size_t j = static_cast<size_t>(k) * n + i;
      StepSample s = samples_[j];
      SetStepAddresses(s, src, dst);
      centers[j] = s.center;
      colors[j] = s.color;
      warps[j] = s.warp;
      sharpness[j] = s.sharpness;
      histograms[j] = s.histogram;
      src = dst;
    }
  }
}

void PolicyOp::RunGpu(Workspace& ws) {
  TensorListGPU& out = ws.OutputGpu(0);
  const int n = out.num_samples();
  // Uploaded every iteration, in Write's order (docs/executor.md).
  const CenterSample* centers = centers_.Upload(ws.slot(), ws.stream());
  // The centre kernel writes the colour descriptors' offsets in device memory (re-uploaded each time).
  auto* colors = colors_.UploadMutable(ws.slot(), ws.stream());
  const WarpSample* warps = warps_.Upload(ws.slot(), ws.stream());
  const SharpnessSample* sharpness = sharpness_.Upload(ws.slot(), ws.stream());
  const HistogramSample* histograms = histograms_.Upload(ws.slot(), ws.stream());
  if (n == 0) return;
  const int64_t hint = static_cast<int64_t>(out.buffer().size()) / 3 / n;  // pixels per sample, from capacity
  for (int k = 0; k < steps_; ++k) {
    const size_t at = static_cast<size_t>(k) * static_cast<size_t>(n);
    RunStepGpu(StepArrays{centers + at, colors + at, warps + at, sharpness + at, histograms + at}, n, hint, filter_,
               ws.stream());
  }
}

}  // namespace conveyor::ops::augment
