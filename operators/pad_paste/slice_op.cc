// slice: DALI's fn.slice for HWC samples — a window given by its start and its shape (or end)
// along `axes`, in pixels or normalized to the sample's extent, with DALI's out_of_bounds_policy.
//
// | input   | dtypes                                  | layouts | output                         |
// |---------|-----------------------------------------|---------|--------------------------------|
// | input   | uint8, int8, uint16, int16, int32,      | HWC     | same dtype; the window, padded |
// |         | float32 (masks: int32 [H, W, 1])        |         | or trimmed per the policy      |
//
// Along an axis of extent E: begin = round(start) or round(rel_start * E); end = begin +
// round(shape), round(end), round((rel_start + rel_shape) * E) or round(rel_end * E) (round =
// half away from zero; default begin 0, end E). Axes not in `axes` are kept whole. The default
// axes [1, 0] take (x, y) pairs, so random_bbox_crop's `anchor` / `shape` outputs feed
// rel_start / rel_shape directly.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "operators/pad_paste/window_op.h"

namespace conveyor::ops {
namespace {

const OpSchema kSliceSchema =
    OpSchema("slice")
        .Doc("Cuts a window out of each HWC sample: start and shape (or end) along `axes`, in pixels (start, shape, "
             "end) or normalized to the extent (rel_start, rel_shape, rel_end); all per sample (DALI's fn.slice). "
             "out_of_bounds_policy: error, pad (with fill_values) or trim_to_shape.")
        .Input("input", {"HWC"}, WindowDTypes())
        .Output("sliced")
        .Arg<std::vector<double>>("start", std::vector<double>{}, "Window start per axis of `axes`, in pixels.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("rel_start", std::vector<double>{},
                                  "Window start per axis of `axes`, as a fraction of the extent.", PerSample::kAllowed)
        .Arg<std::vector<double>>("shape", std::vector<double>{}, "Window extent per axis of `axes`, in pixels.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("rel_shape", std::vector<double>{},
                                  "Window extent per axis of `axes`, as a fraction of the extent.", PerSample::kAllowed)
        .Arg<std::vector<double>>("end", std::vector<double>{}, "Window end (exclusive) per axis of `axes`, in pixels.",
                                  PerSample::kAllowed)
        .Arg<std::vector<double>>("rel_end", std::vector<double>{},
                                  "Window end per axis of `axes`, as a fraction of the extent.", PerSample::kAllowed)
        .Arg<std::vector<int64_t>>("axes", std::vector<int64_t>{1, 0},
                                   "Axes the window values refer to, in their order (0 = H, 1 = W, 2 = C); the default "
                                   "[1, 0] takes (x, y).")
        .Arg<std::string>("out_of_bounds_policy", "error",
                          "error: a window leaving the sample is an error; pad: outside elements take fill_values; "
                          "trim_to_shape: the window is cut to the sample.")
        .Choices({"error", "pad", "trim_to_shape"})
        .Arg<std::vector<double>>("fill_values", std::vector<double>{0.0},
                                  "Padding value: one, or one per output channel.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

enum class Policy { kError, kPad, kTrim };

constexpr std::array<const char*, 6> kNames = {"start", "rel_start", "shape", "rel_shape", "end", "rel_end"};

class SliceOp final : public WindowOp {
 public:
  explicit SliceOp(const OpSpec& spec) : WindowOp(spec), fill_(spec.Arg<std::vector<double>>("fill_values")) {
    const std::string policy = spec.Arg<std::string>("out_of_bounds_policy");
    policy_ = policy == "pad" ? Policy::kPad : policy == "trim_to_shape" ? Policy::kTrim : Policy::kError;
    for (int64_t a : spec.Arg<std::vector<int64_t>>("axes")) {
      if (a < 0 || a > 2 || std::find(axes_.begin(), axes_.end(), static_cast<int>(a)) != axes_.end()) {
        throw InvalidArgument(spec.Describe() + ": axes: expected distinct axes of HWC samples (0 = H, 1 = W, 2 = C), "
                              "got " + std::to_string(a) + (a >= 0 && a <= 2 ? " twice" : ""));
      }
      axes_.push_back(static_cast<int>(a));
    }
    const auto both = [&](const char* a, const char* b) {
      if (Given(spec, a) && Given(spec, b)) {
        throw InvalidArgument(spec.Describe() + ": give at most one of \"" + a + "\" and \"" + b + "\"");
      }
    };
    both("start", "rel_start");
    const char* ends[] = {"shape", "rel_shape", "end", "rel_end"};
    for (int x = 0; x < 4; ++x) {
      for (int y = x + 1; y < 4; ++y) both(ends[x], ends[y]);
    }
  }

 protected:
  void BeginBatch(const Workspace& ws, const TensorListDesc& in) override {
    dtype_ = in.dtype;
    for (size_t k = 0; k < kNames.size(); ++k) args_[k].emplace(ws, kNames[k]);
  }

  WindowDesc Plan(const Workspace& ws, int i, const Shape& s) override {
    (void)ws;
    WindowDesc d{};
    d.in_h = d.out_h = s[0];
    d.in_w = d.out_w = s[1];
    d.in_c = d.out_c = s[2];
    int64_t* out[3] = {&d.out_h, &d.out_w, &d.out_c};
    int64_t* origin[3] = {&d.y0, &d.x0, &d.c0};
    const std::vector<double>& start = (*args_[0])(i);
    const std::vector<double>& rel_start = (*args_[1])(i);
    const std::vector<double>& shape = (*args_[2])(i);
    const std::vector<double>& rel_shape = (*args_[3])(i);
    const std::vector<double>& end = (*args_[4])(i);
    const std::vector<double>& rel_end = (*args_[5])(i);
    bool inside = true;
    std::string window;
    for (size_t k = 0; k < axes_.size(); ++k) {
      const int a = axes_[k];
      const double extent = static_cast<double>(s[a]);
      const auto at = [&](const std::vector<double>& v, const char* name) {
        if (v.size() != axes_.size()) {
          throw InvalidArgument(Where(i) + ": " + name + " has " + std::to_string(v.size()) + " values, expected " +
                                std::to_string(axes_.size()) + " (one per axis of axes)");
        }
        if (!std::isfinite(v[k])) {
          throw InvalidArgument(Where(i) + ": " + name + "[" + std::to_string(k) + "] is " + NumberString(v[k]));
        }
        return v[k];
      };
      int64_t begin = 0, stop = s[a];
      if (!start.empty()) begin = std::llround(at(start, "start"));
      if (!rel_start.empty()) begin = std::llround(at(rel_start, "rel_start") * extent);
      if (!shape.empty()) stop = begin + std::llround(at(shape, "shape"));
      if (!end.empty()) stop = std::llround(at(end, "end"));
      if (!rel_end.empty()) stop = std::llround(at(rel_end, "rel_end") * extent);
      if (!rel_shape.empty()) {
        const double from = rel_start.empty() ? static_cast<double>(begin) / extent : rel_start[k];
        stop = std::llround((from + at(rel_shape, "rel_shape")) * extent);
      }
      if (stop < begin) {
        throw InvalidArgument(Where(i) + ": the window along axis " + std::to_string(a) + " ends (" +
                              std::to_string(stop) + ") before it starts (" + std::to_string(begin) + ")");
      }
      window += (window.empty() ? "" : ", ") + std::string("HWC").substr(static_cast<size_t>(a), 1) + " [" +
                std::to_string(begin) + ", " + std::to_string(stop) + ")";
      if (begin < 0 || stop > s[a]) inside = false;
      if (policy_ == Policy::kTrim) {
        begin = std::clamp<int64_t>(begin, 0, s[a]);
        stop = std::clamp<int64_t>(stop, begin, s[a]);
      }
      *origin[a] = begin;
      *out[a] = stop - begin;
    }
    if (!inside && policy_ == Policy::kError) {
      throw InvalidArgument(Where(i) + ": the slice " + window + " does not fit the sample of shape " + s.ToString() +
                            "; use out_of_bounds_policy: pad or trim_to_shape");
    }
    SetFill(fill_, "fill_values", dtype_, i, d);
    return d;
  }

 private:
  static bool Given(const OpSpec& spec, const std::string& name) {
    return spec.HasArg(name) || spec.arg_inputs().count(name) != 0;
  }

  Policy policy_ = Policy::kError;
  std::vector<double> fill_;
  std::vector<int> axes_;
  DType dtype_ = DType::kUInt8;
  std::array<std::optional<SampleArg<std::vector<double>>>, 6> args_;  // in kNames order
};

const OperatorRegistration<SliceOp> kRegistration(kSliceSchema);

}  // namespace
}  // namespace conveyor::ops
