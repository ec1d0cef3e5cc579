// coord_transform: an affine map of points, out = M p + T per sample (DALI's coord_transform):
// box corners or polygon vertices moved the way a warp moves their image.
//
// | input  | dtype   | shape per sample  | output                                  |
// |--------|---------|-------------------|-----------------------------------------|
// | input  | float32 | [N, D], D >= 1    | float32 [N, out_dims]; out_dims = rows  |
// |        |         |                   | of M (D when M is [] or a scalar)       |
//
// Pure arithmetic: nothing is clipped (points may be in pixels); a NaN coordinate gives NaN in the
// outputs whose row of M uses it (zero entries of M are skipped).

#include "core/error.h"
#include "core/op/registry.h"
#include "operators/detection/box_transforms.h"

namespace conveyor::ops {
namespace {

const OpSchema kCoordTransformSchema =
    OpSchema("coord_transform")
        .Doc(
            "Applies an affine map to points: out = M p + T for each point p (a row of an [N, D] sample). M, T or MT "
            "may be given per sample. Nothing is clipped (docs/operators_detection.md).")
        .Input("input", {}, {DType::kFloat32}, Placement::kOpDevice, "[N, D] points per sample.")
        .Output("output", "[N, out_dims] points per sample, out_dims = the rows of M.")
        .Arg<std::vector<double>>("M", std::vector<double>{},
                                  "[] (identity), [s] (s times identity) or out_dims x D values, row-major.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("T", std::vector<double>{},
                                  "[] (zero), [t] (t added to every coordinate) or out_dims values.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("MT", std::vector<double>{},
                                  "[] or out_dims x (D + 1) values: each row of M followed by its entry of T; "
                                  "exclusive with M and T.",
                                  PerSample::kAllowed)
        .Backends({Device::kCpu});

class CoordTransformOp final : public Operator {
 public:
  using Operator::Operator;

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc in = ws.InputDesc(0);
    const std::string where = ws.spec().Describe();
    if (in.dtype != DType::kFloat32) {
      throw InvalidArgument(where + ": input 0 (\"input\"): expected dtype float32, got " +
                            std::string(DTypeName(in.dtype)));
    }
    const SampleArg<std::vector<double>> m(ws, "M"), t(ws, "T"), mt(ws, "MT");
    maps_.clear();
    OutputDesc out{{}, DType::kFloat32, {}};
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const Shape& s = in.shapes[i];
      const std::string sample = where + ", sample " + std::to_string(i);
      if (s.ndim() != 2 || s[1] < 1) {
        throw InvalidArgument(where + ": input 0 (\"input\"), sample " + std::to_string(i) +
                              ": expected a [N, D] tensor of points with D >= 1, got shape " + s.ToString());
      }
      const int sample_index = static_cast<int>(i);
      maps_.push_back(
          MakeAffineMap(m(sample_index), t(sample_index), mt(sample_index), static_cast<int>(s[1]), sample));
      out.shapes.push_back(Shape{s[0], maps_.back().out_dims});
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        TransformPoints(static_cast<const float*>(in.raw_sample(s)), in.shape(s)[0], maps_[static_cast<size_t>(i)],
                        static_cast<float*>(out.raw_sample(s)));
      }
    });
  }

 private:
  std::vector<AffineMap> maps_;  // this iteration's, one per sample, from Setup
};

const OperatorRegistration<CoordTransformOp> kRegistration(kCoordTransformSchema);

}  // namespace
}  // namespace conveyor::ops
