// one_hot (DALI's name and arguments): each class index becomes a vector of num_classes values,
// on_value at the index and off_value elsewhere, along a new axis.
//
// | input                  | arguments                                   | output                       |
// |------------------------|---------------------------------------------|------------------------------|
// | uint8, int8, uint16,   | num_classes >= 1; axis: where the class     | dtype (default float32);     |
// | int16, int32, int64    | axis goes, -ndim-1..ndim (default -1: last);| an index outside [0, classes)|
// | indices, any shape     | axis_name: its layout letter;               | gives all off_value; layout: |
// |                        | on_value / off_value (saturated to dtype)   | with axis_name, else none    |
//
// DALI's scalar rule: when `axis` is not given and every sample holds one element (whatever its
// dims), the output samples are [num_classes]. GPU: one launch per batch, capturable
// (SampleKernelOp).
#include <string>
#include <vector>

#include "core/op/registry.h"
#include "operators/image_common/image_args.h"
#include "operators/image_common/sample_kernel_op.h"
#include "operators/tensor/element_types.h"
#include "operators/tensor/one_hot.h"
#include "operators/tensor/op_context.h"
#include "operators/tensor/saturate.h"
#include "operators/tensor/tensor_shapes.h"

namespace conveyor::ops {
namespace {

const std::vector<DType> kIndexDTypeList(std::begin(kIndexDTypes), std::end(kIndexDTypes));

const OpSchema kSchema =
    OpSchema("one_hot")
        .Doc("One-hot encodes class indices along a new axis of num_classes values.")
        .Input("input", {}, kIndexDTypeList, Placement::kOpDevice, "Class indices.")
        .Output("output")
        .RequiredArg<int64_t>("num_classes", "The length of the class axis.")
        .Range(1, 2147483647)
        .Arg<int64_t>("axis", -1, "Where the class axis goes, -ndim-1..ndim (-1: last).")
        .Arg<std::string>("axis_name", "", "The layout letter of the class axis (the output has no layout without it).")
        .Arg<DType>("dtype", DType::kFloat32, "The output dtype.")
        .Arg<double>("on_value", 1.0, "The value at the class index (saturated to dtype).")
        .Arg<double>("off_value", 0.0, "The value elsewhere (saturated to dtype).")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class OneHotOp final : public SampleKernelOp<OneHotSample, OneHotCpu, OneHotGpu> {
 public:
  explicit OneHotOp(const OpSpec& spec)
      : SampleKernelOp(spec),
        axis_(spec.Arg<int64_t>("axis")),
        axis_given_(spec.HasArg("axis")),
        axis_name_(spec.Arg<std::string>("axis_name")),
        dtype_(spec.Arg<DType>("dtype")) {
    values_.classes = spec.Arg<int64_t>("num_classes");
    values_.on = SaturatedBits(spec.Arg<double>("on_value"), dtype_);
    values_.off = SaturatedBits(spec.Arg<double>("off_value"), dtype_);
    values_.out_size = static_cast<int64_t>(DTypeSize(dtype_));
    if (axis_name_.size() > 1) {
      throw InvalidArgument(spec.Describe() + ": argument \"axis_name\": expected one letter, got \"" + axis_name_ + "\"");
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc in = ws.InputDesc(0);
    CheckInput(spec(), in, 0, {}, kIndexDTypeList);
    bool scalars = !axis_given_ && !in.shapes.empty();
    for (const Shape& s : in.shapes) scalars = scalars && s.num_elements() == 1;
    TensorListDesc out;
    out.dtype = dtype_;
    samples_.assign(in.shapes.size(), values_);
    int axis = 0;
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const Shape& s = in.shapes[i];
      if (scalars) {
        out.shapes.push_back(Shape{values_.classes});
        samples_[i].outer = samples_[i].inner = 1;
        continue;
      }
      out.shapes.push_back(ForSample(spec(), static_cast<int>(i), [&] {
        axis = NormalizeAxis(axis_, s.ndim() + 1, "argument \"axis\"");
        Shape shape = ExpandedShape(s, {axis});
        shape[axis] = values_.classes;
        return shape;
      }));
      samples_[i].outer = samples_[i].inner = 1;
      for (int d = 0; d < s.ndim(); ++d) (d < axis ? samples_[i].outer : samples_[i].inner) *= s[d];
    }
    out.layout = OutputLayout(in, scalars, axis);
    return {out};
  }

 private:
  Layout OutputLayout(const TensorListDesc& in, bool scalars, int axis) const {
    if (axis_name_.empty() || in.shapes.empty()) return Layout();
    if (scalars) return Layout(axis_name_);
    if (in.layout.empty() && in.shapes[0].ndim() > 0) {
      throw InvalidArgument(spec().Describe() + ": argument \"axis_name\": \"" + axis_name_ +
                            "\" needs an input layout to insert into; input 0 has none");
    }
    return ForNode(spec(), "argument \"axis_name\": ",
                   [&] { return Layout(LayoutWith(std::string(in.layout.str()), {axis}, axis_name_)); });
  }

  int64_t axis_;
  bool axis_given_;
  std::string axis_name_;
  DType dtype_;
  OneHotSample values_{};  // classes, on, off, out_size: the same for every sample
};

const OperatorRegistration<OneHotOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
