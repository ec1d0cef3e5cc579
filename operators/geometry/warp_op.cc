#include "operators/geometry/warp_op.h"

#include <cmath>

#include "core/error.h"
#include "operators/color/sample_checks.h"
#include "operators/image_common/image_args.h"
#include "operators/resample/image_input.h"
#include "operators/resample/resample.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat32};

}  // namespace

OpSchema& AddWarpArgs(OpSchema& schema) {
  return schema
      .Arg<std::vector<double>>("fill_value", std::vector<double>{},
                                "Value of output pixels that map outside the input: one value, or one per channel. "
                                "[] (default): the input's edge pixels are repeated (DALI's default).",
                                PerSample::kAllowed)
      .Arg<std::string>("interp_type", "linear",
                        "nearest, linear or cubic (Keys a = -0.5); DALI's INTERP_NN / INTERP_LINEAR / INTERP_CUBIC "
                        "are accepted.")
      .Choices(InterpTypeNames())
      .Arg<std::string>("dtype", "same", "Output dtype: same (as the input), uint8 or float32.")
      .Choices({"same", "uint8", "float32"})
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
}

WarpOp::WarpOp(const OpSpec& spec)
    : Operator(spec),
      filter_(ParseInterpType(spec.Arg<std::string>("interp_type"))),
      dtype_(spec.Arg<std::string>("dtype")) {}

std::optional<std::pair<int64_t, int64_t>> WarpOp::SizeArg(const std::string& name, const std::vector<double>& values,
                                                          int sample) const {
  if (values.empty()) return std::nullopt;
  if (values.size() != 2) {
    throw InvalidArgument(spec().Describe() + ": argument \"" + name + "\": expected [] or 2 values [h, w], got " +
                          std::to_string(values.size()) + AtSample(sample));
  }
  int64_t side[2];
  for (int k = 0; k < 2; ++k) {
    const double v = values[static_cast<size_t>(k)];
    if (!(v >= 0 && v <= static_cast<double>(kMaxWarpSide))) {
      throw InvalidArgument(spec().Describe() + ": argument \"" + name + "\": expected sides in [0, " +
                            std::to_string(kMaxWarpSide) + "], got " + FormatArgNumber(v) + " for " +
                            (k == 0 ? "h" : "w") + AtSample(sample));
    }
    side[k] = static_cast<int64_t>(std::nearbyint(v));
  }
  return std::make_pair(side[0], side[1]);
}

void WarpOp::FillValues(const std::vector<double>& values, int sample, WarpSample& s) const {
  s.use_fill = values.empty() ? 0 : 1;
  if (values.empty()) return;
  const std::vector<float> fill = PerChannel(spec(), "fill_value", values, s.channels, sample);
  for (size_t c = 0; c < fill.size(); ++c) {
    if (!std::isfinite(fill[c])) {
      throw InvalidArgument(spec().Describe() + ": argument \"fill_value\": expected finite values, got " +
                            FormatArgNumber(fill[c]) + " for channel " + std::to_string(c) + AtSample(sample));
    }
    s.fill[c] = fill[c];
  }
}

OutputDescs WarpOp::Setup(const Workspace& ws) {
  CheckImageInput(ws, 0, {"HWC"}, kTypes, kMaxWarpChannels);
  const TensorListDesc in = ws.InputDesc(0);
  const DType out_dtype = dtype_ == "uint8" ? DType::kUInt8 : dtype_ == "float32" ? DType::kFloat32 : in.dtype;
  std::vector<Shape> shapes;
  std::vector<int> indices;
  for (size_t i = 0; i < in.shapes.size(); ++i) {
    const Shape& s = in.shapes[i];
    if (s[0] > kMaxWarpInputSide || s[1] > kMaxWarpInputSide) {
      throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + ": expected sides of at most " +
                            std::to_string(kMaxWarpInputSide) + ", got shape " + s.ToString());
    }
    if (s.num_elements() == 0) continue;
    shapes.push_back(s);
    indices.push_back(static_cast<int>(i));
  }
  const std::vector<Geometry> geometry = Geometries(ws, shapes, indices);
  samples_.assign(in.shapes.size(), WarpSample{});
  OutputDesc out{{}, out_dtype, "HWC"};
  for (size_t i = 0; i < in.shapes.size(); ++i) out.shapes.push_back(Shape{0, 0, in.shapes[i][2]});
  const SampleArg<std::vector<double>> fill(ws, "fill_value");
  for (size_t k = 0; k < shapes.size(); ++k) {
    const int i = indices[k];
    const Geometry& g = geometry[k];
    WarpSample& s = samples_[static_cast<size_t>(i)];
    s.in_h = static_cast<int32_t>(shapes[k][0]);
    s.in_w = static_cast<int32_t>(shapes[k][1]);
    s.out_h = static_cast<int32_t>(g.out_h);
    s.out_w = static_cast<int32_t>(g.out_w);
    s.channels = static_cast<int32_t>(shapes[k][2]);
    for (int j = 0; j < 6; ++j) s.m[j] = static_cast<float>(g.out_to_in.m[static_cast<size_t>(j)]);
    FillValues(fill(i), i, s);
    out.shapes[static_cast<size_t>(i)] = Shape{g.out_h, g.out_w, shapes[k][2]};
  }
  return {out};
}

void WarpOp::RunCpu(Workspace& ws) {
  const TensorListCPU& in = ws.InputCpu(0);
  TensorListCPU& out = ws.OutputCpu(0);
  ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      WarpSample s = samples_[static_cast<size_t>(i)];
      s.in = in.raw_sample(static_cast<int>(i));
      s.out = out.raw_sample(static_cast<int>(i));
      WarpCpu(s, filter_, in.dtype(), out.dtype());
    }
  });
}

void WarpOp::PrepareGpu(Workspace& ws) {
  const TensorListGPU& in = ws.InputGpu(0);
  TensorListGPU& out = ws.OutputGpu(0);
  WarpSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
  for (int i = 0; i < out.num_samples(); ++i) {
    d[i] = samples_[static_cast<size_t>(i)];
    d[i].in = in.raw_sample(i);
    d[i].out = out.raw_sample(i);
  }
}

void WarpOp::RunGpu(Workspace& ws) {
  const TensorListGPU& in = ws.InputGpu(0);
  TensorListGPU& out = ws.OutputGpu(0);
  const WarpSample* descs = descs_.Upload(ws.slot(), ws.stream());  // every iteration, as Write (docs/executor.md)
  const int n = out.num_samples();
  if (n == 0) return;
  const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(out.dtype())) / n;
  WarpGpu(descs, n, hint, filter_, in.dtype(), out.dtype(), ws.stream());
}

}  // namespace conveyor::ops
