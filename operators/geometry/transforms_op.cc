// transforms.translation, transforms.scale, transforms.rotation, transforms.shear and
// transforms.crop: DALI's 2-D affine-transform generators (transform_op.h for the output and the
// composition with `transform`). Points are (x, y); every argument may be fed per sample.
//
// | operator               | matrix (before composition)                                        |
// |------------------------|--------------------------------------------------------------------|
// | transforms.translation | x + offset_x, y + offset_y                                         |
// | transforms.scale       | (scale_x x, scale_y y) about center (default (0, 0))               |
// | transforms.rotation    | [[cos a, -sin a], [sin a, cos a]] about center (a in degrees)      |
// | transforms.shear       | [[1, shear_x], [shear_y, 1]] about center; angles: shear = tan(a)  |
// | transforms.crop        | per axis: from_start -> to_start, from_end -> to_end               |
#include <algorithm>
#include <cmath>

#include "core/op/registry.h"
#include "operators/color/sample_checks.h"
#include "operators/geometry/transform_op.h"

namespace conveyor::ops {
namespace {

using Values = std::vector<double>;

const OpSchema kTranslationSchema = AddTransformArgs(
    OpSchema("transforms.translation")
        .Doc("Produces a translation matrix: (x, y) -> (x + offset_x, y + offset_y), as a float32 [2, 3] per sample.")
        .RequiredArg<Values>("offset", "(x, y) translation.", PerSample::kAllowed));

const OpSchema kScaleSchema = AddTransformArgs(
    OpSchema("transforms.scale")
        .Doc("Produces a scaling matrix: (x, y) -> (scale_x x, scale_y y) about center, as a float32 [2, 3] per "
             "sample.")
        .RequiredArg<Values>("scale", "(x, y) scale factors.", PerSample::kAllowed)
        .Arg<Values>("center", Values{}, "(x, y) that stays put; [] (default): (0, 0).", PerSample::kAllowed));

const OpSchema kRotationSchema = AddTransformArgs(
    OpSchema("transforms.rotation")
        .Doc("Produces a rotation matrix [[cos a, -sin a], [sin a, cos a]] about center (a in degrees), as a float32 "
             "[2, 3] per sample.")
        .RequiredArg<float>("angle", "Angle in degrees.", PerSample::kAllowed)
        .Arg<Values>("center", Values{}, "(x, y) of the rotation's centre; [] (default): (0, 0).",
                     PerSample::kAllowed));

const OpSchema kShearSchema = AddTransformArgs(
    OpSchema("transforms.shear")
        .Doc("Produces a shear matrix: (x, y) -> (x + shear_x y, shear_y x + y) about center, as a float32 [2, 3] "
             "per sample. Give shear or angles.")
        .Arg<Values>("shear", Values{}, "(shear_x, shear_y) factors.", PerSample::kAllowed)
        .Arg<Values>("angles", Values{}, "(angle_x, angle_y) in degrees, in (-90, 90): shear = tan(angle).",
                     PerSample::kAllowed)
        .Arg<Values>("center", Values{}, "(x, y) that stays put; [] (default): (0, 0).", PerSample::kAllowed));

const OpSchema kCropSchema = AddTransformArgs(
    OpSchema("transforms.crop")
        .Doc("Produces the matrix that maps the box from_start..from_end onto to_start..to_end, axis by axis, as a "
             "float32 [2, 3] per sample (e.g. to move coordinates into a crop window).")
        .Arg<Values>("from_start", Values{0.0}, "(x, y) or one value for both.", PerSample::kAllowed)
        .Arg<Values>("from_end", Values{1.0}, "(x, y) or one value for both.", PerSample::kAllowed)
        .Arg<Values>("to_start", Values{0.0}, "(x, y) or one value for both.", PerSample::kAllowed)
        .Arg<Values>("to_end", Values{1.0}, "(x, y) or one value for both.", PerSample::kAllowed)
        .Arg<bool>("absolute", false, "Swap start and end where start > end (per axis, both boxes)."));

class TranslationOp final : public TransformOp {
 public:
  using TransformOp::TransformOp;

 private:
  std::vector<Affine2D> Define(const Workspace& ws, int n) const override {
    const SampleArg<Values> offset(ws, "offset");
    std::vector<Affine2D> out;
    for (int i = 0; i < n; ++i) {
      const Values t = Pair("offset", offset(i), i);
      out.push_back(Affine2D::Translation(t[0], t[1]));
    }
    return out;
  }
};

class ScaleOp final : public TransformOp {
 public:
  using TransformOp::TransformOp;

 private:
  std::vector<Affine2D> Define(const Workspace& ws, int n) const override {
    const SampleArg<Values> scale(ws, "scale"), center(ws, "center");
    std::vector<Affine2D> out;
    for (int i = 0; i < n; ++i) {
      const Values s = Pair("scale", scale(i), i);
      out.push_back(AboutCenter(Affine2D::Scale(s[0], s[1]), center(i), i));
    }
    return out;
  }
};

class RotationOp final : public TransformOp {
 public:
  using TransformOp::TransformOp;

 private:
  std::vector<Affine2D> Define(const Workspace& ws, int n) const override {
    const SampleArg<float> angle(ws, "angle");
    const SampleArg<Values> center(ws, "center");
    std::vector<Affine2D> out;
    for (int i = 0; i < n; ++i) {
      const double a = angle(i);
      if (!std::isfinite(a)) ThrowSampleRange(spec(), "angle", a, i, -INFINITY, INFINITY);
      out.push_back(AboutCenter(Affine2D::Rotation(a), center(i), i));
    }
    return out;
  }
};

class ShearOp final : public TransformOp {
 public:
  explicit ShearOp(const OpSpec& spec) : TransformOp(spec), by_angles_(Given(spec, "angles")) {
    if (Given(spec, "shear") == by_angles_) {
      throw InvalidArgument(spec.Describe() + ": arguments \"shear\" and \"angles\": expected exactly one of them, "
                            "got " + (by_angles_ ? "both" : "neither"));
    }
  }

 private:
  static bool Given(const OpSpec& spec, const std::string& name) {
    return spec.arg_inputs().count(name) != 0 || !spec.Arg<Values>(name).empty();
  }

  std::vector<Affine2D> Define(const Workspace& ws, int n) const override {
    const std::string name = by_angles_ ? "angles" : "shear";
    const SampleArg<Values> factors(ws, name), center(ws, "center");
    std::vector<Affine2D> out;
    for (int i = 0; i < n; ++i) {
      Values s = Pair(name, factors(i), i);
      if (by_angles_) {
        for (double& a : s) {
          if (!(a > -90 && a < 90)) {
            throw InvalidArgument(ArgWhere(name) + ": expected angles in (-90, 90) degrees, got " + FormatArgNumber(a) +
                                  AtSample(i));
          }
          a = std::tan(a * (M_PI / 180.0));
        }
      }
      out.push_back(AboutCenter(Affine2D::Shear(s[0], s[1]), center(i), i));
    }
    return out;
  }

  bool by_angles_;
};

class CropOp final : public TransformOp {
 public:
  explicit CropOp(const OpSpec& spec) : TransformOp(spec), absolute_(spec.Arg<bool>("absolute")) {}

 private:
  // One value for both axes, or (x, y).
  Values Point(const std::string& name, const Values& v, int sample) const {
    if (v.size() != 1 && v.size() != 2) {
      throw InvalidArgument(ArgWhere(name) + ": expected 1 value (both axes) or 2 (x, y), got " +
                            std::to_string(v.size()) + AtSample(sample));
    }
    return Pair(name, v.size() == 1 ? Values{v[0], v[0]} : v, sample);
  }

  std::vector<Affine2D> Define(const Workspace& ws, int n) const override {
    const SampleArg<Values> from_start(ws, "from_start"), from_end(ws, "from_end"), to_start(ws, "to_start"),
        to_end(ws, "to_end");
    std::vector<Affine2D> out;
    for (int i = 0; i < n; ++i) {
      Values f0 = Point("from_start", from_start(i), i), f1 = Point("from_end", from_end(i), i);
      Values t0 = Point("to_start", to_start(i), i), t1 = Point("to_end", to_end(i), i);
      Affine2D m;
      for (size_t axis = 0; axis < 2; ++axis) {
        if (absolute_ && f0[axis] > f1[axis]) std::swap(f0[axis], f1[axis]);
        if (absolute_ && t0[axis] > t1[axis]) std::swap(t0[axis], t1[axis]);
        if (f1[axis] == f0[axis]) {
          throw InvalidArgument(spec().Describe() + ": arguments \"from_start\" and \"from_end\": expected a "
                                "non-empty box, got " + FormatArgNumber(f0[axis]) + " to " + FormatArgNumber(f1[axis]) +
                                " along " + (axis == 0 ? "x" : "y") + AtSample(i));
        }
        const double scale = (t1[axis] - t0[axis]) / (f1[axis] - f0[axis]);
        m.m[axis * 4] = scale;                            // m[0] (x) or m[4] (y)
        m.m[axis * 3 + 2] = t0[axis] - scale * f0[axis];  // m[2] (x) or m[5] (y)
      }
      out.push_back(m);
    }
    return out;
  }

  bool absolute_;
};

const OperatorRegistration<TranslationOp> kTranslationRegistration(kTranslationSchema);
const OperatorRegistration<ScaleOp> kScaleRegistration(kScaleSchema);
const OperatorRegistration<RotationOp> kRotationRegistration(kRotationSchema);
const OperatorRegistration<ShearOp> kShearRegistration(kShearSchema);
const OperatorRegistration<CropOp> kCropRegistration(kCropSchema);

}  // namespace
}  // namespace conveyor::ops
