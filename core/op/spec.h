// OpSpec: one node of a pipeline — which operator, its node name, device, the data it reads and
// writes (by output name), its argument values, and the arguments fed per sample by other nodes.
//
// A spec is checked against its schema by Validate(); the YAML loader adds the file position of
// the offending field, so `SpecError::field()` names which part of the spec was wrong.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/op/arg.h"
#include "core/op/schema.h"

namespace conveyor {

// A position in a source file, 1-based; empty file for specs built in C++.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  bool empty() const { return file.empty(); }
  std::string ToString() const;  // "pipelines/augment.yaml:7:45"
};

// The device a node asks for in YAML: auto picks the GPU when the pipeline runs on one.
enum class DeviceRequest { kCpu, kGpu, kAuto };
std::string_view DeviceRequestName(DeviceRequest device);  // "cpu", "gpu", "auto"

class OpSpec {
 public:
  OpSpec() = default;
  OpSpec(std::string op, std::string name) : op_(std::move(op)), name_(std::move(name)) {}

  const std::string& op() const { return op_; }
  const std::string& name() const { return name_; }
  DeviceRequest device() const { return device_; }
  const std::vector<std::string>& inputs() const { return inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  // Values set explicitly (defaults come from the schema through Arg()).
  const std::map<std::string, ArgValue>& args() const { return args_; }
  // Argument name → the output name whose per-sample values feed it ("$flip" → "flip").
  const std::map<std::string, std::string>& arg_inputs() const { return arg_inputs_; }

  OpSpec& set_op(std::string op) { op_ = std::move(op); return *this; }
  OpSpec& set_name(std::string name) { name_ = std::move(name); return *this; }
  OpSpec& set_device(DeviceRequest device) { device_ = device; return *this; }
  OpSpec& AddInput(std::string output_name) { inputs_.push_back(std::move(output_name)); return *this; }
  OpSpec& AddOutput(std::string output_name) { outputs_.push_back(std::move(output_name)); return *this; }
  OpSpec& SetArg(const std::string& name, ArgValue value) { args_[name] = std::move(value); return *this; }
  OpSpec& SetArgInput(const std::string& name, std::string output_name) {
    arg_inputs_[name] = std::move(output_name);
    return *this;
  }
  // Drops the feed of argument `name` (a `$output`), if any; returns whether there was one.
  bool ClearArgInput(const std::string& name) { return arg_inputs_.erase(name) != 0; }

  bool HasArg(const std::string& name) const { return args_.count(name) != 0; }
  // The explicit value, else the schema default. Throws InvalidArgument when the schema has no
  // such argument or it is required and unset; ConfigError when the operator is not registered.
  template <typename T>
  T Arg(const std::string& name) const {
    return ArgOrDefault(name).As<T>();
  }
  // A reference to the spec's value or the schema's default (both outlive the spec's use).
  const ArgValue& ArgOrDefault(const std::string& name) const;

  // The registered schema (looked up by op name). Throws ConfigError with suggestions.
  const OpSchema& schema() const;

  // Where each field came from: keys "op", "name", "device", "inputs.N", "outputs.N",
  // "args.NAME" (the value), "args.NAME:key" (the key) and "node" (the list entry). Location()
  // falls back to "node" and then to an empty location.
  void SetLocation(const std::string& field, SourceLocation location) { locations_[field] = std::move(location); }
  SourceLocation Location(const std::string& field) const;

  // The schema outputs this node has, in slot order: the fixed ones and the optional ones whose
  // enabling argument is true. (For OutputPerEntryOf, the one declared output.)
  std::vector<const OutputSchema*> EnabledOutputs() const;
  // The slot (index into outputs(), Workspace::Output) of schema output `name`, or -1 when it is
  // an optional output that is disabled. Throws InvalidArgument for a name the schema lacks.
  int OutputSlot(std::string_view name) const;

  // `op "flip" (flip)`: how messages name a node.
  std::string Describe() const;

  // Checks the spec against its schema: the op exists, the device is supported, as many inputs
  // and outputs as the schema declares (the fixed outputs and the enabled optional ones), every argument known, typed and in range, required ones
  // set, argument inputs only where PerSample::kAllowed. Throws SpecError.
  void Validate() const;

  // Equal when everything but source locations is equal (the YAML round trip).
  friend bool operator==(const OpSpec& a, const OpSpec& b) {
    return a.op_ == b.op_ && a.name_ == b.name_ && a.device_ == b.device_ && a.inputs_ == b.inputs_ &&
           a.outputs_ == b.outputs_ && a.args_ == b.args_ && a.arg_inputs_ == b.arg_inputs_;
  }

 private:
  std::string op_;
  std::string name_;
  DeviceRequest device_ = DeviceRequest::kCpu;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, ArgValue> args_;
  std::map<std::string, std::string> arg_inputs_;
  std::map<std::string, SourceLocation> locations_;
};

// A spec error: what() is "<file:line:col>: op "x" (node): <detail>" (location omitted for specs
// built in C++); detail() is the bare reason and field() the spec field it is about.
class SpecError : public ConfigError {
 public:
  SpecError(const OpSpec& spec, std::string field, const std::string& detail);
  const std::string& field() const { return field_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string field_;
  std::string detail_;
};

}  // namespace conveyor
