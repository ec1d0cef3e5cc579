// OpRegistry: operator name → (schema, factory). An operator registers both together with one
// static object in its *_op.cc (the BUILD target is alwayslink so the linker keeps it):
//
//   const OperatorRegistration<FlipOp> kRegistration(kFlipSchema);
//
// Plugins register through the same object or through PluginRegistrar (plugin.h); while a plugin
// loads, registrations are held back and committed only once the whole plugin checked out.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/op/operator.h"
#include "core/op/schema.h"

namespace conveyor {

class OpRegistry {
 public:
  struct Entry {
    OpSchema schema;
    OperatorFactory factory;
    std::string origin;  // "built-in" or the plugin path
  };

  // The process-wide registry (a function-local static: safe to use from static initializers).
  static OpRegistry& Global();

  // Validates the schema and adds it. Throws InvalidArgument on an invalid schema or a name that
  // is already registered (naming both origins).
  void Register(OpSchema schema, OperatorFactory factory, std::string origin = "built-in");

  // Null when absent.
  const Entry* Find(std::string_view name) const;
  // Throws ConfigError `unknown operator "flp"; did you mean "flip"?`.
  const Entry& Get(std::string_view name) const;
  const OpSchema& Schema(std::string_view name) const { return Get(name).schema; }
  // Instantiates the operator for a spec (validated first: SpecError on a bad spec).
  std::unique_ptr<Operator> Create(const OpSpec& spec) const;
  std::vector<std::string> Names() const;  // sorted

  // The suggestion text for an unknown name ("" or "; did you mean \"x\"?").
  std::string Suggest(std::string_view name) const;

  // For the plugin loader: while a capture is active on this thread, Register() collects into it
  // instead of the registry (a plugin's static registrations run inside dlopen, before its ABI
  // version has been checked).
  struct Pending {
    std::vector<Entry> entries;
  };
  static Pending* SetCapture(Pending* pending);
  // Adds all entries or none: throws InvalidArgument naming the first duplicate.
  void Commit(Pending pending);

 private:
  void CheckNotRegistered(const std::string& name, const std::string& origin) const;

  mutable std::mutex mutex_;
  // unique_ptr: entries stay put while others are added (callers keep schema references).
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries_;
};

// The one static object an operator's *_op.cc defines to register its schema with its factory.
template <typename Op>
class OperatorRegistration {
 public:
  explicit OperatorRegistration(const OpSchema& schema) {
    OpRegistry::Global().Register(schema, [](const OpSpec& spec) -> std::unique_ptr<Operator> {
      return std::make_unique<Op>(spec);
    });
  }
};

}  // namespace conveyor
