// libFuzzer target: the plugin loader (LoadPlugin) on arbitrary files. The bytes are written to a
// temporary file and loaded into a private registry. Contract: a file that is not a Conveyor
// plugin of this ABI is refused with conveyor::PluginError (naming the path), never a crash; the
// global registry is untouched.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/op/plugin.h"
#include "core/op/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/conveyor_fuzz_plugin_" + std::to_string(getpid()) + ".so";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (size && std::fwrite(data, 1, size, f) != size) __builtin_trap();
  std::fclose(f);
  conveyor::OpRegistry registry;
  try {
    conveyor::LoadPlugin(path, registry);
  } catch (const conveyor::PluginError& e) {
    if (std::string(e.what()).find(path) == std::string::npos) __builtin_trap();
  }
  return 0;
}
