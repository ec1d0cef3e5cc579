#include "core/op/spec.h"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "core/op/registry.h"
#include "core/util/strings.h"

namespace conveyor {

namespace {

std::string Plural(size_t n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

template <typename T>
std::string NameList(const std::vector<T>& items) {
  std::vector<std::string> names;
  for (const T& item : items) names.push_back(item.name);
  return names.empty() ? "" : " (" + Join(names, ", ") + ")";
}

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

// Entries of a list value (1 for a scalar).
size_t ListSize(const ArgValue& value) {
  return std::visit(
      [](const auto& v) -> size_t {
        if constexpr (IsVector<std::decay_t<decltype(v)>>::value) {
          return v.size();
        } else {
          return 1;
        }
      },
      value.variant());
}

std::string Names(const std::vector<const OutputSchema*>& outputs) {
  std::vector<std::string> names;
  for (const OutputSchema* out : outputs) names.push_back(out->name);
  return names.empty() ? "" : " (" + Join(names, ", ") + ")";
}

std::string BackendList(const OpSchema& schema) {
  std::vector<std::string> names;
  for (Device d : schema.backends()) names.emplace_back(DeviceName(d));
  return Join(names, ", ");
}

}  // namespace

std::string SourceLocation::ToString() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string_view DeviceRequestName(DeviceRequest device) {
  switch (device) {
    case DeviceRequest::kCpu:
      return "cpu";
    case DeviceRequest::kGpu:
      return "gpu";
    case DeviceRequest::kAuto:
      return "auto";
  }
  return "?";
}

const OpSchema& OpSpec::schema() const {
  const OpRegistry::Entry* entry = OpRegistry::Global().Find(op_);
  if (entry == nullptr) {
    throw SpecError(*this, "op", "unknown operator \"" + op_ + "\"" + OpRegistry::Global().Suggest(op_));
  }
  return entry->schema;
}

const ArgValue& OpSpec::ArgOrDefault(const std::string& name) const {
  if (auto it = args_.find(name); it != args_.end()) return it->second;
  const ArgSchema* arg = schema().FindArg(name);
  if (arg == nullptr) {
    throw InvalidArgument(Describe() + ": the schema has no argument \"" + name + "\"" +
                          DidYouMean(name, schema().ArgNames()));
  }
  if (!arg->default_value) throw InvalidArgument(Describe() + ": required argument \"" + name + "\" is not set");
  return *arg->default_value;
}

SourceLocation OpSpec::Location(const std::string& field) const {
  if (auto it = locations_.find(field); it != locations_.end()) return it->second;
  // "args.x:key" falls back to "args.x", then to the node.
  if (const size_t colon = field.find(':'); colon != std::string::npos) return Location(field.substr(0, colon));
  if (auto it = locations_.find("node"); it != locations_.end()) return it->second;
  return {};
}

std::vector<const OutputSchema*> OpSpec::EnabledOutputs() const {
  std::vector<const OutputSchema*> enabled;
  for (const OutputSchema& out : schema().outputs()) {
    if (!out.optional() || ArgOrDefault(out.enabled_by).As<bool>()) enabled.push_back(&out);
  }
  return enabled;
}

int OpSpec::OutputSlot(std::string_view name) const {
  int slot = 0;
  for (const OutputSchema& out : schema().outputs()) {
    const bool enabled = !out.optional() || ArgOrDefault(out.enabled_by).As<bool>();
    if (out.name == name) return enabled ? slot : -1;
    if (enabled) ++slot;
  }
  std::vector<std::string> names;
  for (const OutputSchema& out : schema().outputs()) names.push_back(out.name);
  throw InvalidArgument(Describe() + ": the schema has no output \"" + std::string(name) + "\"" +
                        DidYouMean(std::string(name), names));
}

namespace {

// Why the node has the outputs it has: "optional outputs follow their arguments: polygons and
// vertices need polygon_masks: true (it is false), ...".
std::string OptionalOutputsWhy(const OpSpec& spec) {
  std::vector<std::string> flags;  // in the order the outputs declare them
  for (const OutputSchema& out : spec.schema().outputs()) {
    if (out.optional() && std::find(flags.begin(), flags.end(), out.enabled_by) == flags.end()) {
      flags.push_back(out.enabled_by);
    }
  }
  std::vector<std::string> parts;
  for (const std::string& flag : flags) {
    std::vector<std::string> names;
    for (const OutputSchema& out : spec.schema().outputs()) {
      if (out.enabled_by == flag) names.push_back(out.name);
    }
    const bool on = spec.ArgOrDefault(flag).As<bool>();
    parts.push_back(Join(names, " and ") + (names.size() == 1 ? " needs " : " need ") + flag + ": true (it is " +
                    (on ? "true" : "false") + (spec.HasArg(flag) ? "" : ", the default") + ")");
  }
  return "optional outputs follow their arguments: " + Join(parts, "; ");
}

}  // namespace

std::string OpSpec::Describe() const { return "op \"" + op_ + "\" (" + name_ + ")"; }

void OpSpec::Validate() const {
  const OpSchema& s = schema();
  const auto check_device = [&](Device d) {
    if (!s.SupportsDevice(d)) {
      throw SpecError(*this, "device",
                      "not available on " + std::string(DeviceName(d)) + " (it runs on: " + BackendList(s) + ")");
    }
  };
  if (device_ == DeviceRequest::kCpu) check_device(Device::kCpu);
  if (device_ == DeviceRequest::kGpu) check_device(Device::kGpu);
  if (!s.repeats_last_input() && inputs_.size() != s.inputs().size()) {
    throw SpecError(*this, "inputs",
                    "expected " + Plural(s.inputs().size(), "input") + NameList(s.inputs()) + ", got " +
                        std::to_string(inputs_.size()));
  }
  if (s.repeats_last_input() && (inputs_.size() < s.min_inputs() || inputs_.size() > s.max_inputs())) {
    throw SpecError(*this, "inputs",
                    "expected " + std::to_string(s.min_inputs()) + " to " + std::to_string(s.max_inputs()) +
                        " inputs (" + s.inputs().back().name + " repeats), got " + std::to_string(inputs_.size()));
  }
  const bool fixed_outputs = s.output_per_entry_of().empty() && !s.has_optional_outputs();
  if (fixed_outputs && outputs_.size() != s.outputs().size()) {
    throw SpecError(*this, "outputs",
                    "expected " + Plural(s.outputs().size(), "output") + NameList(s.outputs()) + ", got " +
                        std::to_string(outputs_.size()));
  }
  const auto unknown = [&](const std::string& name) {
    throw SpecError(*this, "args." + name + ":key",
                    "unknown argument \"" + name + "\"" + DidYouMean(name, s.ArgNames()));
  };
  for (const auto& [name, value] : args_) {
    const ArgSchema* arg = s.FindArg(name);
    if (arg == nullptr) unknown(name);
    const bool int_for_float = value.type() == ArgType::kInt && arg->type == ArgType::kFloat;
    const bool ints_for_floats = value.type() == ArgType::kIntList && arg->type == ArgType::kFloatList;
    if (value.type() != arg->type && !int_for_float && !ints_for_floats) {
      throw SpecError(*this, "args." + name,
                      "argument \"" + name + "\": expected " + ArgTypeName(arg->type) + ", got " +
                          ArgTypeName(value.type()) + " " + value.ToYaml());
    }
    const std::string bad = arg->CheckValue(value);
    if (!bad.empty()) throw SpecError(*this, "args." + name, "argument \"" + name + "\": " + bad);
  }
  if (!s.output_per_entry_of().empty()) {
    const std::string& list = s.output_per_entry_of();
    const ArgValue& value = ArgOrDefault(list);
    const bool count = value.type() == ArgType::kInt;  // an int argument gives the count itself
    const size_t entries = count ? static_cast<size_t>(value.As<int64_t>()) : ListSize(value);
    if (outputs_.size() != entries) {
      throw SpecError(*this, "outputs",
                      "expected " + Plural(entries, "output") +
                          (count ? ", as argument \"" + list + "\" says" : ", one per entry of argument \"" + list + "\"") +
                          ", got " + std::to_string(outputs_.size()));
    }
  }
  for (const auto& [name, source] : arg_inputs_) {
    const ArgSchema* arg = s.FindArg(name);
    if (arg == nullptr) unknown(name);
    if (arg->per_sample != PerSample::kAllowed) {
      throw SpecError(*this, "args." + name,
                      "argument \"" + name + "\" cannot be fed per sample (\"$" + source + "\"); give a " +
                          ArgTypeName(arg->type) + " value");
    }
    if (args_.count(name) != 0) {
      throw SpecError(*this, "args." + name, "argument \"" + name + "\" is both set and fed from \"$" + source + "\"");
    }
  }
  for (const ArgSchema& arg : s.args()) {
    if (arg.required() && args_.count(arg.name) == 0 && arg_inputs_.count(arg.name) == 0) {
      throw SpecError(*this, "args", "missing required argument \"" + arg.name + "\" (" + ArgTypeName(arg.type) + ")");
    }
  }
  if (s.has_optional_outputs()) {
    // Last: the enabling arguments are known to be set bools by now.
    const std::vector<const OutputSchema*> enabled = EnabledOutputs();
    if (outputs_.size() != enabled.size()) {
      throw SpecError(*this, "outputs",
                      "expected " + Plural(enabled.size(), "output") + Names(enabled) + ", got " +
                          std::to_string(outputs_.size()) + "; " + OptionalOutputsWhy(*this));
    }
  }
}

SpecError::SpecError(const OpSpec& spec, std::string field, const std::string& detail)
    : ConfigError([&] {
        const SourceLocation at = spec.Location(field);
        return (at.empty() ? "" : at.ToString() + ": ") + spec.Describe() + ": " + detail;
      }()),
      field_(std::move(field)),
      detail_(detail) {}

}  // namespace conveyor
