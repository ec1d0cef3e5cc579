// CONVEYOR_CUDA_CHECK: evaluate a CUDA runtime call once; on failure clear the sticky error and
// throw CudaError naming the call, the error and file:line.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "core/error.h"

namespace conveyor::cuda {

// Builds the message and throws; kept out of line so the macro stays small at every call site.
[[noreturn]] void ThrowCudaError(cudaError_t status, const char* call, const char* file, int line);

// Logs (does not throw) a failure from a destructor; cudaErrorCudartUnloading is expected at exit.
void ReportCudaErrorNoThrow(cudaError_t status, const char* call, const char* file, int line) noexcept;

// Throws CudaError for the last launch error (kernel launch configuration, invalid device function).
void CheckLastLaunch(const char* what, const char* file, int line);

}  // namespace conveyor::cuda

#define CONVEYOR_CUDA_CHECK(call)                                                   \
  do {                                                                              \
    const cudaError_t conveyor_status_ = (call);                                    \
    if (conveyor_status_ != cudaSuccess) {                                          \
      ::conveyor::cuda::ThrowCudaError(conveyor_status_, #call, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)

#define CONVEYOR_CUDA_CHECK_NOTHROW(call)                                                     \
  do {                                                                                        \
    const cudaError_t conveyor_status_ = (call);                                              \
    if (conveyor_status_ != cudaSuccess) {                                                    \
      ::conveyor::cuda::ReportCudaErrorNoThrow(conveyor_status_, #call, __FILE__, __LINE__);  \
    }                                                                                         \
  } while (0)

#define CONVEYOR_CHECK_LAUNCH(what) ::conveyor::cuda::CheckLastLaunch(what, __FILE__, __LINE__)
