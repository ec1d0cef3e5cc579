// transpose (DALI's name and arguments): output axis d is input axis perm[d].
//
// | input                        | arguments                          | output                         |
// |------------------------------|------------------------------------|--------------------------------|
// | any dtype (1/2/4/8-byte      | perm: a permutation of 0..ndim-1   | same dtype, shape permuted;    |
// | elements), samples of        | output_layout: "" (default) =      | layout: output_layout, else the|
// | perm.size() dims             | derived; transpose_layout (true)   | input's permuted (or copied)   |
//
// GPU: one launch per batch, capturable (per-sample plans in descriptors, transpose.h).
#include <string>
#include <vector>

#include "core/error.h"
#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/transpose/transpose.h"

namespace conveyor::ops {
namespace {

const OpSchema kSchema =
    OpSchema("transpose")
        .Doc("Permutes the axes of every sample: output axis d is input axis perm[d] (HWC -> CHW is perm [2, 0, 1]). "
             "Any dtype.")
        .Input("input")
        .Output("output")
        .RequiredArg<std::vector<int64_t>>("perm", "A permutation of 0..ndim-1: output axis d is input axis perm[d].")
        .Arg<std::string>("output_layout", "",
                          "Layout of the output; empty (default): derived from the input's (see transpose_layout).")
        .Arg<bool>("transpose_layout", true,
                   "Without output_layout: true permutes the input layout's letters with perm, false copies it.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

std::string ListText(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

class TransposeOp final : public Operator {
 public:
  explicit TransposeOp(const OpSpec& spec)
      : Operator(spec),
        output_layout_(spec.Arg<std::string>("output_layout")),
        transpose_layout_(spec.Arg<bool>("transpose_layout")) {
    const std::vector<int64_t> perm = spec.Arg<std::vector<int64_t>>("perm");
    for (int64_t p : perm) perm_.push_back(static_cast<int>(p));
    std::vector<bool> seen(perm.size(), false);
    bool ok = perm.size() <= static_cast<size_t>(Shape::kMaxDims);
    for (int64_t p : perm) {
      ok = ok && p >= 0 && p < static_cast<int64_t>(perm.size()) && !seen[static_cast<size_t>(p)];
      if (ok) seen[static_cast<size_t>(p)] = true;
    }
    if (!ok) {
      throw InvalidArgument(spec.Describe() + ": argument \"perm\": expected a permutation of 0.." +
                            std::to_string(static_cast<int64_t>(perm.size()) - 1) + " (at most " +
                            std::to_string(Shape::kMaxDims) + " dims), got " + ListText(perm_));
    }
    if (!output_layout_.empty() && static_cast<size_t>(Layout(output_layout_).ndim()) != perm_.size()) {
      throw InvalidArgument(spec.Describe() + ": argument \"output_layout\": \"" + output_layout_ + "\" has " +
                            std::to_string(output_layout_.size()) + " letters, expected " +
                            std::to_string(perm_.size()) + " (one per axis of perm)");
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc& in = ws.InputDesc(0);
    const int ndim = static_cast<int>(perm_.size());
    if (DTypeSize(in.dtype) != 1 && DTypeSize(in.dtype) != 2 && DTypeSize(in.dtype) != 4 && DTypeSize(in.dtype) != 8) {
      throw InvalidArgument(spec().Describe() + ": input 0: dtype " + std::string(DTypeName(in.dtype)) +
                            " has " + std::to_string(DTypeSize(in.dtype)) + "-byte elements, expected 1, 2, 4 or 8");
    }
    TensorListDesc out;
    out.dtype = in.dtype;
    plans_.assign(in.shapes.size(), TransposeSample{});
    for (size_t i = 0; i < in.shapes.size(); ++i) {
      const Shape& s = in.shapes[i];
      if (s.ndim() != ndim) {
        throw InvalidArgument(spec().Describe() + ": argument \"perm\": " + ListText(perm_) + " permutes " +
                              std::to_string(ndim) + " dims, but input 0 sample " + std::to_string(i) +
                              " has shape " + s.ToString() + " (" + std::to_string(s.ndim()) + " dims)");
      }
      out.shapes.push_back(TransposedShape(s, perm_));
      plans_[i] = PlanTranspose(s, perm_);
    }
    if (!output_layout_.empty()) {
      out.layout = Layout(output_layout_);
    } else if (!in.layout.empty()) {
      if (in.layout.ndim() != ndim) {
        throw InvalidArgument(spec().Describe() + ": input 0: layout " + std::string(in.layout.str()) + " has " +
                              std::to_string(in.layout.ndim()) + " axes, perm " + ListText(perm_) + " permutes " +
                              std::to_string(ndim));
      }
      if (transpose_layout_) {
        std::string letters;
        for (int p : perm_) letters += in.layout.str()[static_cast<size_t>(p)];
        out.layout = Layout(letters);
      } else {
        out.layout = in.layout;
      }
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    TensorListCPU& out = ws.OutputCpu(0);
    const size_t size = DTypeSize(in.dtype());
    ws.ParallelFor(in.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        TransposeCpu(in.raw_sample(s), out.raw_sample(s), in.shape(s), perm_, size);
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    TensorListGPU& out = ws.OutputGpu(0);
    TransposeSample* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int i = 0; i < out.num_samples(); ++i) {
      d[i] = plans_[static_cast<size_t>(i)];
      d[i].in = in.raw_sample(i);
      d[i].out = out.raw_sample(i);
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = out.num_samples();
    if (n == 0) return;
    const size_t size = DTypeSize(out.dtype());
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / size) / n;
    TransposeGpu(descs_.Upload(ws.slot(), ws.stream()), n, hint, size, ws.stream());
  }

 private:
  std::vector<int> perm_;
  std::string output_layout_;
  bool transpose_layout_;
  std::vector<TransposeSample> plans_;
  SlotDescriptors<TransposeSample> descs_;
};

const OperatorRegistration<TransposeOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
