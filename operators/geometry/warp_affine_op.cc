// warp_affine: DALI's operator for HWC images — an affine map per sample (warp.h for the sampling).
//
// | input                         | output                        | per sample                        |
// |-------------------------------|-------------------------------|-----------------------------------|
// | HWC, 1..8 channels; uint8 or  | (size or the input's h, w, C);| matrix (6 values: [2, 3] or [6]), |
// | float32                       | dtype `dtype` (default: same) | size, fill_value                  |
//
// inverse_map true (DALI's default): the matrix maps output coordinates to input coordinates;
// false: input to output, inverted per sample (in double) before use. Transforms made by the
// transforms.* operators feed `matrix: $node` (the [2, 3] per sample DALI takes as a second input).
// CPU and GPU bit-identical; GPU one launch per batch, capturable.
#include "core/op/registry.h"
#include "operators/geometry/warp_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kSchema = AddWarpArgs(
    OpSchema("warp_affine")
        .Doc("Applies an affine map to HWC images (uint8 or float32): output pixel (x, y) takes the input at "
             "M (x + 0.5, y + 0.5, 1), pixel centres, interpolated; M maps output to input unless inverse_map is "
             "false (docs/operators_geometry.md).")
        .Input("images", {"HWC"}, {DType::kUInt8, DType::kFloat32})
        .Output("warped")
        .RequiredArg<std::vector<double>>(
            "matrix",
            "The [2, 3] matrix, row-major: 6 values (x' = m0 x + m1 y + m2, y' = m3 x + m4 y + m5). Per sample "
            "from a transforms.* node (`matrix: $node`, a [2, 3] or [6] float tensor per sample).",
            PerSample::kAllowed)
        .Arg<bool>("inverse_map", true,
                   "True: the matrix maps output coordinates to input coordinates (DALI's default); false: input "
                   "to output (inverted per sample).")
        .Arg<std::vector<double>>("size", std::vector<double>{},
                                  "Output [h, w] (rounded); [] (default): the input's size.", PerSample::kAllowed)
        .Min(0));

class WarpAffineOp final : public WarpOp {
 public:
  explicit WarpAffineOp(const OpSpec& spec) : WarpOp(spec), inverse_map_(spec.Arg<bool>("inverse_map")) {}

 private:
  std::vector<Geometry> Geometries(const Workspace& ws, const std::vector<Shape>& shapes,
                                   const std::vector<int>& samples) const override {
    const SampleArg<std::vector<double>> matrix(ws, "matrix"), size(ws, "size");
    const std::string where = spec().Describe() + ": argument \"matrix\"";
    std::vector<Geometry> out;
    out.reserve(shapes.size());
    for (size_t k = 0; k < shapes.size(); ++k) {
      const int i = samples[k];
      Geometry g;
      const auto wanted = SizeArg("size", size(i), i);
      g.out_h = wanted ? wanted->first : shapes[k][0];
      g.out_w = wanted ? wanted->second : shapes[k][1];
      g.out_to_in = Matrix(matrix(i), where, i);
      out.push_back(g);
    }
    return out;
  }

  Affine2D Matrix(const std::vector<double>& v, const std::string& where, int sample) const {
    const Affine2D m = MatrixFromValues(v, where, sample);
    if (inverse_map_) return m;
    Affine2D inverse;
    if (!m.Invert(&inverse)) {
      throw InvalidArgument(where + ": expected an invertible matrix (inverse_map: "
                            "false maps input to output), got " + m.ToString() + AtSample(sample));
    }
    return inverse;
  }

  bool inverse_map_;
};

const OperatorRegistration<WarpAffineOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
