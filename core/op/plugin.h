// Plugins: shared libraries that add operators at run time.
//
// A plugin exports two C symbols and nothing else is required:
//
//   extern "C" uint32_t conveyor_plugin_abi_version() { return CONVEYOR_PLUGIN_ABI_VERSION; }
//   extern "C" void conveyor_plugin_register(conveyor::PluginRegistrar* registrar) {
//     registrar->Add<ScaleOp>(kScaleSchema);
//   }
//
// It compiles against Conveyor's headers and leaves Conveyor's symbols undefined: they resolve
// from the host executable (linked with -rdynamic) when the plugin is loaded. docs/plugins.md
// shows the Bazel target and the plain g++/nvcc command lines.
//
// LoadPlugin(path) checks, in order, and throws PluginError naming the path (and dlerror's text):
//   missing file → not loadable (not a shared library, unresolved symbols) → no
//   conveyor_plugin_abi_version (not a Conveyor plugin) → ABI mismatch → no
//   conveyor_plugin_register → registration failed (duplicate operator name, invalid schema).
// Registration is all-or-nothing; a plugin that loaded stays loaded for the process lifetime
// (its code backs the registered factories).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/op/registry.h"

// Bumped whenever a header a plugin compiles against changes incompatibly.
#define CONVEYOR_PLUGIN_ABI_VERSION 1u

namespace conveyor {

inline constexpr uint32_t kPluginAbiVersion = CONVEYOR_PLUGIN_ABI_VERSION;

// What conveyor_plugin_register receives.
class PluginRegistrar {
 public:
  explicit PluginRegistrar(OpRegistry::Pending* pending, std::string origin)
      : pending_(pending), origin_(std::move(origin)) {}

  template <typename Op>
  void Add(const OpSchema& schema) {
    Add(schema, [](const OpSpec& spec) -> std::unique_ptr<Operator> { return std::make_unique<Op>(spec); });
  }
  // Validates the schema now (InvalidArgument); duplicates are found at commit.
  void Add(const OpSchema& schema, OperatorFactory factory);

 private:
  OpRegistry::Pending* pending_;
  std::string origin_;
};

struct PluginInfo {
  std::string path;
  std::vector<std::string> operators;  // what it registered
};

// Loads the plugin at `path` (already loaded: returns its earlier info). Thread-safe.
PluginInfo LoadPlugin(const std::string& path, OpRegistry& registry = OpRegistry::Global());

}  // namespace conveyor

extern "C" {
using ConveyorPluginAbiVersionFn = uint32_t (*)();
using ConveyorPluginRegisterFn = void (*)(conveyor::PluginRegistrar*);
}
