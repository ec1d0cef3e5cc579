// cat and stack (DALI's names and arguments): join several inputs, sample by sample.
//
// | op    | inputs                                  | arguments                   | output                  |
// |-------|-----------------------------------------|-----------------------------|-------------------------|
// | cat   | 1+ (repeating)  , same dtype, same | axis (default 0, negative:  | extents add up on axis; |
// |       | dims, extents equal except on the axis  | from the back) or axis_name | the inputs' layout      |
// | stack | 1+, same dtype, equal shapes            | axis in [-ndim-1, ndim];    | a new axis of extent    |
// |       |                                         | axis_name: its layout letter| #inputs; layout: with   |
// |       |                                         |                             | axis_name, else none    |
//
// Inputs with a layout must agree on it. Any dtype. GPU: one launch per batch (one piece per
// sample and input, cat.h), capturable.
#include <string>
#include <vector>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/tensor/cat.h"
#include "operators/tensor/op_context.h"
#include "operators/tensor/tensor_shapes.h"

namespace conveyor::ops {
namespace {

constexpr int kMaxJoinInputs = 64;

OpSchema JoinSchema(const std::string& name, const std::string& doc, const std::string& axis_doc,
                    const std::string& axis_name_doc) {
  OpSchema schema(name);
  schema.Doc(doc);
  schema.Input("input", {}, {}, {}, "Inputs to join, in order.").RepeatLastInput(1, kMaxJoinInputs);
  schema.Output("output")
      .Arg<int64_t>("axis", 0, axis_doc)
      .Arg<std::string>("axis_name", "", axis_name_doc)
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
  return schema;
}

const OpSchema kCatSchema = JoinSchema(
    "cat", "Concatenates the inputs along an existing axis (extents equal on every other axis).",
    "The axis to join along (negative: counted from the back).",
    "The layout letter of the axis to join along (instead of axis; the inputs need that layout).");
const OpSchema kStackSchema = JoinSchema(
    "stack", "Stacks equally shaped inputs along a new axis of extent = the number of inputs.",
    "Where the new axis goes in the output, -ndim-1..ndim (negative: counted from the back).",
    "The layout letter of the new axis (the output has no layout without it).");

class JoinOp : public Operator {
 public:
  JoinOp(const OpSpec& spec, bool stack)
      : Operator(spec), stack_(stack), axis_(spec.Arg<int64_t>("axis")), axis_name_(spec.Arg<std::string>("axis_name")) {
    if (!stack_ && !axis_name_.empty() && spec.HasArg("axis")) {
      throw InvalidArgument(spec.Describe() + ": argument \"axis_name\": give axis or axis_name, not both");
    }
    if (stack_ && axis_name_.size() > 1) {
      throw InvalidArgument(spec.Describe() + ": argument \"axis_name\": expected one letter, got \"" + axis_name_ + "\"");
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    const int n = ws.num_inputs();
    std::vector<TensorListDesc> ins;
    for (int k = 0; k < n; ++k) ins.push_back(ws.InputDesc(k));
    const std::string layout = CheckInputs(ins);
    const size_t samples = ins[0].shapes.size();
    TensorListDesc out;
    out.dtype = ins[0].dtype;
    piece_shapes_.resize(samples * static_cast<size_t>(n));
    axes_.resize(samples);
    std::vector<Shape> shapes(static_cast<size_t>(n));
    for (size_t s = 0; s < samples; ++s) {
      for (int k = 0; k < n; ++k) shapes[static_cast<size_t>(k)] = ins[static_cast<size_t>(k)].shapes[s];
      out.shapes.push_back(ForSample(spec(), static_cast<int>(s), [&] {
        const int axis = Axis(shapes[0].ndim(), layout);
        const Shape joined = stack_ ? StackedShape(shapes, axis) : ConcatenatedShape(shapes, axis);  // checks first
        for (int k = 0; k < n; ++k) {
          const Shape& in = shapes[static_cast<size_t>(k)];
          piece_shapes_[s * static_cast<size_t>(n) + static_cast<size_t>(k)] = stack_ ? ExpandedShape(in, {axis}) : in;
        }
        axes_[s] = axis;
        return joined;
      }));
    }
    out.layout = OutputLayout(layout, samples ? out.shapes[0].ndim() : 0);
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    TensorListCPU& out = ws.OutputCpu(0);
    const int n = ws.num_inputs();
    ws.ParallelFor(out.num_samples(), 1, [&](int64_t begin, int64_t end) {
      std::vector<CatPiece> pieces(static_cast<size_t>(n));
      std::vector<const void*> srcs(static_cast<size_t>(n));
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        for (int k = 0; k < n; ++k) srcs[static_cast<size_t>(k)] = ws.InputCpu(k).raw_sample(s);
        Plan(s, n, srcs.data(), out.raw_sample(s), DTypeSize(out.dtype()), pieces.data());
        for (const CatPiece& p : pieces) CatCpu(p);
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = ws.num_inputs();
    const size_t count = static_cast<size_t>(out.num_samples()) * static_cast<size_t>(n);
    CatPiece* pieces = descs_.Write(ws.slot(), count, ws.stream());
    srcs_.resize(static_cast<size_t>(n));
    for (int s = 0; s < out.num_samples(); ++s) {
      for (int k = 0; k < n; ++k) srcs_[static_cast<size_t>(k)] = ws.InputGpu(k).raw_sample(s);
      Plan(s, n, srcs_.data(), out.raw_sample(s), DTypeSize(out.dtype()), pieces + static_cast<size_t>(s) * n);
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const CatPiece* pieces = descs_.Upload(ws.slot(), ws.stream());  // every iteration, as Write
    const int samples = out.num_samples();
    if (samples == 0 || out.buffer().empty()) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size()) / samples;
    CatGpu(pieces, samples * ws.num_inputs(), hint, ws.stream());
  }

 private:
  // Same dtype and sample count everywhere; returns the layout the inputs that have one share.
  std::string CheckInputs(const std::vector<TensorListDesc>& ins) const {
    std::string layout;
    int with_layout = -1;
    for (size_t k = 0; k < ins.size(); ++k) {
      const TensorListDesc& in = ins[k];
      const std::string input = "input " + std::to_string(k);
      if (in.dtype != ins[0].dtype) {
        throw InvalidArgument(spec().Describe() + ": " + input + " has dtype " + std::string(DTypeName(in.dtype)) +
                              ", input 0 " + std::string(DTypeName(ins[0].dtype)) + "; expected one dtype");
      }
      if (in.shapes.size() != ins[0].shapes.size()) {
        throw InvalidArgument(spec().Describe() + ": " + input + " has " + std::to_string(in.shapes.size()) +
                              " samples, input 0 " + std::to_string(ins[0].shapes.size()));
      }
      if (in.layout.empty()) continue;
      if (with_layout >= 0 && std::string(in.layout.str()) != layout) {
        throw InvalidArgument(spec().Describe() + ": " + input + " has layout " + std::string(in.layout.str()) +
                              ", input " + std::to_string(with_layout) + " " + layout + "; expected one layout");
      }
      if (with_layout < 0) with_layout = static_cast<int>(k), layout = std::string(in.layout.str());
    }
    return layout;
  }

  int Axis(int ndim, const std::string& layout) const {
    if (stack_) return NormalizeAxis(axis_, ndim + 1, "argument \"axis\"");
    if (axis_name_.empty()) return NormalizeAxis(axis_, ndim, "argument \"axis\"");
    if (layout.empty()) {
      throw InvalidArgument("argument \"axis_name\": \"" + axis_name_ + "\" needs an input layout; no input has one");
    }
    return AxesOfNames(axis_name_, layout, "argument \"axis_name\"").at(0);
  }

  Layout OutputLayout(const std::string& layout, int out_ndim) const {
    if (!stack_) return Layout(layout);
    if (axis_name_.empty()) return Layout();
    if (layout.empty() && out_ndim > 1) {
      throw InvalidArgument(spec().Describe() + ": argument \"axis_name\": \"" + axis_name_ +
                            "\" needs an input layout to insert into; no input has one");
    }
    return ForNode(spec(), "argument \"axis_name\": ",
                   [&] { return Layout(LayoutWith(layout, {axes_.empty() ? 0 : axes_[0]}, axis_name_)); });
  }

  void Plan(int s, int n, const void* const* srcs, void* out, size_t element_size, CatPiece* pieces) const {
    PlanCat(piece_shapes_.data() + static_cast<size_t>(s) * n, srcs, n, out, axes_[static_cast<size_t>(s)],
            element_size, pieces);
  }

  bool stack_;
  int64_t axis_;
  std::string axis_name_;
  std::vector<Shape> piece_shapes_;  // Setup's, [sample * inputs + input]
  std::vector<int> axes_;            // Setup's, per sample
  std::vector<const void*> srcs_;
  SlotDescriptors<CatPiece> descs_;
};

class CatOp final : public JoinOp {
 public:
  explicit CatOp(const OpSpec& spec) : JoinOp(spec, false) {}
};
class StackOp final : public JoinOp {
 public:
  explicit StackOp(const OpSpec& spec) : JoinOp(spec, true) {}
};

const OperatorRegistration<CatOp> kCatRegistration(kCatSchema);
const OperatorRegistration<StackOp> kStackRegistration(kStackSchema);

}  // namespace
}  // namespace conveyor::ops
