#include "core/cuda/driver_api.h"

#include <cuda_runtime_api.h>

#include <string>

#include "core/cuda/check.h"
#include "core/error.h"

namespace conveyor::cuda {
namespace {

template <typename Fn>
void Resolve(Fn& fn, const char* symbol) {
  void* ptr = nullptr;
  cudaDriverEntryPointQueryResult found{};
  // 12000: the ABI of these entry points as of CUDA 12.0; newer drivers keep serving it.
  CONVEYOR_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &ptr, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || ptr == nullptr) {
    throw CudaError(std::string("driver entry point ") + symbol + " not found (driver too old?)",
                    static_cast<int>(cudaErrorSymbolNotFound));
  }
  fn = reinterpret_cast<Fn>(ptr);
}

}  // namespace

const DriverApi& Driver() {
  static const DriverApi api = [] {
    DriverApi a;
    Resolve(a.cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
    Resolve(a.cuMemAddressReserve, "cuMemAddressReserve");
    Resolve(a.cuMemAddressFree, "cuMemAddressFree");
    Resolve(a.cuMemCreate, "cuMemCreate");
    Resolve(a.cuMemRelease, "cuMemRelease");
    Resolve(a.cuMemMap, "cuMemMap");
    Resolve(a.cuMemUnmap, "cuMemUnmap");
    Resolve(a.cuMemSetAccess, "cuMemSetAccess");
    Resolve(a.cuGetErrorName, "cuGetErrorName");
    return a;
  }();
  return api;
}

void CheckDriver(CUresult result, const char* call, const char* file, int line) {
  const char* name = "unknown CUresult";
  if (Driver().cuGetErrorName) Driver().cuGetErrorName(result, &name);
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + name,
                  static_cast<int>(result));
}

}  // namespace conveyor::cuda
