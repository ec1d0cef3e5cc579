#include "core/cuda/check.h"

#include <cstdio>

namespace conveyor::cuda {

void ThrowCudaError(cudaError_t status, const char* call, const char* file, int line) {
  // Clears the error for non-sticky failures so the next unrelated call does not report it again.
  cudaGetLastError();
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                      cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")",
                  static_cast<int>(status));
}

void ReportCudaErrorNoThrow(cudaError_t status, const char* call, const char* file, int line) noexcept {
  cudaGetLastError();
  // Process teardown: the runtime is unloading, or (a Python interpreter freeing outputs after
  // the driver's exit handlers ran) the context is already gone.
  if (status == cudaErrorCudartUnloading || status == cudaErrorDeviceUninitialized) return;
  std::fprintf(stderr, "conveyor: %s:%d: %s failed in a destructor: %s (%s)\n", file, line, call,
               cudaGetErrorName(status), cudaGetErrorString(status));
}

void CheckLastLaunch(const char* what, const char* file, int line) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) ThrowCudaError(status, what, file, line);
}

}  // namespace conveyor::cuda
