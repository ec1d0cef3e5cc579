#include "operators/geometry/transform_op.h"

#include <cmath>

#include "core/error.h"
#include "operators/color/sample_checks.h"

namespace conveyor::ops {

OpSchema& AddTransformArgs(OpSchema& schema) {
  return schema.Output("matrix", "float32 [2, 3] per sample, row-major.")
      .Arg<std::vector<double>>("transform", std::vector<double>{},
                                "A matrix to compose with, 6 values ([2, 3] row-major), usually fed per sample "
                                "from another transforms.* node (`transform: $node`, DALI's optional input); [] "
                                "(default): none.",
                                PerSample::kAllowed)
      .Arg<bool>("reverse_order", false,
                 "false: this operator's transform is applied after `transform`; true: before it.")
      .Backends({Device::kCpu});
}

void StoreMatrix(const Affine2D& m, float* out) {
  for (size_t j = 0; j < 6; ++j) out[j] = static_cast<float>(m.m[j]);
}

TransformOp::TransformOp(const OpSpec& spec) : Operator(spec), reverse_order_(spec.Arg<bool>("reverse_order")) {}

std::string TransformOp::ArgWhere(const std::string& name) const {
  return spec().Describe() + ": argument \"" + name + "\"";
}

std::vector<double> TransformOp::Pair(const std::string& name, const std::vector<double>& values, int sample) const {
  if (values.size() != 2) {
    throw InvalidArgument(ArgWhere(name) + ": expected 2 values (x, y), got " + std::to_string(values.size()) +
                          AtSample(sample));
  }
  for (double v : values) {
    if (!std::isfinite(v)) ThrowSampleRange(spec(), name, v, sample, -INFINITY, INFINITY);
  }
  return values;
}

std::optional<std::vector<double>> TransformOp::OptionalPair(const std::string& name,
                                                             const std::vector<double>& values, int sample) const {
  if (values.empty()) return std::nullopt;
  return Pair(name, values, sample);
}

Affine2D TransformOp::AboutCenter(const Affine2D& m, const std::vector<double>& center, int sample) const {
  const auto c = OptionalPair("center", center, sample);
  return c ? m.About((*c)[0], (*c)[1]) : m;
}

OutputDescs TransformOp::Setup(const Workspace& ws) {
  const int n = ws.batch_size();
  matrices_ = Define(ws, n);
  const SampleArg<std::vector<double>> input(ws, "transform");
  const std::string where = ArgWhere("transform");
  for (int i = 0; i < n; ++i) {
    const std::vector<double>& values = input(i);
    if (values.empty() && !input.fed()) continue;
    const Affine2D other = MatrixFromValues(values, where, i);
    Affine2D& m = matrices_[static_cast<size_t>(i)];
    m = reverse_order_ ? other.After(m) : m.After(other);
  }
  return {{std::vector<Shape>(static_cast<size_t>(n), Shape{2, 3}), DType::kFloat32, {}}};
}

void TransformOp::RunCpu(Workspace& ws) {
  TensorListCPU& out = ws.OutputCpu(0);
  for (int i = 0; i < out.num_samples(); ++i) {
    StoreMatrix(matrices_[static_cast<size_t>(i)], static_cast<float*>(out.raw_sample(i)));
  }
}

}  // namespace conveyor::ops
