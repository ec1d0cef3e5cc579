// python_function: calls user code that the application registered by name (Python's
// conveyor.register_function, C's conveyor_register_function; core/capi/conveyor_function.h) on the
// node's batch. The function chooses its outputs' shapes and dtype, so it runs in Setup and its
// outputs wait in host blocks of ours until RunCpu copies them into the executor's lists.
//
// | inputs           | outputs                         | arguments                                  |
// |------------------|---------------------------------|--------------------------------------------|
// | 1-64, host, any  | num_outputs, shapes/dtype/layout| function (name), num_outputs, batch_       |
// | dtype and layout | as the function sets them       | processing, output_layouts                 |
//
//   Setup (CPU stage, one node at a time)                 RunCpu
//   ┌─ batch_processing: one call, samples [0, n) ─┐      ┌───────────────────────────────┐
//   │  else: n calls, sample s alone, in order     │ ───> │ host blocks → output lists    │
//   └─ the function sets every (output, sample) ───┘      └───────────────────────────────┘
//
// The node binds its function when the pipeline is built (an unregistered name is a SpecError at
// the `function` argument) and holds it until the pipeline goes. Not capturable: CPU only. An
// empty batch calls nothing and gives empty outputs (of the dtype of the last batch, else uint8).
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/capi/function_call.h"
#include "core/capi/function_registry.h"
#include "core/op/registry.h"

namespace conveyor::ops {
namespace {

constexpr int kMaxInputs = 64;
constexpr int kMaxOutputs = 64;

const OpSchema kPythonFunctionSchema =
    OpSchema("python_function")
        .Doc("Calls a function the application registered under `function` (Python: "
             "conveyor.register_function; C: conveyor_register_function) on the batch: host arrays in, "
             "arrays out, their shapes and dtype chosen by the function. Runs on the CPU stage, one call at a "
             "time per node; never captured. `conveyor run` cannot register functions: run such pipelines "
             "from Python or C (docs/python.md, \"User functions\").")
        .Input("input", {}, {}, Placement::kOpDevice, "Host data the function reads (read-only, valid during the call).")
        .RepeatLastInput(1, kMaxInputs)
        .Output("output", "What the function returns, in order.")
        .OutputPerEntryOf("num_outputs")
        .RequiredArg<std::string>("function", "The name the function was registered under.")
        .Arg<int64_t>("num_outputs", 1, "How many outputs the function returns.")
        .Range(1, kMaxOutputs)
        .Arg<bool>("batch_processing", true,
                   "true: one call per batch, each input a list of per-sample arrays; false: one call per sample.")
        .Arg<std::vector<Layout>>("output_layouts", std::vector<Layout>{},
                                  "One layout per output; empty: the layouts the function sets (none in Python).")
        .Backends({Device::kCpu});

class PythonFunctionOp final : public Operator {
 public:
  explicit PythonFunctionOp(const OpSpec& spec)
      : Operator(spec),
        name_(spec.Arg<std::string>("function")),
        num_outputs_(static_cast<int>(spec.Arg<int64_t>("num_outputs"))),
        batch_processing_(spec.Arg<bool>("batch_processing")),
        output_layouts_(spec.Arg<std::vector<Layout>>("output_layouts")) {
    function_ = capi::FunctionRegistry::Global().Find(name_);
    if (!function_) {
      throw SpecError(spec, "args.function",
                      "function \"" + name_ + "\" is not registered (registered: " + capi::RegisteredNamesText() +
                          "); register it before the pipeline is built: conveyor.register_function(\"" + name_ +
                          "\", fn) in Python, conveyor_register_function in C (`conveyor run` cannot call user code)");
    }
    if (!output_layouts_.empty() && static_cast<int>(output_layouts_.size()) != num_outputs_) {
      throw SpecError(spec, "args.output_layouts",
                      "expected " + std::to_string(num_outputs_) + " layouts, one per output (num_outputs: " +
                          std::to_string(num_outputs_) + "), got " + std::to_string(output_layouts_.size()));
    }
    call_.node = spec.name();
    call_.function = name_;
    call_.batch_processing = batch_processing_;
    call_.outputs = &outputs_;
  }

  OutputDescs Setup(const Workspace& ws) override {
    const int n = BindInputs(ws);
    outputs_.Reset(num_outputs_, n);
    if (n > 0 && batch_processing_) Invoke(ws, 0, n);
    for (int s = 0; n > 0 && !batch_processing_ && s < n; ++s) Invoke(ws, s, 1);
    if (const auto unset = outputs_.FirstUnset()) {
      throw InvalidArgument(Prefix() + " returned without output " + std::to_string(unset->first) + " of sample " +
                            std::to_string(unset->second) + "; a function sets every output (num_outputs: " +
                            std::to_string(num_outputs_) + ") of every sample it is given");
    }
    OutputDescs descs(static_cast<size_t>(num_outputs_));
    for (int o = 0; o < num_outputs_; ++o) {
      OutputDesc& d = descs[static_cast<size_t>(o)];
      for (int s = 0; s < n; ++s) d.shapes.push_back(outputs_.shape(o, s));
      d.dtype = outputs_.dtype(o);
      d.layout = output_layouts_.empty() ? outputs_.layout(o) : output_layouts_[static_cast<size_t>(o)];
      CheckLayout(d, o);
    }
    return descs;
  }

  void RunCpu(Workspace& ws) override {
    const int n = outputs_.num_samples();
    ws.ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int s = static_cast<int>(i);
        for (int o = 0; o < num_outputs_; ++o) {
          const size_t bytes = outputs_.bytes(o, s);
          if (bytes > 0) std::memcpy(ws.OutputCpu(o).raw_sample(s), outputs_.data(o, s), bytes);
        }
      }
    });
  }

 private:
  // `argument "function" ("double")`: the quoted argument name leads the executor's message with
  // the argument's YAML position.
  std::string Prefix() const { return "argument \"function\" (\"" + name_ + "\")"; }

  // Points the call at this batch's inputs; returns the batch's sample count.
  int BindInputs(const Workspace& ws) {
    call_.inputs.clear();
    call_.input_layouts.clear();
    const int n = ws.InputCpu(0).num_samples();
    for (int i = 0; i < ws.num_inputs(); ++i) {
      const TensorListCPU& in = ws.InputCpu(i);
      if (in.num_samples() != n) {
        throw InvalidArgument("input " + std::to_string(i) + ": expected " + std::to_string(n) +
                              " samples, as input 0 has, got " + std::to_string(in.num_samples()));
      }
      call_.inputs.push_back(&in);
      call_.input_layouts.emplace_back(in.layout().str());
    }
    call_.iteration = ws.iteration();
    return n;
  }

  // One call for samples [first, first + count); throws the function's failure with its message.
  void Invoke(const Workspace& ws, int first, int count) {
    call_.first_sample = first;
    call_.num_samples = count;
    call_.error.clear();
    call_.refused.clear();
    int32_t status = 0;
    try {
      status = function_->Call(&call_);
    } catch (const std::exception& e) {  // C++ callers' functions; C and Python ones cannot throw
      throw InvalidArgument(Prefix() + " threw on " + Samples(ws, first, count) + ": " + e.what());
    }
    if (!call_.refused.empty()) {
      throw InvalidArgument(Prefix() + " failed on " + Samples(ws, first, count) + ": " + call_.refused);
    }
    if (status != 0) {
      const std::string why = call_.error.empty()
                                  ? "it returned " + std::to_string(status) +
                                        " without a message (conveyor_function_call_set_error gives one)"
                                  : call_.error;
      throw InvalidArgument(Prefix() + " failed on " + Samples(ws, first, count) + ": " + why);
    }
  }

  // "samples 0 to 7" / "sample 3 (file data/3.jpg)".
  static std::string Samples(const Workspace& ws, int first, int count) {
    if (count != 1) return "samples " + std::to_string(first) + " to " + std::to_string(first + count - 1);
    std::string text = "sample " + std::to_string(first);
    if (const SampleSource* src = ws.InputCpu(0).source(first); src != nullptr && !src->file.empty()) {
      text += " (file " + src->file + ")";
    }
    return text;
  }

  void CheckLayout(const OutputDesc& d, int o) const {
    if (d.layout.empty()) return;
    for (size_t s = 0; s < d.shapes.size(); ++s) {
      if (d.shapes[s].ndim() != d.layout.ndim()) {
        throw InvalidArgument("argument \"output_layouts\": output " + std::to_string(o) + " has layout \"" +
                              std::string(d.layout.str()) + "\" (" + std::to_string(d.layout.ndim()) +
                              " axes), but the function returned shape " + d.shapes[s].ToString() + " for sample " +
                              std::to_string(s));
      }
    }
  }

  std::string name_;
  int num_outputs_;
  bool batch_processing_;
  std::vector<Layout> output_layouts_;
  std::shared_ptr<capi::RegisteredFunction> function_;
  capi::FunctionOutputs outputs_;
  conveyor_function_call_s call_;
};

const OperatorRegistration<PythonFunctionOp> kRegistration(kPythonFunctionSchema);

}  // namespace
}  // namespace conveyor::ops
