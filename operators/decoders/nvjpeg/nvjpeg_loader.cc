#include "operators/decoders/nvjpeg/nvjpeg_loader.h"

#include <dlfcn.h>
#include <glob.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <sstream>

namespace conveyor::nvjpeg {

const char* StatusName(nvjpegStatus_t status) {
  switch (status) {
    case NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "nvjpegStatus_t(unknown)";
}

void CheckNvjpeg(nvjpegStatus_t status, const char* call, const std::string& where) {
  if (status == NVJPEG_STATUS_SUCCESS) return;
  std::ostringstream msg;
  msg << call << " failed: " << StatusName(status) << " (" << static_cast<int>(status) << ")";
  if (!where.empty()) msg << ": " << where;
  throw NvjpegError(msg.str(), status);
}

GetEnv ProcessEnv() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

namespace {

// Existing paths matching `pattern`, sorted (glob sorts by default).
std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

std::vector<std::string> SplitColons(const std::string& s) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, ':')) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string Get(const GetEnv& env, const char* name) {
  const char* v = env(name);
  return v != nullptr ? std::string(v) : std::string();
}

}  // namespace

std::vector<std::string> PythonSiteFolders(const GetEnv& env) {
  std::vector<std::string> site_dirs;
  auto add_glob = [&](const std::string& pattern) {
    for (std::string& d : Glob(pattern)) site_dirs.push_back(std::move(d));
  };
  if (const std::string venv = Get(env, "VIRTUAL_ENV"); !venv.empty()) add_glob(venv + "/lib/python3*/site-packages");
  for (const std::string& p : SplitColons(Get(env, "PYTHONPATH"))) add_glob(p);
  if (const std::string home = Get(env, "HOME"); !home.empty()) add_glob(home + "/.local/lib/python3*/site-packages");
  add_glob("/usr/local/lib/python3*/dist-packages");
  add_glob("/usr/lib/python3/dist-packages");

  std::vector<std::string> seen;
  for (std::string& dir : site_dirs) {
    if (std::find(seen.begin(), seen.end(), dir) == seen.end()) seen.push_back(std::move(dir));
  }
  return seen;
}

std::vector<std::string> NvjpegSearchPaths(const GetEnv& env) {
  const std::string explicit_path = Get(env, "CONVEYOR_NVJPEG_PATH");
  if (!explicit_path.empty()) return {explicit_path};

  std::vector<std::string> out = {"libnvjpeg.so.13", "libnvjpeg.so"};
  for (const std::string& dir : PythonSiteFolders(env)) {
    out.push_back(dir + "/nvidia/cu13/lib/libnvjpeg.so.13");
    out.push_back(dir + "/nvidia/nvjpeg/lib/libnvjpeg.so.13");
  }
  return out;
}

OpenedLibrary DlopenFirst(const std::vector<std::string>& candidates, std::string& tried) {
  for (const std::string& path : candidates) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return {handle, path};
    const char* why = dlerror();
    tried += "\n  " + path + ": " + (why != nullptr ? why : "dlopen failed");
  }
  return {};
}

std::unique_ptr<NvjpegLibrary> NvjpegLibrary::Open(const std::vector<std::string>& candidates) {
  std::string tried;
  if (const auto [handle, path] = DlopenFirst(candidates, tried); handle != nullptr) {
    std::unique_ptr<NvjpegLibrary> lib(new NvjpegLibrary());
    lib->handle_ = handle;
    lib->path_ = path;
    // A library that opens but lacks a required entry point is the wrong library (or too old):
    // report it by name instead of trying further candidates the user did not mean.
#define CONVEYOR_NVJPEG_RESOLVE_REQUIRED(name, params)                                                  \
  lib->api_.name = reinterpret_cast<decltype(lib->api_.name)>(dlsym(handle, #name));                    \
  if (lib->api_.name == nullptr) {                                                                      \
    throw NvjpegUnavailable("nvJPEG: symbol \"" #name "\" not found in \"" + path +                     \
                            "\" (expected libnvjpeg from CUDA 12.x/13.x)");                             \
  }
#define CONVEYOR_NVJPEG_RESOLVE_OPTIONAL(name, params) \
  lib->api_.name = reinterpret_cast<decltype(lib->api_.name)>(dlsym(handle, #name));
    CONVEYOR_NVJPEG_REQUIRED_FUNCTIONS(CONVEYOR_NVJPEG_RESOLVE_REQUIRED)
    CONVEYOR_NVJPEG_OPTIONAL_FUNCTIONS(CONVEYOR_NVJPEG_RESOLVE_OPTIONAL)
#undef CONVEYOR_NVJPEG_RESOLVE_REQUIRED
#undef CONVEYOR_NVJPEG_RESOLVE_OPTIONAL
    return lib;
  }
  throw NvjpegUnavailable("nvJPEG: no library could be opened; tried, in order:" + tried);
}

NvjpegLibrary::~NvjpegLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::string NvjpegLibrary::version() const {
  int major = 0, minor = 0, patch = 0;
  CONVEYOR_NVJPEG_CHECK(api_.nvjpegGetProperty(kLibraryMajorVersion, &major), path_);
  CONVEYOR_NVJPEG_CHECK(api_.nvjpegGetProperty(kLibraryMinorVersion, &minor), path_);
  CONVEYOR_NVJPEG_CHECK(api_.nvjpegGetProperty(kLibraryPatchLevel, &patch), path_);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

const NvjpegLibrary* SharedNvjpeg(std::string* why_not) {
  static std::once_flag once;
  static std::unique_ptr<NvjpegLibrary> library;
  static std::string reason;
  std::call_once(once, [] {
    try {
      library = NvjpegLibrary::Open(NvjpegSearchPaths(ProcessEnv()));
    } catch (const Error& e) {
      reason = e.what();
    }
  });
  if (library == nullptr && why_not != nullptr) *why_not = reason;
  return library.get();
}

}  // namespace conveyor::nvjpeg
