// Driver API entry points fetched at run time through cudaGetDriverEntryPointByVersion, so nothing
// links libcuda.so at build time. Only the calls Conveyor needs (virtual memory management).
#pragma once

#include <cuda.h>

namespace conveyor::cuda {

struct DriverApi {
  decltype(&::cuMemGetAllocationGranularity) cuMemGetAllocationGranularity = nullptr;
  decltype(&::cuMemAddressReserve) cuMemAddressReserve = nullptr;
  decltype(&::cuMemAddressFree) cuMemAddressFree = nullptr;
  decltype(&::cuMemCreate) cuMemCreate = nullptr;
  decltype(&::cuMemRelease) cuMemRelease = nullptr;
  decltype(&::cuMemMap) cuMemMap = nullptr;
  decltype(&::cuMemUnmap) cuMemUnmap = nullptr;
  decltype(&::cuMemSetAccess) cuMemSetAccess = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
};

// Resolved once; throws CudaError naming the symbol when the driver lacks one.
const DriverApi& Driver();

// Throws CudaError with the call text and the driver's error name when `result` is not success.
void CheckDriver(CUresult result, const char* call, const char* file, int line);

}  // namespace conveyor::cuda

#define CONVEYOR_CU_CHECK(call)                                                          \
  do {                                                                                   \
    const CUresult conveyor_result_ = (call);                                            \
    if (conveyor_result_ != CUDA_SUCCESS) {                                              \
      ::conveyor::cuda::CheckDriver(conveyor_result_, #call, __FILE__, __LINE__);         \
    }                                                                                    \
  } while (0)
