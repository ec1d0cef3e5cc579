// rotate: DALI's operator for HWC images — each sample turned counter-clockwise (as displayed) by
// its `angle` in degrees about its centre, on the warp engine (warp.h) with the matrix
// RotateOutputToInput (affine_matrix.h) per sample.
//
// | input                         | output                                  | per sample               |
// |-------------------------------|-----------------------------------------|--------------------------|
// | HWC, 1..8 channels; uint8 or  | (h', w', C), dtype `dtype` (default:    | angle, size, fill_value  |
// | float32                       | same)                                   |                          |
//
// Output size: `size` when given; the input's with keep_size; else DALI's canvas that holds the
// whole turned image (RotatedCanvas). Multiples of 90 degrees move pixels exactly.
// CPU and GPU bit-identical; GPU one launch per batch, capturable.
#include <cmath>

#include "core/op/registry.h"
#include "operators/color/sample_checks.h"
#include "operators/geometry/warp_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kSchema = AddWarpArgs(
    OpSchema("rotate")
        .Doc("Rotates HWC images (uint8 or float32) counter-clockwise by angle degrees about their centre. The "
             "output holds the whole rotated image unless keep_size or size is given (DALI's rule, "
             "docs/operators_geometry.md).")
        .Input("images", {"HWC"}, {DType::kUInt8, DType::kFloat32})
        .Output("rotated")
        .RequiredArg<float>("angle", "Angle in degrees, counter-clockwise as displayed (y pointing down).",
                            PerSample::kAllowed)
        .Arg<bool>("keep_size", false,
                   "Keep the input's size (corners cut); false (default): enlarge the canvas to hold the whole "
                   "rotated image, unless size is given.")
        .Arg<std::vector<double>>("size", std::vector<double>{},
                                  "Output [h, w] (rounded); [] (default): from keep_size.", PerSample::kAllowed)
        .Min(0));

class RotateOp final : public WarpOp {
 public:
  explicit RotateOp(const OpSpec& spec) : WarpOp(spec), keep_size_(spec.Arg<bool>("keep_size")) {
    const bool size_given = spec.arg_inputs().count("size") != 0 ||
                            (spec.HasArg("size") && !spec.Arg<std::vector<double>>("size").empty());
    if (keep_size_ && size_given) {
      throw InvalidArgument(spec.Describe() + ": arguments \"keep_size\" and \"size\": expected at most one of them, "
                            "got keep_size: true and a size");
    }
  }

 private:
  std::vector<Geometry> Geometries(const Workspace& ws, const std::vector<Shape>& shapes,
                                   const std::vector<int>& samples) const override {
    const SampleArg<float> angle_arg(ws, "angle");
    const SampleArg<std::vector<double>> size(ws, "size");
    std::vector<Geometry> out;
    out.reserve(shapes.size());
    for (size_t k = 0; k < shapes.size(); ++k) {
      const int i = samples[k];
      const double angle = angle_arg(i);
      if (!std::isfinite(angle)) ThrowSampleRange(spec(), "angle", angle, i, -INFINITY, INFINITY);
      const int64_t h = shapes[k][0], w = shapes[k][1];
      Geometry g;
      const auto wanted = SizeArg("size", size(i), i);
      const CanvasSize canvas = wanted ? CanvasSize{wanted->first, wanted->second}
                                : keep_size_ ? CanvasSize{h, w}
                                             : RotatedCanvas(h, w, angle);
      g.out_h = canvas.h;
      g.out_w = canvas.w;
      g.out_to_in = RotateOutputToInput(h, w, canvas.h, canvas.w, angle);
      out.push_back(g);
    }
    return out;
  }

  bool keep_size_;
};

const OperatorRegistration<RotateOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
