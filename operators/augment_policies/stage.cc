#include "operators/augment_policies/stage.h"

#include <cmath>

#include "operators/geometry/affine_matrix.h"

namespace conveyor::ops::augment {
namespace {

void SetDiagonal(ColorSample& s, float factor, float offset) {
  s.mode = ColorMode::kMatrix;
  for (int k = 0; k < 9; ++k) s.m[k] = k % 4 == 0 ? factor : 0.f;
  for (float& o : s.offset) o = offset;
}

Affine2D OutputToInput(const OpChoice& c, int64_t h, int64_t w) {
  const double m = c.magnitude;
  switch (c.op) {
    case AugOp::kShearX: return Affine2D::Shear(m, 0);  // output (x, y) reads (x + m y, y)
    case AugOp::kShearY: return Affine2D::Shear(0, m);
    case AugOp::kTranslateX: return Affine2D::Translation(-m, 0);  // the picture moves by +m
    case AugOp::kTranslateY: return Affine2D::Translation(0, -m);
    default: return RotateOutputToInput(h, w, h, w, m);  // kRotate: counter-clockwise, keep size
  }
}

int64_t LumaSum(const uint8_t* rgb, int64_t pixels) {
  int64_t sum = 0;
  for (int64_t p = 0; p < pixels; ++p) sum += 299 * rgb[3 * p] + 587 * rgb[3 * p + 1] + 114 * rgb[3 * p + 2];
  return sum;
}

}  // namespace

float ContrastCenter(const uint8_t* rgb, int64_t pixels) {
  return pixels == 0 ? 0.f : ContrastOffset(LumaSum(rgb, pixels), pixels, 0.f);
}

StepSample MakeStep(const OpChoice& c, int64_t h, int64_t w, float fill) {
  StepSample s{};
  const int64_t pixels = h * w;
  s.kernel = StepKernel::kColor;
  ColorSample& color = s.color;
  switch (c.op) {
    case AugOp::kShearX: case AugOp::kShearY: case AugOp::kTranslateX: case AugOp::kTranslateY:
    case AugOp::kRotate: {
      s.kernel = StepKernel::kWarp;
      WarpSample& warp = s.warp;
      warp.in_h = warp.out_h = static_cast<int32_t>(h);
      warp.in_w = warp.out_w = static_cast<int32_t>(w);
      warp.channels = 3;
      warp.use_fill = 1;
      for (int c3 = 0; c3 < 3; ++c3) warp.fill[c3] = fill;
      const Affine2D m = OutputToInput(c, h, w);
      for (int j = 0; j < 6; ++j) warp.m[j] = static_cast<float>(m.m[static_cast<size_t>(j)]);
      return s;
    }
    case AugOp::kSharpness:
      s.kernel = StepKernel::kSharpness;
      s.sharpness = SharpnessSample{nullptr, nullptr, static_cast<int32_t>(h), static_cast<int32_t>(w), 3, c.magnitude,
                                    255.f};
      return s;
    case AugOp::kAutoContrast: case AugOp::kEqualize:
      s.kernel = StepKernel::kHistogram;
      s.histogram = HistogramSample{nullptr, nullptr, pixels * 3, 3,
                                    c.op == AugOp::kEqualize ? HistogramMode::kEqualize : HistogramMode::kAutoContrast};
      return s;
    case AugOp::kBrightness:
      color.pixels = pixels;
      SetDiagonal(color, c.magnitude, 0.f);
      return s;
    case AugOp::kContrast:
      color.pixels = pixels;
      SetDiagonal(color, c.magnitude, 0.f);  // offset from the centre, at run time
      s.center = CenterSample{nullptr, pixels, c.magnitude};
      return s;
    case AugOp::kColor: {
      double m[9];
      HsvMatrix(0.0, c.magnitude, 1.0, m);  // the saturation operator's matrix
      color.pixels = pixels;
      color.mode = ColorMode::kMatrix;
      for (int k = 0; k < 9; ++k) color.m[k] = static_cast<float>(m[k]);
      return s;
    }
    case AugOp::kSolarize: case AugOp::kInvert:
      color.pixels = pixels * 3;
      color.mode = ColorMode::kSolarize;
      color.p0 = c.op == AugOp::kInvert ? 0.f : c.magnitude;
      color.p1 = 255.f;
      return s;
    case AugOp::kPosterize:
      color.pixels = pixels * 3;
      color.mode = ColorMode::kPosterize;
      color.p0 = static_cast<float>((0xFF00u >> static_cast<int>(c.magnitude)) & 0xFFu);
      return s;
    default:  // identity: keep every bit
      color.pixels = pixels * 3;
      color.mode = ColorMode::kPosterize;
      color.p0 = 255.f;
      return s;
  }
}

void SetStepAddresses(StepSample& s, const uint8_t* in, uint8_t* out) {
  s.color.in = s.warp.in = s.sharpness.in = in;
  s.histogram.in = s.center.in = in;
  s.color.out = s.warp.out = s.sharpness.out = out;
  s.histogram.out = out;
}

void RunStepCpu(const StepSample& step, resample::Filter filter) {
  switch (step.kernel) {
    case StepKernel::kWarp: WarpCpu(step.warp, filter, DType::kUInt8, DType::kUInt8); return;
    case StepKernel::kSharpness: SharpnessCpu(step.sharpness, DType::kUInt8); return;
    case StepKernel::kHistogram: HistogramCpu(step.histogram); return;
    case StepKernel::kColor: {
      ColorSample color = step.color;
      if (step.center.pixels > 0) {
        const float offset = ContrastOffset(LumaSum(step.center.in, step.center.pixels), step.center.pixels,
                                            step.center.factor);
        for (float& o : color.offset) o = offset;
      }
      ColorCpu(color, DType::kUInt8, DType::kUInt8);
      return;
    }
  }
}

}  // namespace conveyor::ops::augment
