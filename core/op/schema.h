// OpSchema: the single source of truth for an operator — its docs, inputs, outputs, arguments,
// backends and whether its GPU work can be captured in a CUDA graph. Argument checks in the YAML
// loader, `conveyor ops` and the bindings all read it; nothing repeats it.
//
//   const OpSchema kFlipSchema = OpSchema("flip")
//       .Doc("Mirrors each sample along the selected axes.")
//       .Input("images", {"HWC", "CHW"}).Output("flipped")
//       .Arg<bool>("horizontal", true, "Mirror along W.", PerSample::kAllowed)
//       .Backends({Device::kCpu, Device::kGpu}).Capturable();
//
// A schema validates itself when it is registered (Validate()): names are well formed and
// unique, defaults have their argument's type and lie in its range, at least one backend.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/op/arg.h"
#include "core/tensor/dtype.h"
#include "core/tensor/shape.h"

namespace conveyor {

enum class Device { kCpu, kGpu };
std::string_view DeviceName(Device device);  // "cpu", "gpu"

// Whether a per-sample tensor produced by another node ("$node" in YAML) may feed an argument.
enum class PerSample { kNo, kAllowed };

// Where an operator wants an input's data. kOpDevice: on the operator's own device (a GPU op gets
// device memory, so a CPU producer's output is staged across). kHost: on the host even when the
// operator runs on the GPU (a decoder's host phase reads encoded bytes there).
enum class Placement { kOpDevice, kHost };

struct InputSchema {
  std::string name;
  std::vector<Layout> layouts;  // empty: any layout
  std::vector<DType> dtypes;    // empty: any dtype
  Placement placement = Placement::kOpDevice;
  std::string doc;
};

struct OutputSchema {
  std::string name;
  std::string doc;
  // "" for an output that is always there; else the bool argument that must be true for the node
  // to have it (OptionalOutput).
  std::string enabled_by;
  bool optional() const { return !enabled_by.empty(); }
};

struct ArgSchema {
  std::string name;
  ArgType type = ArgType::kInt;
  std::optional<ArgValue> default_value;  // nullopt: required
  std::string doc;
  PerSample per_sample = PerSample::kNo;
  // Inclusive bounds for numbers (each element of a numeric list).
  std::optional<double> min, max;
  // Allowed values for strings (each element of a string list); empty: anything.
  std::vector<std::string> choices;
  // A filesystem path (string or string list): resolved against the YAML file's folder.
  bool is_path = false;

  bool required() const { return !default_value.has_value(); }
  // Empty when `value` is acceptable (type already matches), else why not: "expected a value in
  // [0, 1], got 1.5", "expected one of RGB, BGR, GRAY, got \"RBG\"; did you mean \"RGB\"?".
  std::string CheckValue(const ArgValue& value) const;
};

class OpSchema {
 public:
  explicit OpSchema(std::string name);

  OpSchema& Doc(std::string doc);
  OpSchema& Input(std::string name, std::vector<Layout> layouts = {}, std::vector<DType> dtypes = {},
                  Placement placement = Placement::kOpDevice, std::string doc = "");
  OpSchema& Output(std::string name, std::string doc = "");
  // An output the node has only when bool argument `enabled_by` is true (DALI's readers.coco:
  // `polygons` with polygon_masks). Outputs keep their declared order, the disabled ones left out:
  // a spec names the fixed outputs and the enabled optional ones, and an operator finds an
  // output's slot with OpSpec::OutputSlot. Validate() checks the argument is a plain bool.
  OpSchema& OptionalOutput(std::string name, std::string enabled_by, std::string doc = "");
  // The input declared last repeats (DALI's cat, stack and arithmetic expressions): a spec gives
  // `min_count` to `max_count` inputs in all, the fixed ones before it included, and input k at or
  // past the last declared one takes its schema (InputAt). Validate() checks there is an input to
  // repeat and that 1 <= min_count <= max_count and min_count >= the fixed inputs.
  OpSchema& RepeatLastInput(int min_count, int max_count);
  // The one declared output repeats once per entry of list argument `list_arg` (a reader's
  // `features` or `ext`): a spec names as many outputs as that list (set or default) has entries,
  // and the operator fills them in the list's order. An int argument (python_function's
  // `num_outputs`) gives the count itself. Validate() checks the argument is a list or an int.
  OpSchema& OutputPerEntryOf(std::string list_arg);

  // An argument with a default value.
  template <typename T>
  OpSchema& Arg(std::string name, T default_value, std::string doc, PerSample per_sample = PerSample::kNo) {
    return AddArg(std::move(name), ArgTypeOf<T>(), ArgValue(std::move(default_value)), std::move(doc), per_sample);
  }
  // A required argument (no default); a spec without it is rejected.
  template <typename T>
  OpSchema& RequiredArg(std::string name, std::string doc, PerSample per_sample = PerSample::kNo) {
    return AddArg(std::move(name), ArgTypeOf<T>(), std::nullopt, std::move(doc), per_sample);
  }
  // Bounds and choices apply to the argument declared last.
  OpSchema& Range(double min, double max);
  OpSchema& Min(double min);
  OpSchema& Choices(std::vector<std::string> choices);
  OpSchema& Path();

  OpSchema& Backends(std::vector<Device> backends);
  // Its RunGpu only queues stream work whose parameters come from buffers (see operator.h), so
  // the executor may capture it into a CUDA graph and replay it.
  OpSchema& Capturable(bool capturable = true);
  // A transfer operator: runs on the GPU stream and writes its outputs to host memory, the only
  // way data flows from a GPU node back to a CPU node.
  OpSchema& DeviceToHost();

  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  const std::vector<InputSchema>& inputs() const { return inputs_; }
  // How many inputs a spec may give: inputs().size() both, unless the last input repeats.
  size_t min_inputs() const { return repeats_last_input_ ? static_cast<size_t>(min_inputs_) : inputs_.size(); }
  size_t max_inputs() const { return repeats_last_input_ ? static_cast<size_t>(max_inputs_) : inputs_.size(); }
  bool repeats_last_input() const { return repeats_last_input_; }
  // The schema of a spec's input k (the last declared one for k beyond it).
  const InputSchema& InputAt(size_t k) const { return inputs_.at(std::min(k, inputs_.size() - 1)); }
  // Every declared output, optional ones included, in declaration order.
  const std::vector<OutputSchema>& outputs() const { return outputs_; }
  bool has_optional_outputs() const;
  // "" for a fixed output list; else the list argument whose entries each give one output.
  const std::string& output_per_entry_of() const { return output_per_entry_of_; }
  const std::vector<ArgSchema>& args() const { return args_; }
  const std::vector<Device>& backends() const { return backends_; }
  bool SupportsDevice(Device device) const;
  bool capturable() const { return capturable_; }
  bool device_to_host() const { return device_to_host_; }

  // Null when there is no such argument.
  const ArgSchema* FindArg(std::string_view name) const;
  std::vector<std::string> ArgNames() const;

  // Throws InvalidArgument ("op schema \"flip\": ...") on a malformed schema.
  void Validate() const;

  // A human-readable reference (the `conveyor ops <name>` page).
  std::string Describe() const;

 private:
  OpSchema& AddArg(std::string name, ArgType type, std::optional<ArgValue> default_value, std::string doc,
                   PerSample per_sample);
  ArgSchema& LastArg(const char* what);

  std::string name_;
  std::string doc_;
  std::vector<InputSchema> inputs_;
  bool repeats_last_input_ = false;
  int min_inputs_ = 0;
  int max_inputs_ = 0;
  std::vector<OutputSchema> outputs_;
  std::string output_per_entry_of_;
  std::vector<ArgSchema> args_;
  std::vector<Device> backends_;
  bool capturable_ = false;
  bool device_to_host_ = false;
};

}  // namespace conveyor
