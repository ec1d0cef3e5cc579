#include "operators/decoders/nvjpeg2k/nvjpeg2k_loader.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <sstream>

namespace conveyor::nvjpeg2k {

const char* StatusName(nvjpeg2kStatus_t status) {
  switch (status) {
    case NVJPEG2K_STATUS_SUCCESS: return "NVJPEG2K_STATUS_SUCCESS";
    case NVJPEG2K_STATUS_NOT_INITIALIZED: return "NVJPEG2K_STATUS_NOT_INITIALIZED";
    case NVJPEG2K_STATUS_INVALID_PARAMETER: return "NVJPEG2K_STATUS_INVALID_PARAMETER";
    case NVJPEG2K_STATUS_BAD_JPEG: return "NVJPEG2K_STATUS_BAD_JPEG";
    case NVJPEG2K_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG2K_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG2K_STATUS_ALLOCATOR_FAILURE: return "NVJPEG2K_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG2K_STATUS_EXECUTION_FAILED: return "NVJPEG2K_STATUS_EXECUTION_FAILED";
    case NVJPEG2K_STATUS_ARCH_MISMATCH: return "NVJPEG2K_STATUS_ARCH_MISMATCH";
    case NVJPEG2K_STATUS_INTERNAL_ERROR: return "NVJPEG2K_STATUS_INTERNAL_ERROR";
    case NVJPEG2K_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "NVJPEG2K_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
  }
  return "nvjpeg2kStatus_t(unknown)";
}

void CheckNvjpeg2k(nvjpeg2kStatus_t status, const char* call, const std::string& where) {
  if (status == NVJPEG2K_STATUS_SUCCESS) return;
  std::ostringstream msg;
  msg << call << " failed: " << StatusName(status) << " (" << static_cast<int>(status) << ")";
  if (!where.empty()) msg << ": " << where;
  throw Nvjpeg2kError(msg.str(), status);
}

std::vector<std::string> Nvjpeg2kSearchPaths(const std::string& explicit_path, const nvjpeg::GetEnv& env) {
  if (!explicit_path.empty()) return {explicit_path};
  std::vector<std::string> out = {"libnvjpeg2k.so.0", "libnvjpeg2k.so"};
  for (const std::string& dir : nvjpeg::PythonSiteFolders(env)) out.push_back(dir + "/nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0");
  return out;
}

std::unique_ptr<Nvjpeg2kLibrary> Nvjpeg2kLibrary::Open(const std::vector<std::string>& candidates) {
  std::string tried;
  if (const auto [handle, path] = nvjpeg::DlopenFirst(candidates, tried); handle != nullptr) {
    std::unique_ptr<Nvjpeg2kLibrary> lib(new Nvjpeg2kLibrary());
    lib->handle_ = handle;
    lib->path_ = path;
    // A library that opens but lacks a required entry point is the wrong library (or too old):
    // report it by name instead of trying candidates the user did not mean.
#define CONVEYOR_NVJPEG2K_RESOLVE_REQUIRED(name, params)                                               \
  lib->api_.name = reinterpret_cast<decltype(lib->api_.name)>(dlsym(handle, #name));                   \
  if (lib->api_.name == nullptr) {                                                                     \
    throw Nvjpeg2kUnavailable("nvJPEG2000: symbol \"" #name "\" not found in \"" + path +              \
                              "\" (expected libnvjpeg2k 0.6 or newer)");                                \
  }
#define CONVEYOR_NVJPEG2K_RESOLVE_OPTIONAL(name, params) \
  lib->api_.name = reinterpret_cast<decltype(lib->api_.name)>(dlsym(handle, #name));
    CONVEYOR_NVJPEG2K_REQUIRED_FUNCTIONS(CONVEYOR_NVJPEG2K_RESOLVE_REQUIRED)
    CONVEYOR_NVJPEG2K_OPTIONAL_FUNCTIONS(CONVEYOR_NVJPEG2K_RESOLVE_OPTIONAL)
#undef CONVEYOR_NVJPEG2K_RESOLVE_REQUIRED
#undef CONVEYOR_NVJPEG2K_RESOLVE_OPTIONAL
    return lib;
  }
  throw Nvjpeg2kUnavailable("nvJPEG2000: no library could be opened; tried, in order:" + tried);
}

Nvjpeg2kLibrary::~Nvjpeg2kLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

std::string Nvjpeg2kLibrary::version() const {
  int major = 0, minor = 0, patch = 0;
  CONVEYOR_NVJPEG2K_CHECK(api_.nvjpeg2kGetProperty(nvjpeg::kLibraryMajorVersion, &major), path_);
  CONVEYOR_NVJPEG2K_CHECK(api_.nvjpeg2kGetProperty(nvjpeg::kLibraryMinorVersion, &minor), path_);
  CONVEYOR_NVJPEG2K_CHECK(api_.nvjpeg2kGetProperty(nvjpeg::kLibraryPatchLevel, &patch), path_);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

const Nvjpeg2kLibrary* SharedNvjpeg2k(const std::string& explicit_path, std::string* why_not) {
  struct Loaded {
    std::unique_ptr<Nvjpeg2kLibrary> library;
    std::string reason;
  };
  static std::mutex mu;
  static std::map<std::string, Loaded> loaded;  // by explicit path; kept for the process's life
  std::lock_guard<std::mutex> lock(mu);
  auto [it, fresh] = loaded.try_emplace(explicit_path);
  if (fresh) {
    try {
      it->second.library = Nvjpeg2kLibrary::Open(Nvjpeg2kSearchPaths(explicit_path, nvjpeg::ProcessEnv()));
    } catch (const Error& e) {
      it->second.reason = e.what();
    }
  }
  if (it->second.library == nullptr && why_not != nullptr) *why_not = it->second.reason;
  return it->second.library.get();
}

}  // namespace conveyor::nvjpeg2k
