// Per-sample argument checks shared by the augmentation operators (color, filters, noise, erase).
// The schema's Range/Min check constants when the spec is validated; values fed per sample
// (`$name`) arrive at Setup and are checked here:
//   op "hsv" (h): argument "saturation": expected a value >= 0, got -0.5 at sample 2
//   op "hsv" (h): argument "hue": expected a finite value, got nan at sample 0
#pragma once

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "core/error.h"
#include "core/op/workspace.h"

namespace conveyor::ops {

inline std::string FormatArgNumber(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Throws InvalidArgument naming the node, the argument, the allowed range, the value and the sample.
inline void ThrowSampleRange(const OpSpec& spec, const std::string& name, double value, int sample, double lo,
                             double hi) {
  const std::string range = std::isinf(lo) && std::isinf(hi) ? "a finite value"
                            : std::isinf(hi)                   ? "a value >= " + FormatArgNumber(lo)
                                : "a value in [" + FormatArgNumber(lo) + ", " + FormatArgNumber(hi) + "]";
  throw InvalidArgument(spec.Describe() + ": argument \"" + name + "\": expected " + range + ", got " +
                        FormatArgNumber(value) + " at sample " + std::to_string(sample));
}

// A float argument read in a per-sample loop: the constant once per batch (SampleArg), a fed value
// per sample; each value checked against [lo, hi] (NaN is always rejected).
class CheckedSampleArg {
 public:
  CheckedSampleArg(const Workspace& ws, std::string name, double lo = -std::numeric_limits<double>::infinity(),
                   double hi = std::numeric_limits<double>::infinity())
      : spec_(&ws.spec()), arg_(ws, name), name_(std::move(name)), lo_(lo), hi_(hi) {}

  float operator()(int sample) const {
    const float v = arg_(sample);
    if (!(v >= lo_ && v <= hi_)) ThrowSampleRange(*spec_, name_, v, sample, lo_, hi_);
    return v;
  }

 private:
  const OpSpec* spec_;
  SampleArg<float> arg_;
  std::string name_;
  double lo_, hi_;
};

}  // namespace conveyor::ops
