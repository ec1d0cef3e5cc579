// select: per sample, `result` where `enable` is nonzero, else `input` unchanged — the step that
// makes any node conditional (`enable:` / `probability:` on an op entry; core/pipeline/conditions.h
// inserts it, docs/yaml.md "Conditions"). Usable directly too.
//
// | input  | dtypes | layouts | notes                                                      |
// |--------|--------|---------|------------------------------------------------------------|
// | input  | any    | any     | taken where enable is 0                                    |
// | result | same   | same    | taken where enable is nonzero; same ndim, any extents      |
// | output | same   | same    | each sample has the shape of the sample it copies          |
//
// `enable`: a constant or one bool/integer scalar per sample (host data; checked every batch).
// CPU: one memcpy per sample. GPU: one launch for the batch (operators/copy's CopySamplesGpu) with
// per-sample source, destination and size in slot descriptors written in PrepareGpu — so a
// captured launch replays with each iteration's choices. Cost: the bytes of every sample are
// copied once; the node before it computed every sample.
#include <cstring>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/copy/copy.h"

namespace conveyor::ops {
namespace {

const OpSchema kSelectSchema =
    OpSchema("select")
        .Doc("Per sample, `result` where `enable` is nonzero, else `input` unchanged (one dtype, layout and ndim "
             "for both). The pipeline inserts it after a node with `enable:` or `probability:` (docs/yaml.md, "
             "\"Conditions\").")
        .Input("input", {}, {}, Placement::kOpDevice, "Passed through where enable is 0.")
        .Input("result", {}, {}, Placement::kOpDevice, "Taken where enable is nonzero.")
        .Output("output", "Each sample as the input it comes from: shape, dtype and layout.")
        .Arg<bool>("enable", true, "Which input each sample takes: nonzero → result. Fed per sample, one bool or "
                   "integer scalar per sample.", PerSample::kAllowed)
        .Arg<std::string>("condition_of", "", "Set by the pipeline for a node's enable: or probability: (that "
                          "node and key, which the messages name); leave it empty.")
        .Backends({Device::kCpu, Device::kGpu})
        .Capturable();

bool IsMaskDType(DType d) {
  return d == DType::kBool || d == DType::kUInt8 || d == DType::kInt8 || d == DType::kUInt16 ||
         d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}

std::string LayoutText(const Layout& l) { return l.str().empty() ? "no layout" : "layout " + std::string(l.str()); }

class SelectOp final : public Operator {
 public:
  explicit SelectOp(const OpSpec& spec)
      : Operator(spec), condition_of_(spec.Arg<std::string>("condition_of")) {}

  OutputDescs Setup(const Workspace& ws) override {
    const TensorListDesc in = ws.InputDesc(0);
    const TensorListDesc result = ws.InputDesc(1);
    const size_t n = in.shapes.size();
    if (result.shapes.size() != n) {
      Mismatch(ws, "number of samples", std::to_string(result.shapes.size()), std::to_string(n));
    }
    if (result.dtype != in.dtype) Mismatch(ws, "dtype", std::string(DTypeName(result.dtype)), std::string(DTypeName(in.dtype)));
    if (result.layout != in.layout) Mismatch(ws, "layout", LayoutText(result.layout), LayoutText(in.layout));
    ReadMask(ws, n);
    OutputDesc out{{}, in.dtype, in.layout};
    out.shapes.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      if (result.shapes[i].ndim() != in.shapes[i].ndim()) {
        Mismatch(ws, "ndim", std::to_string(result.shapes[i].ndim()) + " (sample " + std::to_string(i) + ": " +
                                 result.shapes[i].ToString() + ")",
                 std::to_string(in.shapes[i].ndim()) + " (" + in.shapes[i].ToString() + ")");
      }
      out.shapes.push_back(selected_[i] ? result.shapes[i] : in.shapes[i]);
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    const TensorListCPU& in = ws.InputCpu(0);
    const TensorListCPU& result = ws.InputCpu(1);
    TensorListCPU& out = ws.OutputCpu(0);
    const size_t element = DTypeSize(out.dtype());
    ws.ParallelFor(out.num_samples(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        const TensorListCPU& from = selected_[i] ? result : in;
        const size_t bytes = static_cast<size_t>(from.shape(s).num_elements()) * element;
        if (bytes) std::memcpy(out.raw_sample(s), from.raw_sample(s), bytes);
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    const TensorListGPU& in = ws.InputGpu(0);
    const TensorListGPU& result = ws.InputGpu(1);
    TensorListGPU& out = ws.OutputGpu(0);
    const int64_t element = static_cast<int64_t>(DTypeSize(out.dtype()));
    SampleCopy* d = descs_.Write(ws.slot(), static_cast<size_t>(out.num_samples()), ws.stream());
    for (int s = 0; s < out.num_samples(); ++s) {
      const TensorListGPU& from = selected_[static_cast<size_t>(s)] ? result : in;
      d[s] = {from.raw_sample(s), out.raw_sample(s), from.shape(s).num_elements() * element};
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    // Sizes and sources come from the descriptors: a replay copies this iteration's choices. Uploaded
    // before any early return: inside a captured segment every Write of PrepareGpu has its Upload.
    const SampleCopy* d = descs_.Upload(ws.slot(), ws.stream());
    if (out.num_samples() == 0 || out.buffer().empty()) return;
    CopySamplesGpu(d, out.num_samples(), static_cast<int64_t>(out.buffer().size()), ws.stream());
  }

 private:
  // The mask of this batch into selected_, checking a fed one: one bool/integer per sample.
  void ReadMask(const Workspace& ws, size_t n) {
    selected_.assign(n, 1);
    const TensorListCPU* fed = ws.ArgInput("enable");
    if (fed == nullptr) {
      selected_.assign(n, ws.Arg<bool>("enable") ? 1 : 0);
      return;
    }
    if (static_cast<size_t>(fed->num_samples()) != n) {
      BadMask(ws, "has " + std::to_string(fed->num_samples()) + " samples, the batch " + std::to_string(n));
    }
    const DType dtype = fed->dtype();
    for (size_t i = 0; i < n; ++i) {
      const int s = static_cast<int>(i);
      if (!IsMaskDType(dtype) || fed->shape(s).num_elements() != 1) {
        BadMask(ws, "must be one bool or integer per sample; sample " + std::to_string(i) + " is " +
                        std::string(DTypeName(dtype)) + " " + fed->shape(s).ToString());
      }
      const auto* p = static_cast<const unsigned char*>(fed->raw_sample(s));
      bool any = false;
      for (size_t b = 0; b < DTypeSize(dtype); ++b) any = any || p[b] != 0;  // integers: nonzero bytes
      selected_[i] = any ? 1 : 0;
    }
  }

  // A conditioned node's messages lead with its enable:/probability: position and name it; a
  // select written by hand names itself (the executor adds the argument's position).
  std::string Where(const Workspace& ws) const {
    const SourceLocation at = ws.spec().Location("node");
    return (at.empty() ? "" : at.ToString() + ": ") + condition_of_ + ": ";
  }

  [[noreturn]] void Mismatch(const Workspace& ws, const std::string& what, const std::string& result,
                             const std::string& input) const {
    const OpSpec& spec = ws.spec();
    if (condition_of_.empty()) {
      throw InvalidArgument(spec.Describe() + ": input \"" + spec.inputs()[0] + "\" and result \"" +
                            spec.inputs()[1] + "\" must have one " + what + "; result has " + result +
                            ", input " + input);
    }
    throw ConfigError(Where(ws) + "unselected samples pass input \"" + spec.inputs()[0] +
                      "\" through unchanged, so the node's output must keep its " + what + "; output \"" +
                      spec.outputs()[0] + "\" has " + result + ", the input " + input);
  }

  [[noreturn]] void BadMask(const Workspace& ws, const std::string& what) const {
    const std::string source = ws.spec().arg_inputs().at("enable");
    if (condition_of_.empty()) {
      throw InvalidArgument(ws.spec().Describe() + ": argument \"enable\" (\"$" + source + "\") " + what);
    }
    throw ConfigError(Where(ws) + "\"$" + source + "\" " + what);
  }

  std::string condition_of_;      // "" when written by hand
  std::vector<uint8_t> selected_;  // this batch's choice per sample, from Setup
  SlotDescriptors<SampleCopy> descs_;
};

const OperatorRegistration<SelectOp> kRegistration(kSelectSchema);

}  // namespace
}  // namespace conveyor::ops
