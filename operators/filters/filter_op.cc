// filter: DALI's experimental.filter for images (mode "same"): each sample correlated with a 2-D
// filter (filter.h has the formula and the border rules).
//
// | input                        | output                    | arguments (per sample)              |
// |------------------------------|---------------------------|-------------------------------------|
// | HWC (1..4 channels) or HW;   | the input's shape; dtype  | filter (fh x fw ≤ 31 x 31), anchor, |
// | uint8 or float32             | `dtype` (same or float32) | fill_value                          |
//
// The filter is a row-major float list: constant (`filter: [...]`, square unless filter_shape
// says [fh, fw]) or fed per sample (`filter: $node`, a float32 [fh, fw] tensor per sample, the 2-D
// array DALI takes as its second input). Where DALI takes fill_value as a third input, it is an
// argument here (per sample allowed). CPU and GPU bit-identical. GPU: one launch per batch; the
// per-sample descriptors (sizes, anchor, border, offset of the sample's weights) and the batch's
// weights travel in two descriptor arrays: capturable.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/color/sample_checks.h"
#include "operators/filters/filter.h"
#include "operators/image_common/image_args.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kTypes = {DType::kUInt8, DType::kFloat32};
const std::vector<std::string> kBorders = {"reflect_101", "reflect_1001", "wrap", "clamp", "constant"};

const OpSchema kSchema =
    OpSchema("filter")
        .Doc("Correlates each image with a 2-D filter (DALI's experimental.filter, mode \"same\"; as DALI, the "
             "filter is not flipped): out(y, x) = sum_ij filter[i][j] * in(y + i - anchor_y, x + j - anchor_x), in "
             "float32; filters up to 31x31.")
        .Input("input", {"HWC", "HW"}, kTypes)
        .Output("output")
        .RequiredArg<std::vector<double>>(
            "filter",
            "The filter's values, row-major (at most 31x31). Constant: a square number of values, or filter_shape "
            "gives [fh, fw]. Per sample ($node): a float32 [fh, fw] tensor per sample.",
            PerSample::kAllowed)
        .Arg<std::vector<int64_t>>("filter_shape", std::vector<int64_t>{},
                                   "[fh, fw] of a flat filter list; [] (default): a square filter.")
        .Min(1)
        .Arg<std::vector<int64_t>>("anchor", std::vector<int64_t>{-1},
                                   "The filter position over the output pixel, [ay, ax] or one value for both; -1 "
                                   "(default): the centre, extent / 2 rounded down.",
                                   PerSample::kAllowed)
        .Arg<std::string>("border", "reflect_101",
                          "Taps outside the image: reflect_101 (default, edge not repeated), reflect_1001 (edge "
                          "repeated), wrap, clamp, or constant (fill_value).")
        .Choices(kBorders)
        .Arg<float>("fill_value", 0.0f,
                    "The value outside the image with border constant (uint8 input: 0..255, rounded).",
                    PerSample::kAllowed)
        .Arg<std::string>("dtype", "same", "Output dtype: same (as the input) or float32; uint8 is rounded and clamped.")
        .Choices({"same", "uint8", "float32"})
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

std::string AtSample(int sample) { return " at sample " + std::to_string(sample); }

class FilterOp final : public Operator {
 public:
  explicit FilterOp(const OpSpec& spec) : Operator(spec), fed_(spec.arg_inputs().count("filter") != 0) {
    border_ = static_cast<FilterBorder>(IndexOf(kBorders, spec.Arg<std::string>("border")));
    const std::string dtype = spec.Arg<std::string>("dtype");
    if (dtype != "same") out_type_ = ParseDType(dtype);
    filter_shape_ = spec.Arg<std::vector<int64_t>>("filter_shape");
    if (!filter_shape_.empty() && filter_shape_.size() != 2) {
      throw InvalidArgument(spec.Describe() + ": argument \"filter_shape\": expected 2 values [fh, fw] or none, got " +
                            std::to_string(filter_shape_.size()));
    }
    if (!fed_) {
      const std::vector<double> values = spec.Arg<std::vector<double>>("filter");
      constant_extent_ = Extents(static_cast<int64_t>(values.size()), -1);
      constant_.assign(values.begin(), values.end());
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    TensorListDesc d = ws.InputDesc(0);
    const Layout layout = CheckInput(spec(), d, 0, {"HWC", "HW"}, kTypes);
    in_type_ = d.dtype;
    const DType out_type = out_type_.value_or(d.dtype);
    if (out_type != d.dtype && out_type != DType::kFloat32) {
      throw InvalidArgument(spec().Describe() + ": argument \"dtype\": expected same or float32 for a " +
                            std::string(DTypeName(d.dtype)) + " input (the output is float32 or the input's dtype, "
                            "as DALI), got " + std::string(DTypeName(out_type)));
    }
    const int n = static_cast<int>(d.shapes.size());
    ReadFilters(ws, n);
    const SampleArg<std::vector<int64_t>> anchor(ws, "anchor");
    const bool constant_border = border_ == FilterBorder::kConstant;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const bool u8 = d.dtype == DType::kUInt8;
    const CheckedSampleArg fill(ws, "fill_value", u8 ? 0.0 : -kInf, u8 ? 255.0 : kInf);
    for (int i = 0; i < n; ++i) {
      const Shape& shape = d.shapes[static_cast<size_t>(i)];
      const int64_t channels = layout == "HWC" ? shape[2] : 1;
      if (channels < 1 || channels > kMaxFilterChannels) {
        throw InvalidArgument(spec().Describe() + ": input 0: sample " + std::to_string(i) + " has " +
                              std::to_string(channels) + " channels, expected 1 to " +
                              std::to_string(kMaxFilterChannels));
      }
      FilterSample& s = samples_[static_cast<size_t>(i)];
      s.height = static_cast<int32_t>(shape[0]);
      s.width = static_cast<int32_t>(shape[1]);
      s.channels = static_cast<int32_t>(channels);
      s.border = border_;
      SetAnchor(anchor(i), i, s);
      const float f = constant_border ? fill(i) : 0.f;
      s.fill = u8 ? std::rint(f) : f;
    }
    d.dtype = out_type;
    return {d};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        FilterSample s = samples_[static_cast<size_t>(i)];
        s.in = in.raw_sample(static_cast<int>(i));
        s.out = out.raw_sample(static_cast<int>(i));
        FilterCpu(s, weights_.data(), in.dtype(), out.dtype());
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    FilterSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = samples_[static_cast<size_t>(i)];
      d[i].in = in.raw_sample(i);
      d[i].out = out.raw_sample(i);
    }
    float* w = weights_dev_.Write(ws.slot(), weights_.size(), ws.stream());
    if (!weights_.empty()) std::memcpy(w, weights_.data(), weights_.size() * sizeof(float));
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    // Both every iteration, in Write's order (docs/executor.md).
    const FilterSample* descs = descs_.Upload(ws.slot(), ws.stream());
    const float* weights = weights_dev_.Upload(ws.slot(), ws.stream());
    if (n == 0) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(out.dtype())) / n;
    FilterGpu(descs, weights, n, hint, in_type_, out.dtype(), ws.stream());
  }

 private:
  static size_t IndexOf(const std::vector<std::string>& names, const std::string& name) {
    size_t i = 0;
    while (i < names.size() && names[i] != name) ++i;
    return i;
  }

  // [fh, fw] of a flat list of `count` values: filter_shape when given, else the square root.
  std::pair<int, int> Extents(int64_t count, int sample) const {
    if (!filter_shape_.empty()) {
      if (filter_shape_[0] * filter_shape_[1] != count) {
        throw InvalidArgument(spec().Describe() + ": argument \"filter\": expected " +
                              std::to_string(filter_shape_[0] * filter_shape_[1]) + " values (filter_shape [" +
                              std::to_string(filter_shape_[0]) + ", " + std::to_string(filter_shape_[1]) +
                              "]), got " + std::to_string(count) + (sample < 0 ? "" : AtSample(sample)));
      }
      return CheckedExtents(filter_shape_[0], filter_shape_[1], sample);
    }
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(count))));
    if (count < 1 || side * side != count) {
      throw InvalidArgument(spec().Describe() + ": argument \"filter\": expected a square number of values (or "
                            "filter_shape [fh, fw]), got " + std::to_string(count) + (sample < 0 ? "" : AtSample(sample)));
    }
    return CheckedExtents(side, side, sample);
  }

  std::pair<int, int> CheckedExtents(int64_t fh, int64_t fw, int sample) const {
    if (fh < 1 || fw < 1 || fh > kMaxFilterExtent || fw > kMaxFilterExtent) {
      throw InvalidArgument(spec().Describe() + ": argument \"filter\": expected extents 1 to " +
                            std::to_string(kMaxFilterExtent) + " (the GPU kernel's shared-memory window is sized "
                            "for 31x31), got " + std::to_string(fh) + "x" + std::to_string(fw) +
                            (sample < 0 ? "" : AtSample(sample)));
    }
    return {static_cast<int>(fh), static_cast<int>(fw)};
  }

  // samples_ (extents, weights_offset) and weights_ for a batch of n.
  void ReadFilters(const Workspace& ws, int n) {
    samples_.assign(static_cast<size_t>(n), FilterSample{});
    if (!fed_) {
      weights_ = constant_;  // every sample reads offset 0
      for (FilterSample& s : samples_) std::tie(s.filter_h, s.filter_w) = constant_extent_;
      return;
    }
    const TensorListCPU& fed = *ws.ArgInput("filter");
    const auto source = [&] { return "argument \"filter\" (\"$" + spec().arg_inputs().at("filter") + "\")"; };
    if (fed.num_samples() != n) {
      throw InvalidArgument(spec().Describe() + ": " + source() + " has " + std::to_string(fed.num_samples()) +
                            " samples, the batch " + std::to_string(n));
    }
    weights_.clear();
    for (int i = 0; i < n; ++i) {
      const Shape& shape = fed.shape(i);
      if (fed.dtype() != DType::kFloat32 || shape.ndim() < 1 || shape.ndim() > 2) {
        throw InvalidArgument(spec().Describe() + ": " + source() + ": expected a float32 [fh, fw] tensor per "
                              "sample, got " + std::string(DTypeName(fed.dtype())) + " " + shape.ToString() +
                              AtSample(i));
      }
      FilterSample& s = samples_[static_cast<size_t>(i)];
      std::tie(s.filter_h, s.filter_w) =
          shape.ndim() == 2 ? CheckedExtents(shape[0], shape[1], i) : Extents(shape[0], i);
      s.weights_offset = static_cast<int32_t>(weights_.size());
      const auto* v = static_cast<const float*>(fed.raw_sample(i));
      weights_.insert(weights_.end(), v, v + shape.num_elements());
    }
  }

  void SetAnchor(const std::vector<int64_t>& anchor, int sample, FilterSample& s) const {
    if (anchor.size() != 1 && anchor.size() != 2) {
      throw InvalidArgument(spec().Describe() + ": argument \"anchor\": expected 1 or 2 values ([ay, ax]), got " +
                            std::to_string(anchor.size()) + AtSample(sample));
    }
    const int64_t extents[2] = {s.filter_h, s.filter_w};
    int32_t* out[2] = {&s.anchor_y, &s.anchor_x};
    for (int axis = 0; axis < 2; ++axis) {
      const int64_t a = anchor[anchor.size() == 1 ? 0 : static_cast<size_t>(axis)];
      if (a != -1 && (a < 0 || a >= extents[axis])) {
        throw InvalidArgument(spec().Describe() + ": argument \"anchor\": expected -1 or a value in [0, " +
                              std::to_string(extents[axis] - 1) + "] (the filter's extent " +
                              std::to_string(extents[axis]) + " along " + (axis == 0 ? "y" : "x") + "), got " +
                              std::to_string(a) + AtSample(sample));
      }
      *out[axis] = static_cast<int32_t>(a == -1 ? extents[axis] / 2 : a);
    }
  }

  bool fed_;
  FilterBorder border_ = FilterBorder::kReflect101;
  std::optional<DType> out_type_;  // nullopt: the input's
  DType in_type_ = DType::kUInt8;
  std::vector<int64_t> filter_shape_;  // [] or [fh, fw]
  std::pair<int, int> constant_extent_{0, 0};
  std::vector<float> constant_;
  std::vector<FilterSample> samples_;  // Setup's, without addresses
  std::vector<float> weights_;         // the batch's weights, each sample's at its weights_offset
  SlotDescriptors<FilterSample> descs_;
  SlotDescriptors<float> weights_dev_;
};

const OperatorRegistration<FilterOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
