// Loads nvJPEG2000 at run time (dlopen) and resolves Nvjpeg2kApi (dlsym), as nvjpeg_loader.h does
// for nvJPEG. Most machines have no nvJPEG2000: its absence is normal, and JPEG 2000 files then
// stay on the CPU path (OpenJPEG).
//
// Search order (Nvjpeg2kSearchPaths; the first that opens wins):
//   1. an explicit path (GpuDecoderOptions::nvjpeg2k_path; the CLI, benchmarks and tests' tools
//      set it from CONVEYOR_NVJPEG2K_PATH, decoder_env.h). When given, it is the only candidate.
//   2. libnvjpeg2k.so.0, then libnvjpeg2k.so — the dynamic loader's paths (LD_LIBRARY_PATH, the
//      run path; the GPU bundle puts the library in its lib/ folder).
//   3. pip-installed nvJPEG2000 (nvidia-nvjpeg2k-cu13 wheels): S/nvidia/nvjpeg2k/lib/libnvjpeg2k.so.0
//      for each site folder S nvJPEG's search uses (nvjpeg::PythonSiteFolders).
//
// | function              | thread safety                | errors                                   |
// |-----------------------|------------------------------|------------------------------------------|
// | Nvjpeg2kSearchPaths   | pure (reads the env given)   | none                                     |
// | Nvjpeg2kLibrary::Open | any thread                   | Nvjpeg2kUnavailable: every path tried +  |
// |                       |                              | why; a missing required symbol names it  |
// | SharedNvjpeg2k        | one load per distinct path   | none: null + the reason                  |
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/decoders/nvjpeg/nvjpeg_loader.h"
#include "operators/decoders/nvjpeg2k/nvjpeg2k_api.h"

namespace conveyor::nvjpeg2k {

// nvJPEG2000 could not be loaded (no library, a missing symbol).
class Nvjpeg2kUnavailable : public Error {
 public:
  using Error::Error;
};

// An nvJPEG2000 call failed: the message names the call, the status and where.
class Nvjpeg2kError : public Error {
 public:
  Nvjpeg2kError(const std::string& message, nvjpeg2kStatus_t status) : Error(message), status_(status) {}
  nvjpeg2kStatus_t status() const { return status_; }

 private:
  nvjpeg2kStatus_t status_;
};

// Throws Nvjpeg2kError "<call> failed: <STATUS> (<n>)[: <where>]" unless `status` is SUCCESS.
void CheckNvjpeg2k(nvjpeg2kStatus_t status, const char* call, const std::string& where = {});

#define CONVEYOR_NVJPEG2K_CHECK(call, where) ::conveyor::nvjpeg2k::CheckNvjpeg2k((call), #call, (where))

// The candidates of the search order above (bare sonames for the loader's paths).
std::vector<std::string> Nvjpeg2kSearchPaths(const std::string& explicit_path, const nvjpeg::GetEnv& env);

class Nvjpeg2kLibrary {
 public:
  // Tries `candidates` in order. Throws Nvjpeg2kUnavailable listing each candidate and dlerror().
  static std::unique_ptr<Nvjpeg2kLibrary> Open(const std::vector<std::string>& candidates);
  ~Nvjpeg2kLibrary();
  Nvjpeg2kLibrary(const Nvjpeg2kLibrary&) = delete;
  Nvjpeg2kLibrary& operator=(const Nvjpeg2kLibrary&) = delete;

  const Nvjpeg2kApi& api() const { return api_; }
  const std::string& path() const { return path_; }  // the candidate that opened
  std::string version() const;                          // "0.11.0", from nvjpeg2kGetProperty

 private:
  Nvjpeg2kLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  Nvjpeg2kApi api_;
};

// The process-wide library for `explicit_path` ("" = the search above), loaded at the first call for
// that path and kept. Null when unavailable; then *why_not (if given) holds the reason.
const Nvjpeg2kLibrary* SharedNvjpeg2k(const std::string& explicit_path, std::string* why_not = nullptr);

}  // namespace conveyor::nvjpeg2k
