// reshape (DALI's name and arguments): the same elements, in the same order, under another shape.
//
// | input     | arguments                                          | output                         |
// |-----------|----------------------------------------------------|--------------------------------|
// | any dtype | shape: extents, one may be -1 (inferred); or       | same dtype and element count;  |
// | any shape | rel_shape: out[i] = in[src_dims[i] or i] * rel[i]  | layout: `layout`, else the     |
// |           | (a negative entry is inferred); or src_dims alone: | input's when the dim count is  |
// |           | out[i] = in[src_dims[i]] (-1: a new extent-1 axis) | kept, else none                |
//
// shape and rel_shape may be fed per sample ($node). The bytes are copied (same_bytes_op.h says
// why); GPU: one launch per batch, capturable.
#include <string>
#include <vector>

#include "core/op/registry.h"
#include "operators/tensor/same_bytes_op.h"
#include "operators/tensor/tensor_shapes.h"

namespace conveyor::ops {
namespace {

const OpSchema kSchema =
    OpSchema("reshape")
        .Doc("Treats each sample as having another shape: the same elements in the same order. One of shape, "
             "rel_shape or src_dims.")
        .Input("input")
        .Output("output")
        .Arg<std::vector<int64_t>>("shape", {}, "The output extents; one may be -1 (inferred from the element count).",
                                   PerSample::kAllowed)
        .Arg<std::vector<double>>("rel_shape", {},
                                  "Output extents relative to the input's: out[i] = round(in[src_dims[i] or i] * "
                                  "rel_shape[i]); one negative entry is inferred.",
                                  PerSample::kAllowed)
        .Arg<std::vector<int64_t>>("src_dims", {},
                                   "The input dim each output extent comes from (-1: a new extent-1 axis); alone, or "
                                   "the dims rel_shape scales.")
        .Arg<std::string>("layout", "",
                          "The output layout; empty (default): the input's when the dim count stays, else none.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

class ReshapeOp final : public SameBytesOp {
 public:
  explicit ReshapeOp(const OpSpec& spec)
      : SameBytesOp(spec),
        src_dims_(spec.Arg<std::vector<int64_t>>("src_dims")),
        layout_(spec.Arg<std::string>("layout")) {
    const bool shape = spec.arg_inputs().count("shape") || !spec.Arg<std::vector<int64_t>>("shape").empty();
    const bool rel = spec.arg_inputs().count("rel_shape") || !spec.Arg<std::vector<double>>("rel_shape").empty();
    if (shape && rel) {
      throw InvalidArgument(spec.Describe() + ": argument \"rel_shape\": give shape or rel_shape, not both");
    }
    if (shape && !src_dims_.empty()) {
      throw InvalidArgument(spec.Describe() + ": argument \"src_dims\": goes with rel_shape or alone, not with shape");
    }
    if (!shape && !rel && src_dims_.empty()) {
      throw InvalidArgument(spec.Describe() + ": argument \"shape\": expected one of shape, rel_shape or src_dims");
    }
    mode_ = shape ? Mode::kShape : rel ? Mode::kRelShape : Mode::kSrcDims;
    ForNode(spec, "argument \"layout\": ", [&] { return Layout(layout_); });
    if (mode_ == Mode::kShape && !spec.arg_inputs().count("shape")) CheckLayoutDims(spec.Arg<std::vector<int64_t>>("shape").size());
    if (mode_ == Mode::kSrcDims) CheckLayoutDims(src_dims_.size());
  }

  TensorListDesc Reinterpret(const Workspace& ws) override {
    const TensorListDesc& in = ws.InputDesc(0);
    TensorListDesc out;
    SampleArg<std::vector<int64_t>> shape(ws, "shape");
    SampleArg<std::vector<double>> rel(ws, "rel_shape");
    bool keeps_ndim = true;
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const int s = static_cast<int>(i);
      const Shape& from = in.shapes[i];
      out.shapes.push_back(ForSample(spec(), s, [&] {
        switch (mode_) {
          case Mode::kShape: return InferExtents(from, shape(s));
          case Mode::kRelShape: return InferExtents(from, RelativeExtents(from, rel(s), src_dims_));
          case Mode::kSrcDims: break;
        }
        return InferExtents(from, SourceDimExtents(from, src_dims_));
      }));
      const int ndim = out.shapes.back().ndim();
      keeps_ndim = keeps_ndim && ndim == in.layout.ndim();
      if (!layout_.empty() && ndim != static_cast<int>(layout_.size())) {
        throw InvalidArgument(spec().Describe() + ": sample " + std::to_string(s) + ": argument \"layout\": \"" +
                              layout_ + "\" has " + std::to_string(layout_.size()) + " axes, the output shape " +
                              out.shapes.back().ToString() + " " + std::to_string(ndim));
      }
    }
    out.layout = !layout_.empty() ? Layout(layout_) : keeps_ndim ? in.layout : Layout();
    return out;
  }

 private:
  enum class Mode { kShape, kRelShape, kSrcDims };

  void CheckLayoutDims(size_t ndim) const {
    if (!layout_.empty() && layout_.size() != ndim) {
      throw InvalidArgument(spec().Describe() + ": argument \"layout\": \"" + layout_ + "\" has " +
                            std::to_string(layout_.size()) + " axes, the output " + std::to_string(ndim));
    }
  }

  Mode mode_ = Mode::kShape;
  std::vector<int64_t> src_dims_;
  std::string layout_;
};

const OperatorRegistration<ReshapeOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
