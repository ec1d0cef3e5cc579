// Loads nvJPEG at run time (dlopen) and resolves NvjpegApi (dlsym). The build machines have no
// nvJPEG: nothing links it, and every caller copes with its absence (CPU fallback).
//
// Search order (NvjpegSearchPaths; the first that opens wins):
//   1. $CONVEYOR_NVJPEG_PATH — a file. When set, it is the only candidate: an explicit choice
//      that fails is reported, never replaced by another library behind the user's back.
//   2. libnvjpeg.so.13, then libnvjpeg.so — the dynamic loader's paths (LD_LIBRARY_PATH, the
//      CUDA toolkit's folder in ld.so.conf, the executable's run path).
//   3. pip-installed nvJPEG (nvidia-nvjpeg wheels), for the python3 on PATH, found without
//      running Python. In each site folder S, S/nvidia/cu13/lib/libnvjpeg.so.13 then
//      S/nvidia/nvjpeg/lib/libnvjpeg.so.13, for S in order:
//        $VIRTUAL_ENV/lib/python3*/site-packages, every $PYTHONPATH entry,
//        ~/.local/lib/python3*/site-packages, /usr/local/lib/python3*/dist-packages,
//        /usr/lib/python3/dist-packages            (globs expanded, sorted; missing folders skipped)
//
// | function              | thread safety             | errors                                      |
// |-----------------------|---------------------------|---------------------------------------------|
// | NvjpegSearchPaths     | pure (reads the env given)| none                                        |
// | NvjpegLibrary::Open   | any thread                | NvjpegUnavailable: every path tried + why;   |
// |                       |                           | a missing required symbol names it and file |
// | SharedNvjpeg          | one-time load (call_once) | none: null + the reason                     |
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "operators/decoders/nvjpeg/nvjpeg_api.h"

namespace conveyor::nvjpeg {

// nvJPEG could not be loaded (no library, a missing symbol).
class NvjpegUnavailable : public Error {
 public:
  using Error::Error;
};

// An nvJPEG call failed: the message names the call, the status and where.
class NvjpegError : public Error {
 public:
  NvjpegError(const std::string& message, nvjpegStatus_t status) : Error(message), status_(status) {}
  nvjpegStatus_t status() const { return status_; }

 private:
  nvjpegStatus_t status_;
};

// Throws NvjpegError "<call> failed: <STATUS> (<n>)[: <where>]" unless `status` is SUCCESS.
void CheckNvjpeg(nvjpegStatus_t status, const char* call, const std::string& where = {});

// `where` is evaluated only when the call failed (it may build a string per image).
#define CONVEYOR_NVJPEG_CHECK(call, where)                                                       \
  do {                                                                                           \
    const nvjpegStatus_t conveyor_nvjpeg_status_ = (call);                                       \
    if (conveyor_nvjpeg_status_ != NVJPEG_STATUS_SUCCESS) {                                      \
      ::conveyor::nvjpeg::CheckNvjpeg(conveyor_nvjpeg_status_, #call, (where));                  \
    }                                                                                            \
  } while (0)

// The environment the search reads; tests pass their own.
using GetEnv = std::function<const char*(const char*)>;
GetEnv ProcessEnv();

// The candidates of the search order above, in order (bare sonames for the loader's paths).
std::vector<std::string> NvjpegSearchPaths(const GetEnv& env);

// Step 3's site folders, in order, existing ones only, each once: where pip puts NVIDIA's libraries
// (nvJPEG2000's loader searches them too).
std::vector<std::string> PythonSiteFolders(const GetEnv& env);

// The first of `candidates` that dlopen (RTLD_NOW | RTLD_LOCAL) opens: its handle and path; null
// handle when none did, with one "\n  path: dlerror" line per candidate tried appended to `tried`
// (nvJPEG's and nvJPEG2000's loaders).
struct OpenedLibrary {
  void* handle = nullptr;
  std::string path;
};
OpenedLibrary DlopenFirst(const std::vector<std::string>& candidates, std::string& tried);

class NvjpegLibrary {
 public:
  // Tries `candidates` in order. Throws NvjpegUnavailable listing each candidate and dlerror().
  static std::unique_ptr<NvjpegLibrary> Open(const std::vector<std::string>& candidates);
  ~NvjpegLibrary();
  NvjpegLibrary(const NvjpegLibrary&) = delete;
  NvjpegLibrary& operator=(const NvjpegLibrary&) = delete;

  const NvjpegApi& api() const { return api_; }
  const std::string& path() const { return path_; }  // the candidate that opened
  std::string version() const;                          // "13.0.1", from nvjpegGetProperty

 private:
  NvjpegLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  NvjpegApi api_;
};

// The process-wide library, loaded once from NvjpegSearchPaths(ProcessEnv()). Null when
// unavailable; then *why_not (if given) holds the reason.
const NvjpegLibrary* SharedNvjpeg(std::string* why_not = nullptr);

}  // namespace conveyor::nvjpeg
