// NVDEC at run time: libcuda (driver API) and libnvcuvid loaded once per process through NVIDIA's
// codec headers' loader (ffnvcodec/dynlink_loader.h: cuda_load_functions, cuvid_load_functions,
// both dlopen). Nothing links either library; where one is missing (build machines, GPU machines
// without the driver's video libraries) SharedNvdec() says why and the callers decode on the CPU.
//
// | function    | thread safety                      | result                                   |
// |-------------|------------------------------------|------------------------------------------|
// | SharedNvdec | one-time load (std::call_once)     | the tables, or null and `why` filled:    |
// |             |                                    | "libnvcuvid.so.1: cannot load (...)"      |
//
// The driver tables are the loader's own types (dynlink_cuda.h): include this header only in
// files that do not include <cuda.h> (the CUDA runtime's headers are fine elsewhere).
#pragma once

#include <string>

// The loader reports through this hook instead of printing to stderr (defined in nvdec_loader.cc).
namespace conveyor::ops::video::nvdec_detail {
void LoaderLog(void* log, const char* format, ...);
}
#define FFNV_LOG_FUNC(logctx, msg, ...) ::conveyor::ops::video::nvdec_detail::LoaderLog((logctx), (msg), __VA_ARGS__)
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...)
// 64-bit device pointers for cuvidMapVideoFrame64 / cuvidUnmapVideoFrame64.
#ifndef __CUVID_DEVPTR64
#define __CUVID_DEVPTR64
#endif
#include <ffnvcodec/dynlink_loader.h>

namespace conveyor::ops::video {

struct NvdecApi {
  CudaFunctions* cu = nullptr;
  CuvidFunctions* cuvid = nullptr;
};

// The process's NVDEC tables (cuInit(0) done), or null with the reason in `why` (may be null).
const NvdecApi* SharedNvdec(std::string* why = nullptr);

// Makes a context current for a scope (cuvid calls and their callbacks need it; the CUDA runtime's
// calls inside use it too).
class NvdecContextScope {
 public:
  NvdecContextScope(const NvdecApi* api, CUcontext ctx) : api_(api) { api_->cu->cuCtxPushCurrent(ctx); }
  ~NvdecContextScope() {
    CUcontext popped = nullptr;
    api_->cu->cuCtxPopCurrent(&popped);
  }
  NvdecContextScope(const NvdecContextScope&) = delete;
  NvdecContextScope& operator=(const NvdecContextScope&) = delete;

 private:
  const NvdecApi* api_;
};

// "cuCtxPushCurrent failed: CUDA_ERROR_INVALID_CONTEXT (201)": a driver result as text.
std::string CuResultText(const NvdecApi& api, CUresult result, const char* call);

}  // namespace conveyor::ops::video
