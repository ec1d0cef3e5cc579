#include "core/op/plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <map>
#include <mutex>

#include "core/error.h"

namespace conveyor {

namespace {

std::string DlError() {
  const char* e = dlerror();
  return e ? e : "no dlerror text";
}

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw PluginError("plugin " + path + ": " + what);
}

// Closes the library unless released: a plugin that failed must not stay mapped.
struct LibraryCloser {
  void* handle;
  ~LibraryCloser() {
    if (handle) dlclose(handle);
  }
};

// Restores the registry capture even when registration throws.
struct CaptureScope {
  explicit CaptureScope(OpRegistry::Pending* p) : previous(OpRegistry::SetCapture(p)) {}
  ~CaptureScope() { OpRegistry::SetCapture(previous); }
  OpRegistry::Pending* previous;
};

}  // namespace

void PluginRegistrar::Add(const OpSchema& schema, OperatorFactory factory) {
  schema.Validate();
  pending_->entries.push_back({schema, std::move(factory), origin_});
}

PluginInfo LoadPlugin(const std::string& path, OpRegistry& registry) {
  // One load at a time: the capture of static registrations is per thread, and dlopen of the same
  // file twice must not register twice.
  static std::mutex mutex;
  static std::map<std::string, PluginInfo> loaded;
  std::lock_guard lock(mutex);

  struct stat st;
  if (::stat(path.c_str(), &st) != 0) Fail(path, "file not found");
  char resolved[PATH_MAX];
  const std::string key = ::realpath(path.c_str(), resolved) ? resolved : path;
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;

  // Declared first so it is destroyed last: the pending entries' factories live in the library.
  LibraryCloser library{nullptr};
  OpRegistry::Pending pending;
  {
    // Static OperatorRegistration objects in the plugin run inside dlopen: hold them back.
    CaptureScope capture(&pending);
    dlerror();
    library.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (!library.handle) Fail(path, "cannot be loaded as a shared library: " + DlError());

  // The ABI version first: nothing else in the plugin is trusted before it matches.
  dlerror();
  auto abi = reinterpret_cast<ConveyorPluginAbiVersionFn>(dlsym(library.handle, "conveyor_plugin_abi_version"));
  if (!abi) Fail(path, "not a Conveyor plugin: no conveyor_plugin_abi_version symbol (" + DlError() + ")");
  const uint32_t version = abi();
  if (version != kPluginAbiVersion) {
    Fail(path, "ABI version mismatch: the plugin was built for ABI " + std::to_string(version) +
                   ", this Conveyor has ABI " + std::to_string(kPluginAbiVersion) + "; rebuild the plugin");
  }
  dlerror();
  auto reg = reinterpret_cast<ConveyorPluginRegisterFn>(dlsym(library.handle, "conveyor_plugin_register"));
  if (!reg) Fail(path, "missing symbol conveyor_plugin_register (" + DlError() + ")");

  // Entries captured from static objects carry "built-in" as origin; they belong to the plugin.
  for (OpRegistry::Entry& e : pending.entries) e.origin = "plugin " + path;
  PluginRegistrar registrar(&pending, "plugin " + path);
  try {
    reg(&registrar);
  } catch (const std::exception& e) {
    Fail(path, std::string("conveyor_plugin_register failed: ") + e.what());
  }
  PluginInfo info{path, {}};
  for (const OpRegistry::Entry& e : pending.entries) info.operators.push_back(e.schema.name());
  try {
    registry.Commit(std::move(pending));
  } catch (const InvalidArgument& e) {
    Fail(path, e.what());
  }
  library.handle = nullptr;  // registered factories point into it: keep it loaded for good
  loaded[key] = info;
  return info;
}

}  // namespace conveyor
