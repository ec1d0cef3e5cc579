#include "core/op/schema.h"

#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/util/strings.h"

namespace conveyor {

namespace {

// Operator names: lower-case words joined by '_', namespaced with '.' ("readers.file").
bool IsValidOpName(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '.' && name[i - 1] == '.') return false;
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' ||
          c == '.')) {
      return false;
    }
  }
  return std::islower(static_cast<unsigned char>(name.front()));
}

bool IsValidIdentifier(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Whole numbers up to 15 digits exactly (a bound of 86400000 ms, not 8.64e+07).
std::string FormatNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.15g", v);
  return text;
}

}  // namespace

std::string_view DeviceName(Device device) { return device == Device::kGpu ? "gpu" : "cpu"; }

std::string ArgSchema::CheckValue(const ArgValue& value) const {
  if (min || max) {
    std::vector<double> numbers;
    if (ElementType(type) == ArgType::kInt || ElementType(type) == ArgType::kFloat) {
      if (IsList(type)) {
        numbers = value.As<std::vector<double>>();
      } else {
        numbers.push_back(value.As<double>());
      }
    }
    for (double v : numbers) {
      if ((min && v < *min) || (max && v > *max)) {
        const std::string range = min && max ? "in [" + FormatNumber(*min) + ", " + FormatNumber(*max) + "]"
                                  : min      ? ">= " + FormatNumber(*min)
                                             : "<= " + FormatNumber(*max);
        return "expected a value " + range + ", got " + FormatNumber(v);
      }
    }
  }
  if (!choices.empty() && ElementType(type) == ArgType::kString) {
    std::vector<std::string> strings;
    if (IsList(type)) {
      strings = value.As<std::vector<std::string>>();
    } else {
      strings.push_back(value.As<std::string>());
    }
    for (const std::string& s : strings) {
      bool found = false;
      for (const std::string& c : choices) found = found || c == s;
      if (!found) return "expected one of " + Join(choices, ", ") + ", got \"" + s + "\"" + DidYouMean(s, choices);
    }
  }
  return "";
}

OpSchema::OpSchema(std::string name) : name_(std::move(name)) {}

OpSchema& OpSchema::Doc(std::string doc) {
  doc_ = std::move(doc);
  return *this;
}

OpSchema& OpSchema::Input(std::string name, std::vector<Layout> layouts, std::vector<DType> dtypes,
                          Placement placement, std::string doc) {
  inputs_.push_back({std::move(name), std::move(layouts), std::move(dtypes), placement, std::move(doc)});
  return *this;
}

OpSchema& OpSchema::RepeatLastInput(int min_count, int max_count) {
  repeats_last_input_ = true;
  min_inputs_ = min_count;
  max_inputs_ = max_count;
  return *this;
}

OpSchema& OpSchema::Output(std::string name, std::string doc) {
  outputs_.push_back({std::move(name), std::move(doc)});
  return *this;
}

OpSchema& OpSchema::OptionalOutput(std::string name, std::string enabled_by, std::string doc) {
  outputs_.push_back({std::move(name), std::move(doc), std::move(enabled_by)});
  return *this;
}

bool OpSchema::has_optional_outputs() const {
  for (const OutputSchema& out : outputs_) {
    if (out.optional()) return true;
  }
  return false;
}

OpSchema& OpSchema::OutputPerEntryOf(std::string list_arg) {
  output_per_entry_of_ = std::move(list_arg);
  return *this;
}

OpSchema& OpSchema::AddArg(std::string name, ArgType type, std::optional<ArgValue> default_value, std::string doc,
                           PerSample per_sample) {
  ArgSchema arg;
  arg.name = std::move(name);
  arg.type = type;
  arg.default_value = std::move(default_value);
  arg.doc = std::move(doc);
  arg.per_sample = per_sample;
  args_.push_back(std::move(arg));
  return *this;
}

ArgSchema& OpSchema::LastArg(const char* what) {
  if (args_.empty()) {
    throw InvalidArgument("op schema \"" + name_ + "\": " + what + " must follow an Arg");
  }
  return args_.back();
}

OpSchema& OpSchema::Range(double min, double max) {
  ArgSchema& a = LastArg("Range");
  a.min = min;
  a.max = max;
  return *this;
}

OpSchema& OpSchema::Min(double min) {
  LastArg("Min").min = min;
  return *this;
}

OpSchema& OpSchema::Choices(std::vector<std::string> choices) {
  LastArg("Choices").choices = std::move(choices);
  return *this;
}

OpSchema& OpSchema::Path() {
  LastArg("Path").is_path = true;
  return *this;
}

OpSchema& OpSchema::Backends(std::vector<Device> backends) {
  backends_ = std::move(backends);
  return *this;
}

OpSchema& OpSchema::Capturable(bool capturable) {
  capturable_ = capturable;
  return *this;
}

OpSchema& OpSchema::DeviceToHost() {
  device_to_host_ = true;
  return *this;
}

bool OpSchema::SupportsDevice(Device device) const {
  for (Device d : backends_) {
    if (d == device) return true;
  }
  return false;
}

const ArgSchema* OpSchema::FindArg(std::string_view name) const {
  for (const ArgSchema& a : args_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<std::string> OpSchema::ArgNames() const {
  std::vector<std::string> names;
  for (const ArgSchema& a : args_) names.push_back(a.name);
  return names;
}

void OpSchema::Validate() const {
  const std::string where = "op schema \"" + name_ + "\": ";
  if (!IsValidOpName(name_)) {
    throw InvalidArgument(where + "expected a lower-case name of words joined by '_' and '.' (\"readers.file\")");
  }
  if (backends_.empty()) throw InvalidArgument(where + "declares no backend (Backends({Device::kCpu, ...}))");
  if (device_to_host_ && !SupportsDevice(Device::kGpu)) {
    throw InvalidArgument(where + "a DeviceToHost operator must have a GPU backend");
  }
  if (capturable_ && !SupportsDevice(Device::kGpu)) {
    throw InvalidArgument(where + "Capturable() needs a GPU backend");
  }
  std::set<std::string> seen;
  auto check_name = [&](const std::string& kind, const std::string& n) {
    if (!IsValidIdentifier(n)) throw InvalidArgument(where + kind + " name \"" + n + "\" is not an identifier");
    if (!seen.insert(kind + ":" + n).second) throw InvalidArgument(where + kind + " \"" + n + "\" declared twice");
  };
  for (const InputSchema& in : inputs_) check_name("input", in.name);
  if (repeats_last_input_ &&
      (inputs_.empty() || min_inputs_ < 1 || min_inputs_ > max_inputs_ || static_cast<size_t>(min_inputs_) < inputs_.size() - 1)) {
    throw InvalidArgument(where + "RepeatLastInput(" + std::to_string(min_inputs_) + ", " + std::to_string(max_inputs_) +
                          ") needs a declared input to repeat and 1 <= min <= max, min counting the " +
                          std::to_string(inputs_.empty() ? 0 : inputs_.size() - 1) + " fixed inputs before it");
  }
  for (const OutputSchema& out : outputs_) {
    check_name("output", out.name);
    if (!out.optional()) continue;
    const ArgSchema* flag = FindArg(out.enabled_by);
    if (flag == nullptr || flag->type != ArgType::kBool || flag->per_sample == PerSample::kAllowed) {
      throw InvalidArgument(where + "OptionalOutput(\"" + out.name + "\", \"" + out.enabled_by +
                            "\") needs a bool argument of that name that is not fed per sample");
    }
  }
  if (!output_per_entry_of_.empty()) {
    const ArgSchema* list = FindArg(output_per_entry_of_);
    if (list == nullptr || !(IsList(list->type) || list->type == ArgType::kInt) || outputs_.size() != 1 ||
        outputs_[0].optional()) {
      throw InvalidArgument(where + "OutputPerEntryOf(\"" + output_per_entry_of_ +
                            "\") needs a list or int argument of that name and exactly one declared output (not an optional one)");
    }
  }
  for (const ArgSchema& a : args_) {
    check_name("argument", a.name);
    if (a.per_sample == PerSample::kAllowed && ElementType(a.type) != ArgType::kBool &&
        ElementType(a.type) != ArgType::kInt && ElementType(a.type) != ArgType::kFloat) {
      throw InvalidArgument(where + "argument \"" + a.name + "\": only numbers and bools can be fed per sample");
    }
    if (a.is_path && ElementType(a.type) != ArgType::kString) {
      throw InvalidArgument(where + "argument \"" + a.name + "\": Path() needs a string argument");
    }
    if (a.default_value) {
      const ArgType have = a.default_value->type();
      const bool int_for_float = have == ArgType::kInt && a.type == ArgType::kFloat;
      if (have != a.type && !int_for_float) {
        throw InvalidArgument(where + "argument \"" + a.name + "\": default is " + ArgTypeName(have) +
                              ", declared " + ArgTypeName(a.type));
      }
      const std::string bad = a.CheckValue(*a.default_value);
      if (!bad.empty()) throw InvalidArgument(where + "argument \"" + a.name + "\" default: " + bad);
    }
  }
}

std::string OpSchema::Describe() const {
  std::ostringstream s;
  s << name_ << " — " << doc_ << "\n  backends:";
  for (Device d : backends_) s << " " << DeviceName(d);
  if (capturable_) s << " (capturable)";
  s << "\n";
  for (const InputSchema& in : inputs_) {
    s << "  input " << in.name;
    if (!in.layouts.empty()) {
      s << " layouts:";
      for (const Layout& l : in.layouts) s << " " << l.str();
    }
    if (!in.dtypes.empty()) {
      s << " dtypes:";
      for (DType d : in.dtypes) s << " " << DTypeName(d);
    }
    if (in.placement == Placement::kHost) s << " (host)";
    if (repeats_last_input_ && &in == &inputs_.back()) {
      s << " (repeats: " << min_inputs_ << " to " << max_inputs_ << " inputs in all)";
    }
    if (!in.doc.empty()) s << " — " << in.doc;
    s << "\n";
  }
  for (const OutputSchema& out : outputs_) {
    s << "  output " << out.name << (out.optional() ? " (with " + out.enabled_by + ": true)" : "")
      << (out.doc.empty() ? "" : " — " + out.doc) << "\n";
  }
  if (!output_per_entry_of_.empty()) {
    const ArgSchema* count = FindArg(output_per_entry_of_);
    s << (count != nullptr && count->type == ArgType::kInt ? "  (as many outputs as " : "  (one output per entry of ")
      << output_per_entry_of_ << ")\n";
  }
  for (const ArgSchema& a : args_) {
    s << "  arg " << a.name << ": " << ArgTypeName(a.type);
    s << (a.default_value ? " = " + a.default_value->ToYaml() : std::string(" (required)"));
    if (a.per_sample == PerSample::kAllowed) s << " (per-sample)";
    s << " — " << a.doc << "\n";
  }
  return s.str();
}

}  // namespace conveyor
