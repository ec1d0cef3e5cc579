#include "tests/capi/shared_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace conveyor::capi::testing {

void* OpenConveyorLibrary(std::string& tried) {
  std::vector<std::string> paths = {"core/capi/libconveyor_c.so"};
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    if (const char* dir = std::getenv(var)) paths.push_back(std::string(dir) + "/conveyor/core/capi/libconveyor_c.so");
  }
  char exe[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    const std::string self(exe, static_cast<size_t>(n));
    paths.push_back(self.substr(0, self.rfind('/') + 1) + "libconveyor_c.so");
  }
  for (const std::string& path : paths) {
    if (access(path.c_str(), R_OK) != 0) {
      tried += " " + path;
      continue;
    }
    // RTLD_NODELETE: the library's process-lifetime state (operator registry) stays mapped after
    // dlclose, so LeakSanitizer (--config=asan) still sees the pointers to it at exit.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (lib == nullptr) tried += " " + path + " (" + dlerror() + ")";
    return lib;
  }
  return nullptr;
}

}  // namespace conveyor::capi::testing
