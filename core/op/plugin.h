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
//
// On demand: some operators ship as plugins that load when a pipeline first names one of them
// (OnDemandPlugins(): readers.video and decoders.video → libconveyor_video.so, which alone needs
// FFmpeg). FindOrLoadOperator is the lookup the YAML loader and Graph::Build use:
//
//   registry has op? ──yes──► its entry
//        │ no
//   an on-demand plugin provides op? ──no──► null (the caller reports the unknown operator)
//        │ yes
//   first loadable copy in PluginSearchFolders():  CONVEYOR_PLUGIN_PATH (colon-separated folders)
//        │                                          → the running executable's folder
//        │                                          → the folder of the library holding Conveyor's
//        │                                            core (libconveyor_c.so under the C API, Python)
//   loaded ──► its entry  |  none ──► PluginError naming the op, the plugin, every folder with what
//                                    happened there (dlerror's text), and what to install or set
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// A plugin that loads when a pipeline names one of its operators.
struct OnDemandPlugin {
  std::string file;                    // "libconveyor_video.so"
  std::vector<std::string> operators;  // what it provides
  std::string needs;                   // what it needs at load time, with how to install it
};

// The plugins Conveyor ships to load on demand.
const std::vector<OnDemandPlugin>& OnDemandPlugins();

struct PluginFolder {
  std::string path;
  std::string why;  // "CONVEYOR_PLUGIN_PATH", "the folder of the executable", ...
};

// Where on-demand plugins are looked for, in order, without duplicates: the folders of
// CONVEYOR_PLUGIN_PATH (colon-separated, empty entries ignored), the running executable's folder,
// and the folder of the shared library that holds Conveyor's core when that is not the executable
// (libconveyor_c.so, loaded by the C API or Python).
std::vector<PluginFolder> PluginSearchFolders();

struct OnDemandOptions {
  const std::vector<OnDemandPlugin>* plugins = nullptr;  // null: OnDemandPlugins()
  std::optional<std::vector<PluginFolder>> folders;      // unset: PluginSearchFolders()
};

// The registry's entry for `op`. When it has none and an on-demand plugin provides `op`, that plugin
// is loaded from the first folder holding a copy that loads. Null when no plugin provides `op`.
// Throws PluginError naming the op, the plugin, each folder tried with what happened there, and
// what to install or set.
const OpRegistry::Entry* FindOrLoadOperator(std::string_view op, OpRegistry& registry = OpRegistry::Global(),
                                            const OnDemandOptions& options = {});
// The same for a pipeline node: the PluginError starts with the node's position and description
// (`video.yaml:12:9: op "readers.video" (reader): ...`).
const OpRegistry::Entry* FindOrLoadOperator(const OpSpec& node, OpRegistry& registry = OpRegistry::Global(),
                                            const OnDemandOptions& options = {});

}  // namespace conveyor

extern "C" {
using ConveyorPluginAbiVersionFn = uint32_t (*)();
using ConveyorPluginRegisterFn = void (*)(conveyor::PluginRegistrar*);
}
