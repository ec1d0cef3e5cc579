// math: an arithmetic expression over the node's inputs and per-sample scalars, evaluated in one
// pass (no intermediate tensors; GPU: one launch per batch, capturable).
//
//   - op: math
//     device: gpu
//     inputs: [images, mask]
//     args: {expr: "clamp(images * mask + s0, 0, 255)", s0: $brightness, dtype: uint8}
//
// | inputs                          | arguments                                   | output            |
// |---------------------------------|---------------------------------------------|-------------------|
// | 1..8 (repeating)       , any    | expr (grammar: expr_parser.h); input_names: | broadcast shape;  |
// | dtype each; named in expr by    | the inputs' names in expr (default: the     | dtype: DALI's     |
// | their `inputs:` names; shapes   | `inputs:` names); s0..s3: float32 scalars,  | promotion, or     |
// | broadcast (NumPy rules)         | fed per sample ($node) or constant; dtype   | `dtype` (saturated)|
//
// The expression is parsed once (construction) and compiled again only when the input dtypes
// change. Every error points at the column of expr it is about.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "core/op/registry.h"
#include "core/op/slot_descriptors.h"
#include "operators/math/expr_compiler.h"
#include "operators/math/math.h"
#include "operators/tensor/op_context.h"

namespace conveyor::ops {
namespace {

const char* const kScalarNames[kMaxMathScalars] = {"s0", "s1", "s2", "s3"};

std::vector<std::string> DTypeChoices() {
  std::vector<std::string> choices = {"auto"};
  for (DType t : kAllDTypes) choices.emplace_back(DTypeName(t));
  return choices;
}

OpSchema MathSchema() {
  OpSchema schema("math");
  schema.Doc("Evaluates an arithmetic expression element-wise over its inputs (NumPy broadcasting) and per-sample "
             "scalars s0..s3, with DALI's type promotion; one pass, no intermediate tensors.");
  schema.Input("input", {}, {}, {}, "Tensors the expression names.").RepeatLastInput(1, kMaxMathInputs);
  schema.Output("output")
      .RequiredArg<std::string>("expr",
                                "The expression: + - * / // % ** unary -, == != < <= > >=, abs floor ceil round sqrt "
                                "exp log pow min max clamp where, numbers, input names, s0..s3.")
      .Arg<std::vector<std::string>>("input_names", {},
                                     "The names of the inputs in expr, in order; empty (default): their names in "
                                     "`inputs:`.");
  for (const char* name : kScalarNames) {
    schema.Arg<double>(name, 0.0, std::string("A float32 scalar the expression may use as ") + name + ".",
                       PerSample::kAllowed);
  }
  schema.Arg<std::string>("dtype", "auto", "The output dtype; auto (default): the type promotion's result.")
      .Choices(DTypeChoices())
      .Backends({Device::kCpu, Device::kGpu})
      .Capturable();
  return schema;
}

const OpSchema kSchema = MathSchema();

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

class MathOp final : public Operator {
 public:
  explicit MathOp(const OpSpec& spec) : Operator(spec) {
    const std::string dtype = spec.Arg<std::string>("dtype");
    if (dtype != "auto") out_type_ = ParseDType(dtype);
    BindNames(spec);
    tree_ = Guard([&] { return ParseExpression(spec.Arg<std::string>("expr")); });
    const ExprUse use = Guard([&] { return ResolveNames(tree_, bindings_); });
    for (size_t k = 0; k < use.inputs.size(); ++k) {
      if (use.inputs[k] == 0) {
        throw InvalidArgument(spec.Describe() + ": argument \"expr\": input " + std::to_string(k) + " (\"" +
                              bindings_.inputs[k] + "\") is not used by \"" + tree_.source +
                              "\"; every input must appear (input_names renames them)");
      }
      input_names_.push_back("input " + std::to_string(k) + " \"" + bindings_.inputs[k] + "\" (column " +
                             std::to_string(use.inputs[k]) + ")");
    }
    for (size_t s = 0; s < use.scalars.size(); ++s) {
      if (use.scalars[s] == 0) continue;
      const std::string name = kScalarNames[s];
      if (!spec.HasArg(name) && spec.arg_inputs().count(name) == 0) {
        throw InvalidArgument(spec.Describe() + ": argument \"expr\": " +
                              ExprError(tree_.source, use.scalars[s], "uses " + name + ", which is not set; give argument \"" +
                                                                          name + "\" a value or feed it per sample ($node)")
                                  .what());
      }
      used_scalars_.push_back(static_cast<int>(s));
    }
  }

  OutputDescs Setup(const Workspace& ws) override {
    const int n = ws.num_inputs();
    if (static_cast<size_t>(n) != bindings_.inputs.size()) {
      throw InvalidArgument(spec().Describe() + ": bound " + std::to_string(n) + " inputs, the spec names " +
                            std::to_string(bindings_.inputs.size()));
    }
    std::vector<TensorListDesc> ins;
    std::vector<DType> types;
    for (int k = 0; k < n; ++k) {
      ins.push_back(ws.InputDesc(k));
      types.push_back(ins.back().dtype);
      if (ins.back().shapes.size() != ins[0].shapes.size()) {
        throw InvalidArgument(spec().Describe() + ": " + input_names_[static_cast<size_t>(k)] + " has " +
                              std::to_string(ins.back().shapes.size()) + " samples, input 0 " +
                              std::to_string(ins[0].shapes.size()));
      }
    }
    if (types != compiled_types_) {
      program_ = Guard([&] { return CompileExpression(tree_, bindings_, types, out_type_); });
      compiled_types_ = types;
    }
    const size_t samples = ins.empty() ? 0 : ins[0].shapes.size();
    samples_.assign(samples, MathSample{});
    operands_.assign(samples * static_cast<size_t>(n), MathOperand{});
    std::vector<SampleArg<double>> scalars;
    for (int s : used_scalars_) scalars.emplace_back(ws, kScalarNames[s]);
    TensorListDesc out;
    out.dtype = program_.out_type;
    std::vector<Shape> shapes(static_cast<size_t>(n));
    for (size_t i = 0; i < samples; ++i) {
      for (int k = 0; k < n; ++k) shapes[static_cast<size_t>(k)] = ins[static_cast<size_t>(k)].shapes.at(i);
      MathSample& sample = samples_[i];
      out.shapes.push_back(ForSample(spec(), static_cast<int>(i), [&] {
        return PlanBroadcast(shapes, input_names_, sample, &operands_[i * static_cast<size_t>(n)]);
      }));
      for (size_t u = 0; u < used_scalars_.size(); ++u) {
        sample.scalars[used_scalars_[u]] = static_cast<float>(scalars[u](static_cast<int>(i)));
      }
    }
    for (const TensorListDesc& in : ins) {
      if (samples > 0 && !in.layout.empty() && in.layout.ndim() == out.shapes[0].ndim()) {
        out.layout = in.layout;
        break;
      }
    }
    return {out};
  }

  void RunCpu(Workspace& ws) override {
    TensorListCPU& out = ws.OutputCpu(0);
    const int n = ws.num_inputs();
    std::vector<MathSample> samples = samples_;
    std::vector<MathOperand> operands = operands_;
    constexpr int64_t kChunk = 1 << 16;  // elements per task: big samples spread over the pool
    std::vector<std::pair<int, int64_t>> chunks;
    for (int s = 0; s < out.num_samples(); ++s) {
      samples[static_cast<size_t>(s)].out = out.raw_sample(s);
      for (int k = 0; k < n; ++k) operands[static_cast<size_t>(s) * n + k].data = ws.InputCpu(k).raw_sample(s);
      for (int64_t b = 0; b < samples[static_cast<size_t>(s)].count; b += kChunk) chunks.emplace_back(s, b);
    }
    ws.ParallelFor(static_cast<int64_t>(chunks.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const auto [s, from] = chunks[static_cast<size_t>(c)];
        const MathSample& sample = samples[static_cast<size_t>(s)];
        MathCpu(program_, sample, &operands[static_cast<size_t>(s) * n], from, std::min(from + kChunk, sample.count));
      }
    });
  }

  void PrepareGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const int n = ws.num_inputs();
    const size_t samples = static_cast<size_t>(out.num_samples());
    MathSample* d = sample_descs_.Write(ws.slot(), samples, ws.stream());
    MathOperand* o = operand_descs_.Write(ws.slot(), samples * static_cast<size_t>(n), ws.stream());
    for (int s = 0; s < out.num_samples(); ++s) {
      d[s] = samples_[static_cast<size_t>(s)];
      d[s].out = out.raw_sample(s);
      for (int k = 0; k < n; ++k) {
        const size_t at = static_cast<size_t>(s) * n + k;
        o[at] = operands_[at];
        o[at].data = ws.InputGpu(k).raw_sample(s);
      }
    }
  }

  void RunGpu(Workspace& ws) override {
    TensorListGPU& out = ws.OutputGpu(0);
    const MathSample* samples = sample_descs_.Upload(ws.slot(), ws.stream());  // every iteration, as Write
    const MathOperand* operands = operand_descs_.Upload(ws.slot(), ws.stream());
    const int n = out.num_samples();
    if (n == 0 || out.buffer().empty()) return;
    const int64_t hint = static_cast<int64_t>(out.buffer().size() / DTypeSize(out.dtype())) / n;
    MathGpu(program_, samples, operands, n, hint, ws.stream());
  }

 private:
  // An ExprError becomes `op "math" (m): argument "expr": at column ...`.
  template <typename Fn>
  auto Guard(Fn&& fn) -> decltype(fn()) {
    return ForNode<ExprError>(spec(), "argument \"expr\": ", fn);
  }

  void BindNames(const OpSpec& spec) {
    const std::vector<std::string> given = spec.Arg<std::vector<std::string>>("input_names");
    if (!given.empty() && given.size() != spec.inputs().size()) {
      throw InvalidArgument(spec.Describe() + ": argument \"input_names\": expected one name per input (" +
                            std::to_string(spec.inputs().size()) + "), got " + std::to_string(given.size()));
    }
    bindings_.inputs = given.empty() ? spec.inputs() : given;
    if (bindings_.inputs.size() > static_cast<size_t>(kMaxMathInputs)) {
      throw InvalidArgument(spec.Describe() + ": expected at most " + std::to_string(kMaxMathInputs) + " inputs, got " +
                            std::to_string(bindings_.inputs.size()));
    }
    for (const char* s : kScalarNames) bindings_.scalars.emplace_back(s);
    for (size_t k = 0; k < bindings_.inputs.size(); ++k) {
      const std::string& name = bindings_.inputs[k];
      const bool scalar = std::find(bindings_.scalars.begin(), bindings_.scalars.end(), name) != bindings_.scalars.end();
      if (!IsIdentifier(name) || scalar) {
        throw InvalidArgument(spec.Describe() + ": " + (given.empty() ? "" : "argument \"input_names\": ") + "input " +
                              std::to_string(k) + " is named \"" + name + "\", " +
                              (scalar ? "which is a scalar argument's name" : "which expr cannot name") +
                              "; name the inputs with letters, digits and _ (input_names)");
      }
    }
  }

  std::optional<DType> out_type_;
  ExprBindings bindings_;
  ExprTree tree_;
  std::vector<std::string> input_names_;  // "input 1 \"y\" (column 9)", for broadcast errors
  std::vector<int> used_scalars_;
  std::vector<DType> compiled_types_;
  ExprProgram program_{};
  std::vector<MathSample> samples_;    // Setup's, without addresses
  std::vector<MathOperand> operands_;  // Setup's, [sample * inputs + input], without addresses
  SlotDescriptors<MathSample> sample_descs_;
  SlotDescriptors<MathOperand> operand_descs_;
};

const OperatorRegistration<MathOp> kRegistration(kSchema);

}  // namespace
}  // namespace conveyor::ops
