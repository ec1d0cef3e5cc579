// normalize: out = (in - mean) / std * scale + shift, mean and std given per channel (the last
// axis) or as one scalar. Unlike DALI's `normalize`, which can compute mean and std from the data
// over `axes`, ours requires them (the common use: dataset statistics).
//
// | input                           | output (`dtype`)                   | per sample       |
// |---------------------------------|------------------------------------|------------------|
// | any layout, uint8, float16,     | float32 (default), float16,        | mean, std        |
// | bfloat16, float32; last axis =  | bfloat16, uint8 (clamped, RNE)     |                  |
// | channels (≤ 16 when per channel)|                                    |                  |
//
// Computed as fmaf(in, scale / std, shift - mean * scale / std) with the factors in float on the
// host (image_common/affine.h): CPU and GPU bit-identical. GPU: one launch per batch, capturable.
#include "core/op/registry.h"
#include "operators/image_common/affine_op.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat16, DType::kBFloat16, DType::kFloat32};

const OpSchema kNormalizeSchema =
    OpSchema("normalize")
        .Doc("out = (in - mean) / std * scale + shift per channel (last axis) or with scalars; mean and std are "
             "required (not computed from the data).")
        .Input("input", {}, kTypes)
        .Output("output")
        .Arg<std::vector<double>>("mean", std::vector<double>{0.0}, "One value or one per channel (last axis).",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("std", std::vector<double>{1.0}, "One value or one per channel; nonzero.",
                                  PerSample::kAllowed)
        .Arg<float>("scale", 1.0f, "Multiplies the normalized value.")
        .Arg<float>("shift", 0.0f, "Added after scaling.")
        .Arg<DType>("dtype", DType::kFloat32, "Output dtype: float32, float16, bfloat16 or uint8.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class NormalizeOp final : public AffineOp {
 public:
  explicit NormalizeOp(const OpSpec& spec)
      : AffineOp(spec), scale_(spec.Arg<float>("scale")), shift_(spec.Arg<float>("shift")), dtype_(spec.Arg<DType>("dtype")) {
    bool ok = false;
    for (DType t : kTypes) ok = ok || t == dtype_;
    if (!ok) {
      throw InvalidArgument(spec.Describe() + ": argument \"dtype\": expected " + DTypeList(kTypes) + ", got " +
                            std::string(DTypeName(dtype_)));
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    CheckInput(spec(), d, 0, {}, kTypes);
    samples_.assign(d.shapes.size(), AffineSample{});
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const int si = static_cast<int>(i);
      const std::vector<double> mean = ws.ArgForSample<std::vector<double>>("mean", si);
      const std::vector<double> std = ws.ArgForSample<std::vector<double>>("std", si);
      const Shape& shape = d.shapes[i];
      int64_t channels = 1;
      if (mean.size() > 1 || std.size() > 1) {
        channels = shape.ndim() > 0 ? shape[shape.ndim() - 1] : 1;
        if (channels > kMaxAffineChannels) {
          throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + " has " +
                                std::to_string(channels) + " channels (last axis of " + shape.ToString() +
                                "); per-channel mean/std support at most " + std::to_string(kMaxAffineChannels));
        }
      }
      AffineSample& a = samples_[i];
      a.count = shape.num_elements();
      a.channels = static_cast<int32_t>(channels);
      NormalizeFactors(spec(), mean, std, channels, si, scale_, shift_, a.mul, a.add);
    }
    d.dtype = dtype_;
    out_type_ = dtype_;
    return {d};
  }

 private:
  float scale_, shift_;
  DType dtype_;
};

const OperatorRegistration<NormalizeOp> kRegistration(kNormalizeSchema);

}  // namespace
}  // namespace conveyor::ops
