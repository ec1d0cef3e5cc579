// squeeze and expand_dims (DALI's names and arguments): drop or insert extent-1 axes.
//
// | op          | arguments                                    | output                              |
// |-------------|----------------------------------------------|-------------------------------------|
// | squeeze     | axes (negative: from the back) or axis_names | those axes removed (each must have  |
// |             | (letters of the input layout)                | extent 1); their letters too        |
// | expand_dims | axes: positions in the output;               | extent-1 axes inserted; layout gets |
// |             | new_axis_names: one letter per axis, or none | the new letters, or none without    |
//
// Any dtype; the bytes are copied (same_bytes_op.h); GPU: one launch per batch, capturable.
#include <string>
#include <vector>

#include "core/op/registry.h"
#include "operators/tensor/same_bytes_op.h"
#include "operators/tensor/tensor_shapes.h"

namespace conveyor::ops {
namespace {

const OpSchema kSqueezeSchema =
    OpSchema("squeeze")
        .Doc("Removes extent-1 axes, named by index (axes) or by layout letter (axis_names).")
        .Input("input")
        .Output("output")
        .Arg<std::vector<int64_t>>("axes", {}, "The axes to remove (negative: counted from the back).")
        .Arg<std::string>("axis_names", "", "The layout letters of the axes to remove (instead of axes).")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

const OpSchema kExpandDimsSchema =
    OpSchema("expand_dims")
        .Doc("Inserts extent-1 axes at the given positions of the output.")
        .Input("input")
        .Output("output")
        .RequiredArg<std::vector<int64_t>>("axes", "Positions of the new axes in the output (negative: from the back).")
        .Arg<std::string>("new_axis_names", "",
                          "One layout letter per new axis; empty (default): the output has no layout.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class SqueezeOp final : public SameBytesOp {
 public:
  explicit SqueezeOp(const OpSpec& spec)
      : SameBytesOp(spec), axes_(spec.Arg<std::vector<int64_t>>("axes")), names_(spec.Arg<std::string>("axis_names")) {
    if (axes_.empty() == names_.empty()) {
      throw InvalidArgument(spec.Describe() + ": argument \"axes\": expected axes or axis_names (one of them), got " +
                            (axes_.empty() ? "neither" : "both"));
    }
  }

  TensorListDesc Reinterpret(const Workspace& ws) override {
    const TensorListDesc& in = ws.InputDesc(0);
    TensorListDesc out;
    std::vector<int> axes;
    if (!names_.empty()) {
      if (in.layout.empty()) {
        throw InvalidArgument(spec().Describe() + ": argument \"axis_names\": \"" + names_ +
                              "\" needs an input layout; input 0 has none (use axes)");
      }
      axes = ForNode(spec(), "", [&] { return AxesOfNames(names_, std::string(in.layout.str()), "argument \"axis_names\""); });
    }
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const int s = static_cast<int>(i);
      out.shapes.push_back(ForSample(spec(), s, [&] {
        const std::vector<int> sample_axes =
            names_.empty() ? NormalizeAxes(axes_, in.shapes[i].ndim(), "argument \"axes\"") : axes;
        if (i == 0 && names_.empty()) axes = sample_axes;
        return SqueezedShape(in.shapes[i], sample_axes);
      }));
    }
    out.layout = Layout(LayoutWithout(std::string(in.layout.str()), axes));
    return out;
  }

 private:
  std::vector<int64_t> axes_;
  std::string names_;
};

class ExpandDimsOp final : public SameBytesOp {
 public:
  explicit ExpandDimsOp(const OpSpec& spec)
      : SameBytesOp(spec), axes_(spec.Arg<std::vector<int64_t>>("axes")), names_(spec.Arg<std::string>("new_axis_names")) {
    if (axes_.empty()) throw InvalidArgument(spec.Describe() + ": argument \"axes\": expected at least one axis, got []");
    if (!names_.empty() && names_.size() != axes_.size()) {
      throw InvalidArgument(spec.Describe() + ": argument \"new_axis_names\": \"" + names_ + "\" has " +
                            std::to_string(names_.size()) + " letters, expected one per axis (" +
                            std::to_string(axes_.size()) + ")");
    }
  }

  TensorListDesc Reinterpret(const Workspace& ws) override {
    const TensorListDesc& in = ws.InputDesc(0);
    TensorListDesc out;
    std::vector<int> axes;
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const int s = static_cast<int>(i);
      out.shapes.push_back(ForSample(spec(), s, [&] {
        const int ndim = in.shapes[i].ndim() + static_cast<int>(axes_.size());
        axes = NormalizeAxes(axes_, ndim, "argument \"axes\"");
        return ExpandedShape(in.shapes[i], axes);
      }));
    }
    if (names_.empty()) return out;
    if (in.layout.empty() && !in.shapes.empty() && in.shapes[0].ndim() > 0) {
      throw InvalidArgument(spec().Describe() + ": argument \"new_axis_names\": \"" + names_ +
                            "\" needs an input layout to insert into; input 0 has none");
    }
    if (!in.shapes.empty()) {
      const std::string letters = LayoutWith(std::string(in.layout.str()), axes, names_);
      out.layout = ForNode(spec(), "argument \"new_axis_names\": ", [&] { return Layout(letters); });
    }
    return out;
  }

 private:
  std::vector<int64_t> axes_;
  std::string names_;
};

const OperatorRegistration<SqueezeOp> kSqueezeRegistration(kSqueezeSchema);
const OperatorRegistration<ExpandDimsOp> kExpandDimsRegistration(kExpandDimsSchema);

}  // namespace
}  // namespace conveyor::ops
